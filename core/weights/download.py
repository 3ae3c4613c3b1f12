"""Downloading ChatTTS's official weights from the Hugging Face hub into the data folder.

Only the listed safetensors and JSON files are fetched, over the Hub's HTTP file API, into a
staging folder that a later call resumes by Range; the models folder is replaced only when every
file matches its sha256 hash. huggingface_hub is imported only when a download starts."""

import contextlib
import os
import shutil
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TypeVar

from chattts_studio.core import paths
from chattts_studio.core.atomic import os_error_reason
from chattts_studio.core.errors import Cancelled, DownloadError
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

OFFICIAL_REVISION = "main"
STAGING = ".official.partial"  # in models_dir(): finished files and `.part` files being fetched


class _Transient(Exception):
    """A network failure worth another try from where the part file ends."""


@dataclass
class _Remote:
    relative: str
    url: str  # where to GET it (after the Hub's redirect)
    size: int | None
    etag: str
    same_host: bool  # send the Hub's headers (token) only to the Hub itself


def _network_sentence(exc: BaseException, timeout: float) -> str:
    """One sentence for a failure of huggingface_hub's HTTP client (httpx2) or of a socket."""
    name = type(exc).__name__
    if "Offline" in name:
        return Sentence(
            QT_TRANSLATE_NOOP(
                "core", "downloads are switched off (the {variable} environment variable is set)"
            ),
            variable="HF_HUB_OFFLINE",
        )
    if "Timeout" in name or isinstance(exc, TimeoutError):
        return Sentence(
            QT_TRANSLATE_NOOP("core", "the server did not answer within {seconds} seconds"),
            seconds=f"{timeout:g}",
        )
    response = getattr(exc, "response", None)
    code = getattr(response, "status_code", None)
    if isinstance(code, int):
        return Sentence(
            QT_TRANSLATE_NOOP("core", "the server answered {status}"), status=f"HTTP {code}"
        )
    if "Connect" in name or isinstance(exc, ConnectionRefusedError):
        return Sentence(
            QT_TRANSLATE_NOOP("core", "cannot connect to the server (check the network)")
        )
    if "Protocol" in name or "Read" in name or isinstance(exc, ConnectionError):
        return Sentence(QT_TRANSLATE_NOOP("core", "the connection broke off"))
    return f"{name}: {str(exc).splitlines()[0][:120]}" if str(exc) else name


def _content_range_start(value: str | None) -> int | None:
    """'bytes 100-199/200' -> 100."""
    if not value or not value.startswith("bytes "):
        return None
    try:
        return int(value[6:].split("-", 1)[0])
    except ValueError:
        return None


class _Progress:
    """Byte progress that never goes backwards (a restarted file holds it until it catches up)."""

    def __init__(self, callback: ByteProgress | None, cancelled: CancelCheck | None) -> None:
        self.callback, self.cancelled = callback, cancelled
        self.done = self.shown = self.total = 0

    def add(self, n: int) -> None:
        self.done += n
        if self.callback and self.done > self.shown:
            self.shown = self.done
            self.callback(self.shown, self.total)
        if self.cancelled and self.cancelled():
            raise Cancelled()


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
    """Fetch 2Noise/ChatTTS into the data folder, verify every file, then move it in place.

    Each file is fetched over the Hub's HTTP file API into `<file>.part` in a staging folder;
    an interrupted or cancelled download keeps its part and the next call resumes it with a
    Range request (files already finished are not fetched again). A file is kept only when its
    sha256 matches `hashes` (ChatTTS's own map by default); the models folder is replaced only
    when every file matches. Only the listed safetensors and JSON files are fetched: nothing
    downloaded is executed or unpickled. `timeout` bounds every wait for the server; `retries`
    is how many times a broken transfer is resumed within this call.
    """
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
    root = paths.models_dir()
    staging = root / STAGING
    with _download_lock(root):
        staging.mkdir(parents=True, exist_ok=True)
        shutil.rmtree(staging / ".cache", ignore_errors=True)  # left by hf_hub_download
        bar = _Progress(progress, cancelled)
        try:
            _download_into(staging, hashes, endpoint, revision, timeout, retries, bar)
        except (Cancelled, DownloadError):
            raise
        except _Transient as exc:
            raise DownloadError(_not_downloaded(said(exc))) from None
        except OSError as exc:
            if getattr(exc, "response", None) is None and exc.errno is not None:
                raise DownloadError(
                    Sentence(
                        QT_TRANSLATE_NOOP(
                            "core",
                            "Could not download the official weights into {folder}: {reason}. "
                            "Partial files are kept and the next try resumes.",
                        ),
                        folder=str(staging),
                        reason=os_error_reason(exc),
                    )
                ) from None
            raise DownloadError(_not_downloaded(_network_sentence(exc, timeout))) from None
        except Exception as exc:  # httpx2 and huggingface_hub errors, whatever their class
            raise DownloadError(_not_downloaded(_network_sentence(exc, timeout))) from None
        _install(staging, info.folder)
    return info


