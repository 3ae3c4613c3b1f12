"""Which recogniser model the check uses: the official one (sherpa-onnx's int8 SenseVoice-Small,
downloaded into the data folder), the demo one (random weights, made once in the cache) or a folder
the user has (model.onnx or model.int8.onnx, and tokens.txt).

The official files are one pinned revision, trusted on first use: the first verified download
records its commit and each file's sha256 (TRUSTED), and every later download and `model
verify-asr` must match that record; a mismatch is one sentence and nothing is replaced. Where the
pins come from: docs/projects.md."""

import json
from dataclasses import dataclass
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
# The first download's revision and the sha256 its files must have, as public sources state
# them (docs/projects.md); None: the Hub's branch "main" and its own hashes.
SENSEVOICE_REVISION: str | None = "2365baeacb507f821a0c8120fcee3d484dba7a07"
SENSEVOICE_SHA256: dict[str, str] | None = {  # 239,233,841 and 315,894 bytes
    "model.int8.onnx": "c71f0ce00bec95b07744e116345e33d8cbbe08cef896382cf907bf4b51a2cd51",
    "tokens.txt": "f449eb28dc567533d7fa59be34e2abca8784f771850c78a47fb731a31429a1dc",
}
# In the data folder: the first verified download's commit and each file's sha256.
TRUSTED = "asr-sensevoice-trusted.json"
TRUSTED_FORMAT = 1


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


def trusted_file() -> Path:
    return paths.data_dir() / TRUSTED


@dataclass(frozen=True)
class Trusted:
    """What the first verified download recorded: the commit and each file's sha256."""

    revision: str
    sha256: dict[str, str]


def trusted() -> Trusted | None:
    """The record of the first verified download; None before one. A record that cannot be
    read is one sentence (ModelError): never a reason to trust the Hub afresh unasked."""
    path = trusted_file()
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    try:
        record = json.loads(text)
        revision = record["revision"]
        sha256 = {name: str(record["files"][name]) for name in SENSEVOICE_FILES}
        if record.get("format") != TRUSTED_FORMAT or record.get("repo") != SENSEVOICE_REPO:
            raise ValueError("another record")
        if not isinstance(revision, str) or not revision:
            raise ValueError("no revision")
    except (ValueError, KeyError, TypeError, AttributeError):
        raise ModelError(_damaged_record(path)) from None
    return Trusted(revision, sha256)


def _damaged_record(path: Path) -> Sentence:
    return Sentence(
        QT_TRANSLATE_NOOP(
            "core",
            "{path}, the record of the speech recognition model's first download, is damaged; "
            "delete it to trust the files the Hub serves now.",
        ),
        path=str(path),
    )


def download(
    progress: ByteProgress | None = None,
    cancelled: CancelCheck | None = None,
    endpoint: str | None = None,
    timeout: float = 30.0,
    retries: int = 2,
) -> Path:
    """Fetch SenseVoice-Small (int8) into official_folder(), resumable and cancellable as the
    ChatTTS weights are: the first time the pinned revision, checked against the pinned
    sha256 (or the Hub's hashes) and then recorded; later, the recorded commit, checked
    against the record (see the module's note)."""
    from chattts_studio.core.weights.download import HubModel, download_model

    record = trusted()
    if record is None:
        revision = SENSEVOICE_REVISION or "main"
        hashes = dict(SENSEVOICE_SHA256) if SENSEVOICE_SHA256 is not None else None
        expected = Sentence(QT_TRANSLATE_NOOP("core", "its published hash"))
    else:
        revision, hashes = record.revision, dict(record.sha256)
        expected = Sentence(
            QT_TRANSLATE_NOOP("core", "the sha256 recorded at the model's first download")
        )
    model = HubModel(
        SENSEVOICE_REPO,
        SENSEVOICE_FILES,
        official_folder(),
        "asr-sensevoice",
        Sentence(SENSEVOICE_WHAT),
        hashes,
        expected,
        resolve=True,
    )
    download_model(
        model,
        progress,
        cancelled,
        endpoint,
        timeout,
        retries,
        revision,
        verified=lambda staging, commit: _record(staging, commit, record),
    )
    return official_folder()


def _record(staging: Path, commit: str | None, record: Trusted | None) -> None:
    """Every file matches: the commit must be the recorded one (a later download), or is
    recorded with the files' sha256 (the first), before anything is installed."""
    from chattts_studio.core.atomic import os_error_sentence, write_text_atomic
    from chattts_studio.core.errors import DownloadError
    from chattts_studio.core.weights.models import sha256_file

    if commit is None or (record is not None and commit != record.revision):
        raise DownloadError(
            Sentence(
                QT_TRANSLATE_NOOP(
                    "core",
                    "The server did not send revision {revision} of {model}; nothing was replaced.",
                ),
                revision=record.revision if record is not None else SENSEVOICE_REVISION or "main",
                model=Sentence(SENSEVOICE_WHAT),
            )
        )
    if record is not None:
        return
    files = {name: sha256_file(staging / name) for name in SENSEVOICE_FILES}
    body = {"format": TRUSTED_FORMAT, "repo": SENSEVOICE_REPO, "revision": commit, "files": files}
    target = trusted_file()
    try:
        write_text_atomic(target, json.dumps(body, indent=1))
    except OSError as exc:
        raise DownloadError(os_error_sentence("save", target, exc)) from None


def verify(
    progress: ByteProgress | None = None, cancelled: CancelCheck | None = None, quick: bool = False
) -> None:
    """Check the official files against the sha256 recorded at their first download (or, for
    files downloaded before that record existed, against those kept beside them)."""
    from chattts_studio.core.weights.download import HUB_HASHES
    from chattts_studio.core.weights.models import hash_key
    from chattts_studio.core.weights.models import verify as verify_files

    folder = official_folder()
    if not official_present():
        recognizer_folder(OFFICIAL)  # says it is not downloaded
    record = trusted()
    if record is not None:
        hashes = {hash_key(name): record.sha256[name] for name in SENSEVOICE_FILES}
    else:
        try:
            recorded = json.loads((folder / HUB_HASHES).read_text(encoding="utf-8"))
            hashes = {hash_key(name): str(recorded[name]) for name in SENSEVOICE_FILES}
        except (OSError, ValueError, KeyError, TypeError):
            raise ModelError(
                Sentence(
                    QT_TRANSLATE_NOOP(
                        "core",
                        "{path} is missing or damaged, so the speech recognition model cannot "
                        "be verified: download it again.",
                    ),
                    path=str(folder / HUB_HASHES),
                )
            ) from None
    name = Sentence(SENSEVOICE_WHAT)
    verify_files(folder, hashes, name, progress, cancelled, quick, SENSEVOICE_FILES)
