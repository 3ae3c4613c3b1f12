"""The HTTP side of a model download (core/weights/download.py): one file fetched into
`<file>.part`, resumed by Range, retried with a back-off, counted for the progress bar.
"""

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from chattts_studio.core.atomic import replace_file
from chattts_studio.core.errors import Cancelled, DownloadError
from chattts_studio.core.messages import QT_TRANSLATE_NOOP, Sentence
from chattts_studio.core.weights.models import ByteProgress, CancelCheck


class Transient(Exception):
    """A network failure worth another try from where the part file ends."""


@dataclass
class Remote:
    relative: str
    url: str  # where to GET it (after the Hub's redirect)
    size: int | None
    etag: str
    same_host: bool  # send the Hub's headers (token) only to the Hub itself


def network_sentence(exc: BaseException, timeout: float) -> str:
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


def content_range_start(value: str | None) -> int | None:
    """'bytes 100-199/200' -> 100."""
    if not value or not value.startswith("bytes "):
        return None
    try:
        return int(value[6:].split("-", 1)[0])
    except ValueError:
        return None


class Progress:
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


def host(url: str) -> str:
    from urllib.parse import urlsplit

    return urlsplit(url).netloc.lower()


def part_paths(staging: Path, relative: str) -> tuple[Path, Path]:
    part = staging / f"{relative}.part"
    return part, part.with_name(part.name + ".etag")


def part_size(staging: Path, remote: Remote) -> int:
    part, tag = part_paths(staging, remote.relative)
    try:
        if tag.read_text(encoding="utf-8") == remote.etag:
            return part.stat().st_size
    except (OSError, UnicodeDecodeError):
        pass
    return 0


T = TypeVar("T")


def attempts(retries: int, bar: Progress, call: Callable[[], T]) -> T:
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


def fetch(
    staging: Path,
    remote: Remote,
    headers: dict[str, str],
    timeout: float,
    retries: int,
    bar: Progress,
) -> None:
    """Fetch one file into `<file>.part` (resuming what is there), then rename it into place."""
    part, tag = part_paths(staging, remote.relative)
    part.parent.mkdir(parents=True, exist_ok=True)
    have = part_size(staging, remote)
    if have == 0:
        part.unlink(missing_ok=True)
        tag.write_text(remote.etag, encoding="utf-8")
    bar.add(have)

    def once() -> None:
        nonlocal have
        get_range(part, remote, headers if remote.same_host else {}, timeout, have, bar)
        have = part.stat().st_size
        if remote.size is not None and have < remote.size:
            raise Transient(
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
        attempts(retries, bar, tracked)
    replace_file(part, staging / remote.relative)
    tag.unlink(missing_ok=True)


def get_range(
    part: Path,
    remote: Remote,
    headers: dict[str, str],
    timeout: float,
    have: int,
    bar: Progress,
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
                raise Transient(
                    Sentence(
                        QT_TRANSLATE_NOOP("core", "the server refused to resume a partial file")
                    )
                )
            hf_raise_for_status(response)
            start = 0
            if have and response.status_code == 206:
                start = content_range_start(response.headers.get("Content-Range")) or 0
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
    except (Cancelled, DownloadError, Transient, OSError):
        raise  # OSError: the disk, or an HTTP error status from huggingface_hub
    except Exception as exc:
        name = type(exc).__name__
        if any(k in name for k in ("Timeout", "Protocol", "Network", "Read", "Connect")):
            raise Transient(network_sentence(exc, timeout)) from None
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