def _not_downloaded(reason: str) -> Sentence:
    return Sentence(
        QT_TRANSLATE_NOOP(
            "core",
            "Could not download the official weights: {reason}. Partial files are kept and the "
            "next try resumes.",
        ),
        reason=reason,
    )


@contextlib.contextmanager
def _download_lock(root: Path) -> Iterator[None]:
    """One download at a time (the window and the command line share the staging folder);
    filelock, so Windows is locked too."""
    lock = try_hold(root / ".official.lock")
    if lock is None:
        raise DownloadError(
            QT_TRANSLATE_NOOP(
                "core",
                "Another download of the official weights is running; wait for it to finish.",
            )
        )
    try:
        yield
    finally:
        lock.release()


def _download_into(
    staging: Path,
    hashes: dict[str, str],
    endpoint: str | None,
    revision: str,
    timeout: float,
    retries: int,
    bar: _Progress,
) -> None:
    from huggingface_hub import get_hf_file_metadata, hf_hub_url
    from huggingface_hub.utils import build_hf_headers

    headers = build_hf_headers()
    todo: list[_Remote] = []
    total: int | None = 0
    for relative in ASSET_FILES:
        target = staging / relative
        if target.is_file():
            if sha256_file(target, cancelled=bar.cancelled) == hashes[hash_key(relative)]:
                bar.done += target.stat().st_size
                total = None if total is None else total + target.stat().st_size
                continue
            target.unlink()  # stale or damaged: fetch it again
        url = hf_hub_url(OFFICIAL_REPO, relative, revision=revision, endpoint=endpoint)
        meta = _attempts(
            retries, bar, partial(get_hf_file_metadata, url, timeout=timeout, headers=dict(headers))
        )
        if not meta.etag:
            raise DownloadError(
                Sentence(
                    QT_TRANSLATE_NOOP(
                        "core",
                        "Could not download the official weights: the server gave no {header} "
                        "for {file}, so it does not look like a {hub}.",
                    ),
                    header="ETag",
                    file=relative,
                    hub="Hugging Face hub",
                )
            )
        location = meta.location or url
        todo.append(
            _Remote(relative, location, meta.size, meta.etag, _host(location) == _host(url))
        )
        total = None if total is None or meta.size is None else total + meta.size
    bar.total = total or 0
    needed = sum((r.size or 0) - _part_size(staging, r) for r in todo)
    free = shutil.disk_usage(staging).free
    if needed > free:
        raise DownloadError(
            Sentence(
                QT_TRANSLATE_NOOP(
                    "core",
                    "The official weights need {needed} MiB more disk space in {folder}; "
                    "only {free} MiB are free.",
                ),
                needed=f"{needed / 2**20:.0f}",
                folder=str(staging),
                free=f"{free / 2**20:.0f}",
            )
        )
    bar.add(0)
    for remote in todo:
        _fetch(staging, remote, headers, timeout, retries, bar)
        target = staging / remote.relative
        if sha256_file(target, cancelled=bar.cancelled) != hashes[hash_key(remote.relative)]:
            target.unlink(missing_ok=True)
            raise DownloadError(
                Sentence(
                    QT_TRANSLATE_NOOP(
                        "core",
                        "The downloaded {file} does not match ChatTTS's sha256 hash; it was "
                        "discarded and nothing was replaced.",
                    ),
                    file=remote.relative,
                )
            )


def _host(url: str) -> str:
    from urllib.parse import urlsplit

    return urlsplit(url).netloc.lower()


def _part_paths(staging: Path, relative: str) -> tuple[Path, Path]:
    part = staging / f"{relative}.part"
    return part, part.with_name(part.name + ".etag")


def _part_size(staging: Path, remote: _Remote) -> int:
    part, tag = _part_paths(staging, remote.relative)
    try:
        if tag.read_text(encoding="utf-8") == remote.etag:
            return part.stat().st_size
    except (OSError, UnicodeDecodeError):
        pass
    return 0


T = TypeVar("T")


