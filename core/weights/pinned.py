"""A helper model fetched from the Hub at one pinned revision and trusted on first use: the
recogniser of the speech check, the speaker encoder of the voice check.

The first verified download records its commit and each file's sha256 in the data folder; every
later download and verify must match that record. A mismatch is one sentence and nothing is
replaced; a record that cannot be read is one sentence too, never a reason to trust the Hub
afresh unasked. Where each pin comes from: docs/projects.md and docs/voice-check.md."""

import json
from dataclasses import dataclass
from pathlib import Path

from chattts_studio.core import paths
from chattts_studio.core.errors import DownloadError, ModelError
from chattts_studio.core.messages import QT_TRANSLATE_NOOP, Sentence
from chattts_studio.core.weights.models import DEFAULT_TRANSFER, ByteProgress, CancelCheck, Transfer

TRUSTED_FORMAT = 1


@dataclass(frozen=True)
class Pinned:
    """One helper model: `files` of `repo` at `revision` (None: the branch "main"), each with
    the published `sha256` (None: the Hub's own hashes), kept in models_dir()/`key`; `what`
    names it in a sentence and `trusted_name` is its record in the data folder."""

    repo: str
    files: tuple[str, ...]
    revision: str | None
    sha256: dict[str, str] | None
    key: str
    what: str  # a QT_TRANSLATE_NOOP text
    trusted_name: str

    def folder(self) -> Path:
        return paths.models_dir() / self.key

    def present(self) -> bool:
        return all((self.folder() / name).is_file() for name in self.files)

    def trusted_file(self) -> Path:
        return paths.data_dir() / self.trusted_name


class HashMismatch(DownloadError):
    """The server sent a file whose hash is not the pinned (or recorded) one: not a network
    fault, so no fallback that waits for an unreachable server applies; its own sentence."""


@dataclass(frozen=True)
class Trusted:
    """What the first verified download recorded: the commit and each file's sha256."""

    revision: str
    sha256: dict[str, str]


def trusted(model: Pinned) -> Trusted | None:
    """The record of `model`'s first verified download; None before one."""
    path = model.trusted_file()
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    try:
        record = json.loads(text)
        revision = record["revision"]
        sha256 = {name: str(record["files"][name]) for name in model.files}
        if record.get("format") != TRUSTED_FORMAT or record.get("repo") != model.repo:
            raise ValueError("another record")
        if not isinstance(revision, str) or not revision:
            raise ValueError("no revision")
    except (ValueError, KeyError, TypeError, AttributeError):
        raise ModelError(
            Sentence(
                QT_TRANSLATE_NOOP(
                    "core",
                    "{path}, the record of the first download of {model}, is damaged; "
                    "delete it to trust the files the Hub serves now.",
                ),
                path=str(path),
                model=Sentence(model.what),
            )
        ) from None
    return Trusted(revision, sha256)


def download(
    model: Pinned,
    progress: ByteProgress | None = None,
    cancelled: CancelCheck | None = None,
    transfer: Transfer = DEFAULT_TRANSFER,
) -> Path:
    """Fetch `model` into its folder, resumable and cancellable as the ChatTTS weights are:
    the first time the pinned revision, checked against the pinned sha256 (or the Hub's
    hashes) and then recorded; later, the recorded commit, checked against the record."""
    from chattts_studio.core.weights.download import HubModel, download_model

    record = trusted(model)
    if record is None:
        revision = model.revision or "main"
        hashes = dict(model.sha256) if model.sha256 is not None else None
        expected = Sentence(QT_TRANSLATE_NOOP("core", "its published hash"))
    else:
        revision, hashes = record.revision, dict(record.sha256)
        expected = Sentence(
            QT_TRANSLATE_NOOP("core", "the sha256 recorded at the model's first download")
        )
    hub = HubModel(
        model.repo,
        model.files,
        model.folder(),
        model.key,
        Sentence(model.what),
        hashes,
        expected,
        resolve=True,
    )
    try:
        download_model(
            hub,
            progress,
            cancelled,
            transfer.endpoint,
            transfer.timeout,
            transfer.retries,
            revision,
            verified=lambda staging, commit: _record(model, staging, commit, record),
        )
    except DownloadError as exc:
        # Only the refusal of a file for its hash names the hash it was held to.
        if exc.params.get("expected") is not expected:
            raise
        _drop_empty_staging(model)
        raise HashMismatch(exc.args[0]) from None
    return model.folder()


def _drop_empty_staging(model: Pinned) -> None:
    """The staging folder a refused file leaves empty (the file was discarded: nothing to
    resume), so the models folder holds nothing of the refused download."""
    try:
        (paths.models_dir() / f".{model.key}.partial").rmdir()
    except OSError:
        pass  # absent, or holding a part another file's next try resumes


def _record(model: Pinned, staging: Path, commit: str | None, record: Trusted | None) -> None:
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
                revision=record.revision if record is not None else model.revision or "main",
                model=Sentence(model.what),
            )
        )
    if record is not None:
        return
    files = {name: sha256_file(staging / name) for name in model.files}
    body = {"format": TRUSTED_FORMAT, "repo": model.repo, "revision": commit, "files": files}
    target = model.trusted_file()
    try:
        write_text_atomic(target, json.dumps(body, indent=1))
    except OSError as exc:
        raise DownloadError(os_error_sentence("save", target, exc)) from None


def verify(
    model: Pinned,
    progress: ByteProgress | None = None,
    cancelled: CancelCheck | None = None,
    quick: bool = False,
) -> None:
    """Check `model`'s files against the sha256 recorded at their first download (or, for
    files downloaded before that record existed, against those kept beside them). The caller
    says first, in its own words, when the model is not downloaded."""
    from chattts_studio.core.weights.download import HUB_HASHES
    from chattts_studio.core.weights.models import hash_key
    from chattts_studio.core.weights.models import verify as verify_files

    folder = model.folder()
    record = trusted(model)
    if record is not None:
        hashes = {hash_key(name): record.sha256[name] for name in model.files}
    else:
        try:
            recorded = json.loads((folder / HUB_HASHES).read_text(encoding="utf-8"))
            hashes = {hash_key(name): str(recorded[name]) for name in model.files}
        except (OSError, ValueError, KeyError, TypeError):
            raise ModelError(
                Sentence(
                    QT_TRANSLATE_NOOP(
                        "core",
                        "{path} is missing or damaged, so {model} cannot be verified: "
                        "download it again.",
                    ),
                    path=str(folder / HUB_HASHES),
                    model=Sentence(model.what),
                )
            ) from None
    verify_files(folder, hashes, Sentence(model.what), progress, cancelled, quick, model.files)
