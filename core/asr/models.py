"""Which recogniser model the check uses: the official one (downloaded, pinned, trusted on first use
by core/weights/pinned.py), the demo one (random weights) or a user's folder. Where the pins come
from: docs/projects.md.
"""

from pathlib import Path

from chattts_studio.core import paths
from chattts_studio.core.asr import DEMO_MARKER
from chattts_studio.core.errors import ModelError
from chattts_studio.core.messages import QT_TRANSLATE_NOOP
from chattts_studio.core.weights import pinned
from chattts_studio.core.weights.models import DEFAULT_TRANSFER, ByteProgress, CancelCheck, Transfer
from chattts_studio.core.weights.pinned import Pinned

OFFICIAL = "official"
DEMO = "demo"  # the random-weight model of demo_model.py
SENSEVOICE_REPO = "csukuangfj/sherpa-onnx-sense-voice-zh-en-ja-ko-yue-2024-07-17"
SENSEVOICE_FILES = ("model.int8.onnx", "tokens.txt")
SENSEVOICE_WHAT = QT_TRANSLATE_NOOP("core", "the speech recognition model")
# The first download's revision and the sha256 its files must have, as public sources state
# them (docs/projects.md); None: the Hub's branch "main" and its own hashes.
SENSEVOICE_REVISION: str | None = "2365baeacb507f821a0c8120fcee3d484dba7a07"
SENSEVOICE_SHA256: dict[str, str] | None = {  # 239,233,841 and 315,894 bytes
    "model.int8.onnx": "c71f0ce00bec95b07744e116345e33d8cbbe08cef896382cf907bf4b51a2cd51",
    "tokens.txt": "f449eb28dc567533d7fa59be34e2abca8784f771850c78a47fb731a31429a1dc",
}
# In the data folder: the first verified download's commit and each file's sha256.
TRUSTED = "asr-sensevoice-trusted.json"


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
    return _pinned().folder()


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


def _pinned() -> Pinned:
    """SenseVoice as a pinned model, read at call time (the pins may be replaced)."""
    return Pinned(
        SENSEVOICE_REPO,
        SENSEVOICE_FILES,
        SENSEVOICE_REVISION,
        SENSEVOICE_SHA256,
        "asr-sensevoice",
        SENSEVOICE_WHAT,
        TRUSTED,
    )


def trusted_file() -> Path:
    return _pinned().trusted_file()


def download(
    progress: ByteProgress | None = None,
    cancelled: CancelCheck | None = None,
    transfer: Transfer = DEFAULT_TRANSFER,
) -> Path:
    """Fetch SenseVoice-Small (int8) into official_folder(), resumable and cancellable as the
    ChatTTS weights are (core/weights/pinned.py)."""
    return pinned.download(_pinned(), progress, cancelled, transfer)


def verify(
    progress: ByteProgress | None = None, cancelled: CancelCheck | None = None, quick: bool = False
) -> None:
    """Check the official files against the sha256 recorded at their first download."""
    if not official_present():
        recognizer_folder(OFFICIAL)  # says it is not downloaded
    pinned.verify(_pinned(), progress, cancelled, quick)
