"""Atomic file writes: a temp file beside the target, fsync, then rename over it.

A failed write leaves any existing target as it was and no temp file behind. `target_problem`
and `os_error_sentence` turn what the file system refuses into one sentence for the user.
"""

import contextlib
import errno
import os
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

NAME_MAX = 255  # bytes in one file name on every common Linux, macOS and Windows file system


def _name_max(folder: Path) -> int:
    try:
        return int(os.pathconf(folder, "PC_NAME_MAX"))
    except (OSError, ValueError, AttributeError):
        return NAME_MAX


def target_problem(target: Path, example: str = "name.ext") -> str | None:
    """One sentence saying why `target` cannot be written as a file, or None when it looks fine.

    Checked before any work: characters the file system refuses, a name that is too long, a
    folder, a missing folder, a special file, and (for users the system checks) permissions.
    The name is checked before the path is touched: the OS refuses to even look at some names.
    """
    text = str(target)
    if "\0" in text:
        return f"The file name {text!r} contains a NUL character, which no file system accepts."
    try:
        os.fsencode(text)
    except UnicodeError:
        return f"The file name {text!r} has characters this file system cannot store."
    target = Path(target)
    limit = _name_max(target.parent)
    size = len(os.fsencode(target.name))
    if size > limit:
        return (
            f"The file name {target.name[:40]}… is too long ({size} bytes; the limit is {limit})."
        )
    try:
        if target.is_dir():
            return f"{target} is a folder; give a file name such as {target / example}."
        if not target.name:
            return f"{target} has no file name."
        parent = target.parent
        if not parent.is_dir():
            return f"The folder {parent} does not exist."
        if target.exists() and not target.is_file():
            return f"{target} is not a regular file; give another file name."
    except OSError as exc:  # a part of the path that is too long, a loop of links, ...
        return f"Cannot write to {target}: {os_error_reason(exc)}."
    if not os.access(parent, os.W_OK) or (target.exists() and not os.access(target, os.W_OK)):
        return f"Cannot write to {target}: permission denied."
    return None


_REASONS = {
    errno.ENOSPC: "the disk is full",
    errno.EDQUOT: "the disk quota is used up",
    errno.EROFS: "the file system is read-only",
    errno.EACCES: "permission denied",
    errno.EPERM: "the operation is not permitted",
    errno.ENAMETOOLONG: "the file name is too long",
    errno.EINVAL: "the file system refuses the name",
    errno.EILSEQ: "the file system refuses characters in the name",
    errno.ENOENT: "the folder does not exist",
    errno.EISDIR: "it is a folder",
    errno.ENOTDIR: "a part of the path is not a folder",
}


def os_error_reason(exc: BaseException) -> str:
    """'the disk is full (No space left on device)' and the like, for an OSError or the
    ValueError the OS layer raises for a name it refuses (an embedded NUL byte)."""
    if isinstance(exc, OSError):
        detail = exc.strerror or str(exc)
        reason = _REASONS.get(exc.errno or 0)
        return f"{reason} ({detail})" if reason and detail else (reason or detail)
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__


def os_error_sentence(action: str, target: Path, exc: BaseException) -> str:
    """'Cannot save X: the disk is full (No space left on device). Nothing was changed.'"""
    return f"Cannot {action} {target}: {os_error_reason(exc)}. Nothing was changed."


@contextlib.contextmanager
def atomic_path(target: Path, suffix: str = "") -> Iterator[Path]:
    """Yield a temp path in target's folder; on success it replaces target, else it is removed.

    The temp file keeps target's extension (or `suffix`) so writers that pick a format from the
    name (soundfile) still do the right thing. Its name is short and plain whatever the
    target's name is, so the temp file can be created even where the target name is refused.
    """
    target = Path(target)
    ext = suffix or target.suffix
    if len(ext) > 16 or not ext.isascii() or "\0" in ext:
        ext = ""
    stem = "".join(c for c in target.stem[:40] if c.isprintable() and c != "\0") or "file"
    fd, tmp_name = tempfile.mkstemp(prefix=f".{stem}.", suffix=f".part{ext}", dir=target.parent)
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        yield tmp
        with open(tmp, "rb") as fh:
            os.fsync(fh.fileno())
        os.replace(tmp, target)
        _fsync_folder(target.parent)
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()


def _fsync_folder(folder: Path) -> None:
    """Make the rename itself durable; best effort (not every system can open a folder)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def write_text_atomic(target: Path, text: str) -> None:
    with atomic_path(target) as tmp:
        tmp.write_text(text, encoding="utf-8")


def write_with(target: Path, writer: Callable[[Path], None]) -> None:
    with atomic_path(target) as tmp:
        writer(tmp)
