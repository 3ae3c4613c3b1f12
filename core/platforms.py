"""Every place core behaves differently by operating system, each with its reason. Callers ask
these functions instead of testing `os.name`; each takes the platform as an optional argument, so
tests/core/test_platforms.py can simulate it.
"""

import os
import sys
from pathlib import Path

OS_NAME = os.name  # "posix" or "nt": this process's platform
PLATFORM = sys.platform  # "linux", "darwin", "win32", ...

NAME_MAX = 255  # bytes in one file name on every common Linux, macOS and Windows file system

# Why: Windows' FlushFileBuffers needs a handle with write access (a read-only one gives
# EBADF), so a file is flushed through a read-write handle everywhere; O_BINARY exists only on
# Windows, where a descriptor opened without it is in text mode.
FSYNC_OPEN_FLAGS = os.O_RDWR | getattr(os, "O_BINARY", 0)

# Why: a Windows process that has a file open (a reader of the library, a virus scanner, the
# search indexer) makes replacing it fail with a sharing violation (PermissionError) for the
# few milliseconds it holds it; POSIX replaces an open file at once.
WINDOWS_REPLACE_RETRY_S = (0.01, 0.05, 0.1, 0.25, 0.5)
WINDOWS_IN_USE_ERRORS = (32, 33)  # ERROR_SHARING_VIOLATION, ERROR_LOCK_VIOLATION
WINDOWS_ACCESS_DENIED = 5  # ERROR_ACCESS_DENIED
WINDOWS_MAX_PATH = 260  # characters of a whole path, its closing NUL included


def is_windows(os_name: str | None = None) -> bool:
    return (OS_NAME if os_name is None else os_name) == "nt"


def can_fsync_folder(os_name: str | None = None) -> bool:
    """Whether an atomic write also flushes the folder, making the rename itself durable.

    Why: on POSIX a rename lives in the folder's entries, which reach the disk only when the
    folder is flushed; Windows cannot open a folder as a file at all (os.open raises), and NTFS
    journals the rename with the file's own metadata."""
    return not is_windows(os_name)


def replace_retry_delays(os_name: str | None = None) -> tuple[float, ...]:
    """Seconds to wait between tries when replacing a file is refused as in use (Windows only;
    see WINDOWS_REPLACE_RETRY_S)."""
    return WINDOWS_REPLACE_RETRY_S if is_windows(os_name) else ()


def max_path(os_name: str | None = None) -> int | None:
    """The longest whole path, in UTF-16 code units, that a file can be written at; None
    where the system says so itself (POSIX: ENAMETOOLONG from the call that fails).

    Why: Windows' MAX_PATH is 260 including the closing NUL, and a longer path fails with
    "path not found" (ENOENT), which reads as a missing folder. Long paths work only where a
    registry setting and every program in the chain opt in (Explorer, media players and the
    audio libraries often do not), so a file there could not be opened by the user anyway."""
    return WINDOWS_MAX_PATH - 1 if is_windows(os_name) else None


def is_file_in_use(exc: BaseException) -> bool:
    """Whether a refused rename, replace or delete means a program holds the file open, so
    trying again in a moment may succeed.

    Why: Windows refuses to replace or delete a file another handle has open without sharing
    deletes, with winerror 32 (a sharing violation) or 33 (a lock violation): a virus scanner
    or the search indexer lets go within a second. POSIX allows all of these, so only a
    PermissionError carrying Windows' codes counts (tests raise them on Linux too)."""
    return isinstance(exc, PermissionError) and (
        getattr(exc, "winerror", None) in WINDOWS_IN_USE_ERRORS
    )


def is_access_denied(exc: BaseException, os_name: str | None = None) -> bool:
    """Whether Windows refused a rename, replace or delete with access denied (winerror 5):
    a read-only file, an access list that forbids it, a file mapped into memory (a loaded
    model) or one waiting to be deleted. Waiting does not change any of these, so it is said
    at once, apart from a file in use. A PermissionError on POSIX is plain permissions."""
    if not isinstance(exc, PermissionError):
        return False
    code = getattr(exc, "winerror", None)
    return code == WINDOWS_ACCESS_DENIED or (code is None and is_windows(os_name))


def has_file_modes(os_name: str | None = None) -> bool:
    """Whether files carry POSIX permission bits, so a written file's mode is ours to set.

    Why: a temp file made for an atomic write must end up with the mode a plain open() would
    give (the user's umask, or the replaced file's own mode); Windows files have ACLs that
    follow their folder, and os.chmod there only sets the read-only flag."""
    return not is_windows(os_name)


def name_max(folder: Path, os_name: str | None = None) -> int:
    """The longest file name, in bytes, that `folder`'s file system accepts.

    Why: POSIX says it per file system (os.pathconf); Windows has no pathconf, and NTFS, exFAT
    and FAT32 long names all allow 255 characters."""
    if is_windows(os_name) or not hasattr(os, "pathconf"):
        return NAME_MAX
    try:
        return int(os.pathconf(folder, "PC_NAME_MAX"))
    except (OSError, ValueError):
        return NAME_MAX


def max_rss_bytes(ru_maxrss: int, platform: str | None = None) -> int:
    """getrusage's peak resident size in bytes.

    Why: ru_maxrss is in bytes on macOS and in KiB on Linux and the BSDs."""
    platform = PLATFORM if platform is None else platform
    return ru_maxrss if platform == "darwin" else ru_maxrss * 1024
