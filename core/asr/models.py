"""Which recogniser model the check uses: the official one (SenseVoice-Small as sherpa-onnx
packs it, int8: 239 MB instead of the fp32's 894 MB, downloaded from the Hugging Face hub into
the data folder), the demo one (random weights, made once in the cache: noise, not speech), or a
folder the user has (model.onnx or model.int8.onnx, and tokens.txt).

The official files have no sha256 map of ChatTTS's kind: the download checks each file against
the hash the Hub publishes for it and records their sha256 beside them (download.HUB_HASHES),
so `model verify-asr` and the Models dialog find a file damaged on disk later. The hashes are
not pinned in this source: the machine it is built on cannot reach the Hub (see
docs/projects.md)."""

import json
from pathlib import Path

from chattts_studio.core import paths
from chattts_studio.core.asr import DEMO_MARKER
from chattts_studio.core.errors import ModelError
from chattts_studio.core.messages import QT_TRANSLATE_NOOP, Sentence
from chattts_studio.core.weights.models import ByteProgress, CancelCheck

OFFICIAL = "official"
DEMO = "demo"  # the random-weight model of demo_model.py
SENSEVOICE_REPO = "csukuangfj/sherpa-onnx-sense-voice-zh-en-ja-ko-yue-2024-07-17"
SENSEVOICE_FILES = ("model.int8.onnx", "tokens.txt")
SENSEVOICE_WHAT = QT_TRANSLATE_NOOP("core", "the speech recognition model")


def is_demo(folder: Path) -> bool:
    """Whether `folder` holds the demo recogniser (random weights): its marker, or the cache
    folder demo_model.demo_folder() makes (made before the marker was written)."""
    if (folder / DEMO_MARKER).is_file():
        return True
    cached = paths.cache_dir() / "asr" / "sensevoice-demo"
    try:
        return folder.resolve() == cached.resolve()
    except OSError:
        return False


def official_folder() -> Path:
    return paths.models_dir() / "asr-sensevoice"


def official_present() -> bool:
    folder = official_folder()
    return all((folder / name).is_file() for name in SENSEVOICE_FILES)


def recognizer_folder(name: str) -> Path:
    """The folder of the recogniser `name` names ("official", "demo" or a folder); one sentence
    when the official one is not downloaded."""
    if name == DEMO:
        from chattts_studio.core.asr import demo_model

        return demo_model.demo_folder()
    if name == OFFICIAL:
        if not official_present():
            raise ModelError(
                QT_TRANSLATE_NOOP(
                    "core",
                    "The speech recognition model is not downloaded yet: run "
                    "'chattts-studio-cli model download-asr' or use the Models dialog.",
                )
            )
        return official_folder()
    return Path(name).expanduser()


def download(
    progress: ByteProgress | None = None,
    cancelled: CancelCheck | None = None,
    endpoint: str | None = None,
    timeout: float = 30.0,
    retries: int = 2,
) -> Path:
    """Fetch SenseVoice-Small (int8) into official_folder(), every file checked against the
    Hub's hash for it, resumable and cancellable as the ChatTTS weights are."""
    from chattts_studio.core.weights.download import HubModel, download_model

    model = HubModel(
        SENSEVOICE_REPO,
        SENSEVOICE_FILES,
        official_folder(),
        "asr-sensevoice",
        Sentence(SENSEVOICE_WHAT),
        None,
    )
    download_model(model, progress, cancelled, endpoint, timeout, retries)
    return official_folder()


def verify(
    progress: ByteProgress | None = None, cancelled: CancelCheck | None = None, quick: bool = False
) -> None:
    """Check the official files against the sha256 recorded when they were downloaded."""
    from chattts_studio.core.weights.download import HUB_HASHES
    from chattts_studio.core.weights.models import hash_key
    from chattts_studio.core.weights.models import verify as verify_files

    folder = official_folder()
    if not official_present():
        recognizer_folder(OFFICIAL)  # says it is not downloaded
    try:
        recorded = json.loads((folder / HUB_HASHES).read_text(encoding="utf-8"))
        hashes = {hash_key(name): str(recorded[name]) for name in SENSEVOICE_FILES}
    except (OSError, ValueError, KeyError, TypeError):
        raise ModelError(
            Sentence(
                QT_TRANSLATE_NOOP(
                    "core",
                    "{path} is missing or damaged, so the speech recognition model cannot be "
                    "verified: download it again.",
                ),
                path=str(folder / HUB_HASHES),
            )
        ) from None
    name = Sentence(SENSEVOICE_WHAT)
    verify_files(folder, hashes, name, progress, cancelled, quick, SENSEVOICE_FILES)
