"""Atomic file writes: a temp file beside the target, fsync, then rename over it.

A failed write leaves any existing target as it was and no temp file behind. `target_problem`
and `os_error_sentence` turn what the file system refuses into one sentence for the user.
"""

import contextlib
import errno
import os
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from chattts_studio.core import platforms
from chattts_studio.core.messages import QT_TRANSLATE_NOOP, Sentence


def target_problem(target: Path, example: str = "name.ext") -> str | None:
    """One sentence saying why `target` cannot be written as a file, or None when it looks fine.

    Checked before any work: characters the file system refuses, a name that is too long, a
    folder, a missing folder, a special file, and (for users the system checks) permissions.
    The name is checked before the path is touched: the OS refuses to even look at some names.
    """
    text = str(target)
    if "\0" in text:
        return Sentence(
            QT_TRANSLATE_NOOP(
                "core",
                "The file name {name} contains a NUL character, which no file system accepts.",
            ),
            name=repr(text),
        )
    try:
        os.fsencode(text)
    except UnicodeError:
        return Sentence(
            QT_TRANSLATE_NOOP(
                "core", "The file name {name} has characters this file system cannot store."
            ),
            name=repr(text),
        )
    target = Path(target)
    limit = platforms.name_max(target.parent)
    size = len(os.fsencode(target.name))
    if size > limit:
        return Sentence(
            QT_TRANSLATE_NOOP(
                "core", "The file name {name}… is too long ({size} bytes; the limit is {limit})."
            ),
            name=target.name[:40],
            size=size,
            limit=limit,
        )
    try:
        if target.is_dir():
            return Sentence(
                QT_TRANSLATE_NOOP(
                    "core", "{target} is a folder; give a file name such as {example}."
                ),
                target=str(target),
                example=str(target / example),
            )
        if not target.name:
            return Sentence(
                QT_TRANSLATE_NOOP("core", "{target} has no file name."), target=str(target)
            )
        parent = target.parent
        if not parent.is_dir():
            return Sentence(
                QT_TRANSLATE_NOOP("core", "The folder {folder} does not exist."), folder=str(parent)
            )
        if target.exists() and not target.is_file():
            return Sentence(
                QT_TRANSLATE_NOOP(
                    "core", "{target} is not a regular file; give another file name."
                ),
                target=str(target),
            )
    except OSError as exc:  # a part of the path that is too long, a loop of links, ...
        return _cannot_write(target, os_error_reason(exc))
    if not os.access(parent, os.W_OK) or (target.exists() and not os.access(target, os.W_OK)):
        return _cannot_write(target, Sentence(_REASONS[errno.EACCES]))
    return None


def _cannot_write(target: Path, reason: str) -> Sentence:
    return Sentence(
        QT_TRANSLATE_NOOP("core", "Cannot write to {target}: {reason}."),
        target=str(target),
        reason=reason,
    )


_REASONS = {
    errno.ENOSPC: QT_TRANSLATE_NOOP("core", "the disk is full"),
    errno.EDQUOT: QT_TRANSLATE_NOOP("core", "the disk quota is used up"),
    errno.EROFS: QT_TRANSLATE_NOOP("core", "the file system is read-only"),
    errno.EACCES: QT_TRANSLATE_NOOP("core", "permission denied"),
    errno.EPERM: QT_TRANSLATE_NOOP("core", "the operation is not permitted"),
    errno.ENAMETOOLONG: QT_TRANSLATE_NOOP("core", "the file name is too long"),
    errno.EINVAL: QT_TRANSLATE_NOOP("core", "the file system refuses the name"),
    errno.EILSEQ: QT_TRANSLATE_NOOP("core", "the file system refuses characters in the name"),
    errno.ENOENT: QT_TRANSLATE_NOOP("core", "the folder does not exist"),
    errno.EISDIR: QT_TRANSLATE_NOOP("core", "it is a folder"),
    errno.ENOTDIR: QT_TRANSLATE_NOOP("core", "a part of the path is not a folder"),
}
# What os_error_sentence's callers cannot do ("Cannot save X: ..."), for the translators.
ACTIONS = (
    QT_TRANSLATE_NOOP("core", "save"),
    QT_TRANSLATE_NOOP("core", "write"),
    QT_TRANSLATE_NOOP("core", "write to"),
    QT_TRANSLATE_NOOP("core", "save the speaker library"),
)


def os_error_reason(exc: BaseException) -> str:
    """'the disk is full (No space left on device)' and the like, for an OSError or the
    ValueError the OS layer raises for a name it refuses (an embedded NUL byte)."""
    if isinstance(exc, OSError):
        detail = exc.strerror or str(exc)
        known = _REASONS.get(exc.errno or 0)
        if known is None:
            return detail
        reason = Sentence(known)
        # The system's own words stay beside ours (they are what a search finds).
        return Sentence("{reason} ({detail})", reason=reason, detail=detail) if detail else reason
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__


def os_error_sentence(action: str, target: Path, exc: BaseException) -> str:
    """'Cannot save X: the disk is full (No space left on device). Nothing was changed.'
    (a Sentence; `action` is translated where it is one of ACTIONS)."""
    return Sentence(
        QT_TRANSLATE_NOOP("core", "Cannot {action} {target}: {reason}. Nothing was changed."),
        action=Sentence(action),
        target=str(target),
        reason=os_error_reason(exc),
    )


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
        _flush(tmp)
        _replace(tmp, target)
        if platforms.can_fsync_folder():
            _fsync_folder(target.parent)
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()


def _flush(path: Path) -> None:
    """The file's data on the disk before the rename makes it the target."""
    fd = os.open(path, platforms.FSYNC_OPEN_FLAGS)  # writable: see FSYNC_OPEN_FLAGS
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _replace(tmp: Path, target: Path) -> None:
    for delay in platforms.replace_retry_delays():
        try:
            os.replace(tmp, target)
            return
        except PermissionError:  # held open by another process for a moment (Windows)
            time.sleep(delay)
    os.replace(tmp, target)


def _fsync_folder(folder: Path) -> None:
    """Make the rename itself durable (POSIX only: see platforms.can_fsync_folder). Best
    effort: the new file is already in place, so a folder that cannot be opened or flushed
    (some network and FUSE file systems) is no reason to say the save failed."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        with contextlib.suppress(OSError):
            os.fsync(fd)
    finally:
        os.close(fd)


def write_text_atomic(target: Path, text: str) -> None:
    with atomic_path(target) as tmp:
        tmp.write_text(text, encoding="utf-8")


def write_with(target: Path, writer: Callable[[Path], None]) -> None:
    with atomic_path(target) as tmp:
        writer(tmp)
