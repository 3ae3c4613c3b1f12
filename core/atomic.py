"""Atomic file writes: a temp file beside the target, fsync, then rename over it.

A failed write leaves any existing target as it was and no temp file behind. The file written
gets the mode a plain open() would give it: an existing target's own, else 0o666 less the
umask. `target_problem` and `os_error_sentence` turn what the file system refuses into one
sentence for the user; `replace_file` is the one rename-over that Windows' file rules need
(tried again while another program holds a file, then FileInUse naming it; access denied
is AccessDenied at once).
"""

import contextlib
import errno
import os
import secrets
import stat
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
    whole = os.path.abspath(text)
    longest = platforms.max_path()
    length = path_length(whole)
    if longest is not None and length > longest:
        return Sentence(
            QT_TRANSLATE_NOOP(
                "core",
                "The path {target} is {length} characters long; Windows allows {limit}. "
                "Choose a shorter folder or file name.",
            ),
            target=whole,
            length=length,
            limit=longest,
        )
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
    # os.stat, not Path.is_dir: from Python 3.13 that says False for any error, and a path too
    # long for the system (ENAMETOOLONG) would read as a missing folder.
    try:
        found = _stat(target)
        if found is not None and stat.S_ISDIR(found.st_mode):
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
        folder = _stat(parent)
        if folder is None or not stat.S_ISDIR(folder.st_mode):
            return Sentence(
                QT_TRANSLATE_NOOP("core", "The folder {folder} does not exist."), folder=str(parent)
            )
        if found is not None and not stat.S_ISREG(found.st_mode):
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


def _stat(path: Path) -> os.stat_result | None:
    """The path's status, None when there is nothing there (or a part of it is a file);
    other refusals (too long, a loop of links, no permission) are raised."""
    try:
        return os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
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


class FileInUse(PermissionError):
    """A file (or a folder with a file in it) that another program holds open, so Windows
    refuses to replace, rename or delete it. str() is one sentence that names it; it is still
    an OSError, so a caller that says an OSError in its own sentence says this one too."""

    def __init__(self, path: Path | str, folder: bool = False) -> None:
        super().__init__(errno.EACCES, "in use by another program", str(path))
        self.folder = folder
        self.sentence = (
            Sentence(
                QT_TRANSLATE_NOOP(
                    "core",
                    "A file in {folder} is in use by another program; close it there and try "
                    "again.",
                ),
                folder=str(path),
            )
            if folder
            else Sentence(
                QT_TRANSLATE_NOOP(
                    "core", "{target} is open in another program; close it there and try again."
                ),
                target=str(path),
            )
        )
        self.args = (self.sentence,)

    def __str__(self) -> str:
        return self.sentence

    def reason(self) -> Sentence:
        """The same said inside another sentence ("Cannot save X: {reason}.")."""
        if self.folder:
            return Sentence(
                QT_TRANSLATE_NOOP(
                    "core",
                    "a file in it is in use by another program; close it there and try again",
                )
            )
        return Sentence(
            QT_TRANSLATE_NOOP("core", "it is open in another program; close it there and try again")
        )


class AccessDenied(PermissionError):
    """A rename, replace or delete that Windows refused with access denied: the file is
    read-only, the account may not change it, or a program has it mapped into memory. Said at
    once (waiting changes none of these), in one sentence that names it and what to check."""

    def __init__(self, path: Path | str) -> None:
        super().__init__(errno.EACCES, "access denied", str(path))
        self.sentence = Sentence(
            QT_TRANSLATE_NOOP(
                "core",
                "Windows denied access to {target}: it is read-only, your account may not "
                "change it, or a program has it loaded; check its properties or close that "
                "program, then try again.",
            ),
            target=str(path),
        )
        self.args = (self.sentence,)

    def __str__(self) -> str:
        return self.sentence

    def reason(self) -> Sentence:
        """The same said inside another sentence ("Cannot save X: {reason}.")."""
        return Sentence(
            QT_TRANSLATE_NOOP(
                "core",
                "Windows denied access to it (read-only, not your account's to change, or "
                "loaded by a program)",
            )
        )