def _attempts(retries: int, bar: _Progress, call: Callable[[], T]) -> T:
    """Run `call`, again up to `retries` times after a network failure (not after an HTTP error
    such as 404, which another try does not fix)."""
    for attempt in range(retries + 1):
        try:
            return call()
        except (Cancelled, DownloadError):
            raise
        except Exception as exc:
            code = getattr(getattr(exc, "response", None), "status_code", 0) or 0
            final = (isinstance(code, int) and 0 < code < 500) or "Offline" in type(exc).__name__
            if attempt >= retries or final:
                raise
            for _ in range(int(5 * (attempt + 1))):  # back off up to a second per try
                time.sleep(0.1)
                bar.add(0)
    raise AssertionError("unreachable")


def _fetch(
    staging: Path,
    remote: _Remote,
    headers: dict[str, str],
    timeout: float,
    retries: int,
    bar: _Progress,
) -> None:
    """Fetch one file into `<file>.part` (resuming what is there), then rename it into place."""
    part, tag = _part_paths(staging, remote.relative)
    part.parent.mkdir(parents=True, exist_ok=True)
    have = _part_size(staging, remote)
    if have == 0:
        part.unlink(missing_ok=True)
        tag.write_text(remote.etag, encoding="utf-8")
    bar.add(have)

    def once() -> None:
        nonlocal have
        _get_range(part, remote, headers if remote.same_host else {}, timeout, have, bar)
        have = part.stat().st_size
        if remote.size is not None and have < remote.size:
            raise _Transient(
                Sentence(QT_TRANSLATE_NOOP("core", "the server sent less than the whole file"))
            )

    def tracked() -> None:
        nonlocal have
        try:
            once()
        except BaseException:
            have = part.stat().st_size if part.exists() else 0
            raise

    if remote.size is None or have < remote.size:
        _attempts(retries, bar, tracked)
    os.replace(part, staging / remote.relative)
    tag.unlink(missing_ok=True)


def _get_range(
    part: Path,
    remote: _Remote,
    headers: dict[str, str],
    timeout: float,
    have: int,
    bar: _Progress,
) -> None:
    from huggingface_hub.utils import get_session, hf_raise_for_status

    request_headers = {**headers, "Accept-Encoding": "identity"}
    if have:
        request_headers["Range"] = f"bytes={have}-"
    try:
        with get_session().stream(
            "GET", remote.url, headers=request_headers, timeout=timeout, follow_redirects=True
        ) as response:
            if response.status_code == 416:  # our part is longer than the file: start again
                part.unlink(missing_ok=True)
                raise _Transient(
                    Sentence(
                        QT_TRANSLATE_NOOP("core", "the server refused to resume a partial file")
                    )
                )
            hf_raise_for_status(response)
            start = 0
            if have and response.status_code == 206:
                start = _content_range_start(response.headers.get("Content-Range")) or 0
            if start != have:  # the server ignored the Range: take the file from the start
                bar.done -= have
                have = 0
            with open(part, "r+b" if have else "wb") as fh:
                fh.seek(have)
                fh.truncate()
                for chunk in response.iter_bytes():  # as it arrives: nothing held back
                    fh.write(chunk)
                    have += len(chunk)
                    if remote.size is not None and have > remote.size:
                        break
                    bar.add(len(chunk))
    except (Cancelled, DownloadError, _Transient, OSError):
        raise  # OSError: the disk, or an HTTP error status from huggingface_hub
    except Exception as exc:
        name = type(exc).__name__
        if any(k in name for k in ("Timeout", "Protocol", "Network", "Read", "Connect")):
            raise _Transient(_network_sentence(exc, timeout)) from None
        raise
    if remote.size is not None and have > remote.size:
        part.unlink(missing_ok=True)
        raise DownloadError(
            Sentence(
                QT_TRANSLATE_NOOP(
                    "core",
                    "The server sent more than the {size} bytes of {file}; it was discarded and "
                    "nothing was replaced.",
                ),
                size=remote.size,
                file=remote.relative,
            )
        )


def _install(staging: Path, folder: Path) -> None:
    """Swap the verified staging folder in for the models folder in two renames."""
    extra = [p for p in staging.rglob("*") if p.is_file()]
    allowed = {staging / f for f in ASSET_FILES}
    for path in extra:
        if path not in allowed:
            path.unlink()
    old = folder.with_name(".official.old")
    shutil.rmtree(old, ignore_errors=True)
    if folder.exists():
        os.replace(folder, old)
    try:
        os.replace(staging, folder)
    except OSError:
        if old.exists():
            os.replace(old, folder)
        raise
    shutil.rmtree(old, ignore_errors=True)