def os_error_reason(exc: BaseException) -> str:
    """'the disk is full (No space left on device)' and the like, for an OSError or the
    ValueError the OS layer raises for a name it refuses (an embedded NUL byte)."""
    if isinstance(exc, FileInUse | AccessDenied):
        return exc.reason()
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
def atomic_path(target: Path, suffix: str = "", durable: bool = True) -> Iterator[Path]:
    """Yield a temp path in target's folder; on success it replaces target, else it is removed.

    The temp file keeps target's extension (or `suffix`) so writers that pick a format from the
    name (soundfile) still do the right thing. Its name is short and plain whatever the
    target's name is, so the temp file can be created even where the target name is refused.
    `durable`: flushed to the disk before the rename (a cache that may lose its last entry in
    a power cut skips it: an fsync can take far longer than the write)."""
    target = Path(target)
    ext = suffix or target.suffix
    if len(ext) > 16 or not ext.isascii() or "\0" in ext:
        ext = ""
    stem = "".join(c for c in target.stem[:40] if c.isprintable() and c != "\0") or "file"
    stem = _fitting(stem, target.parent, f"..{'0' * 8}.part{ext}")
    tmp = new_file(target.parent, f".{stem}.", f".part{ext}")
    try:
        yield tmp
        if durable:
            _flush(tmp)
        keep_mode(tmp, target)
        replace_file(tmp, target)
        if durable and platforms.can_fsync_folder():
            _fsync_folder(target.parent)
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()


def _fitting(stem: str, folder: Path, rest: str) -> str:
    """`stem` cut so that the temp file's path (its folder, the stem and `rest`) keeps to
    Windows' path limit (a target that fits may be shorter than its temp file's name, and
    Windows says "path not found" for one over); ENAMETOOLONG when even no stem fits."""
    longest = platforms.max_path()
    if longest is None:
        return stem
    room = longest - path_length(os.path.join(os.path.abspath(folder), rest))
    if room < 0:
        raise OSError(errno.ENAMETOOLONG, os.strerror(errno.ENAMETOOLONG), str(folder))
    while path_length(stem) > room:
        stem = stem[:-1]
    return stem


def path_length(text: str) -> int:
    """A path's length as Windows counts it: UTF-16 code units (a character beyond the BMP,
    an emoji, is two)."""
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


_NEW_FILE_FLAGS = (
    os.O_RDWR
    | os.O_CREAT
    | os.O_EXCL
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_BINARY", 0)
    | getattr(os, "O_NOINHERIT", 0)
)


def new_file(folder: Path, prefix: str = "", suffix: str = "") -> Path:
    """A new empty file in `folder` whose name nobody else has, made as a plain open() makes a
    file: asked for with mode 0o666, which the system reduces by the umask (and a default ACL
    of the folder). Nothing reads the umask: os.umask can only be read by setting it, which
    races every thread that creates a file meanwhile. (tempfile.mkstemp makes 0o600 files.)"""
    for _ in range(100):
        path = Path(folder) / f"{prefix}{secrets.token_hex(4)}{suffix}"
        try:
            os.close(os.open(path, _NEW_FILE_FLAGS, 0o666))
        except FileExistsError:
            continue
        return path
    raise FileExistsError(errno.EEXIST, "no free temporary file name", str(folder))


def new_folder(parent: Path, prefix: str = "", suffix: str = "") -> Path:
    """A new empty folder in `parent` whose name nobody else has, made as os.mkdir makes one
    (0o777 less the umask; tempfile.mkdtemp makes 0o700)."""
    for _ in range(100):
        path = Path(parent) / f"{prefix}{secrets.token_hex(4)}{suffix}"
        try:
            os.mkdir(path)
        except FileExistsError:
            continue
        return path
    raise FileExistsError(errno.EEXIST, "no free temporary folder name", str(parent))


def keep_mode(new: Path, old: Path) -> None:
    """The mode of `old` (a file about to be replaced) given to `new`, which replaces it, as
    writing `old` in place would keep it; with no `old`, `new` keeps its own (new_file's)."""
    if not platforms.has_file_modes():
        return
    try:
        mode = stat.S_IMODE(os.stat(old).st_mode)
    except OSError:  # no old file (or none that can be read): the new file's own mode
        return
    os.chmod(new, mode)


def _flush(path: Path) -> None:
    """The file's data on the disk before the rename makes it the target."""
    fd = os.open(path, platforms.FSYNC_OPEN_FLAGS)  # writable: see FSYNC_OPEN_FLAGS
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def replace_file(src: Path, dst: Path, name: Path | None = None) -> None:
    """os.replace(src, dst), for files and folders alike, kept to Windows' rules: a replace
    refused because a program holds either one open (a virus scanner, the search indexer: for
    a few milliseconds) is tried again for about a second; still refused, FileInUse names
    `name` (`dst` when None: the file the user knows). Access denied is AccessDenied at once.
    Any other error is raised as it is."""
    delays = platforms.replace_retry_delays()
    said = dst if name is None else name
    for attempt in range(len(delays) + 1):
        try:
            os.replace(src, dst)
            return
        except PermissionError as exc:
            if platforms.is_access_denied(exc):
                raise AccessDenied(said) from exc
            if not platforms.is_file_in_use(exc):
                raise
            if attempt == len(delays):
                raise FileInUse(said, folder=os.path.isdir(src)) from exc
            time.sleep(delays[attempt])


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
