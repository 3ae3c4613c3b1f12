"""Changes to a file several processes share (speaker library, dictionary, history): each holds the
`filelock` package's lock beside it while it rereads, changes and atomically writes the file, so
no writer puts back a stale copy.
"""

import contextlib
import errno
from collections.abc import Iterator
from pathlib import Path

from filelock import BaseFileLock, FileLock, Timeout

from chattts_studio.core.atomic import os_error_sentence
from chattts_studio.core.errors import StudioError
from chattts_studio.core.messages import QT_TRANSLATE_NOOP, Sentence

# Far longer than any change takes (a re-read and an atomic write), far shorter than a person
# waits before thinking the app hung.
LOCK_TIMEOUT_S = 10.0

# What is being changed, as the busy sentence names it.
SPEAKER_LIBRARY = QT_TRANSLATE_NOOP("core", "the speaker library")
DICTIONARY = QT_TRANSLATE_NOOP("core", "the pronunciation dictionary")
HISTORY = QT_TRANSLATE_NOOP("core", "the history")


def lock_file(data: Path) -> Path:
    """The lock file of `data`: beside it, so every process that finds the file finds it."""
    return data.with_name(f"{data.name}.lock")


def busy(what: str) -> Sentence:
    return Sentence(
        QT_TRANSLATE_NOOP("core", "Another ChatTTS Studio is changing {what}; try again."),
        what=Sentence(what),
    )


@contextlib.contextmanager
def changing(
    data: Path,
    what: str,
    error: type[StudioError] = StudioError,
    timeout: float | None = None,
) -> Iterator[None]:
    """Hold `data`'s lock for one read-modify-write. `error` (one sentence) when another
    process holds it past the timeout, or the lock file cannot be made."""
    data = Path(data)
    lock = FileLock(lock_file(data), timeout=LOCK_TIMEOUT_S if timeout is None else timeout)
    try:
        data.parent.mkdir(parents=True, exist_ok=True)
        lock.acquire()
    except Timeout:
        raise error(busy(what)) from None
    except (OSError, ValueError) as exc:
        raise error(os_error_sentence("write to", data, exc)) from None
    try:
        yield
    finally:
        lock.release()


def try_hold(path: Path, error: type[StudioError] | None = None) -> BaseFileLock | None:
    """`path` locked now and kept until released, or None when another holder has it (for a
    mark that a folder is in use, held as long as the use lasts). A lock file that cannot be
    made (a read-only folder, a full disk) or that is a link (the lock would open whatever it
    points to) raises OSError, or with `error`, that error with one sentence."""
    lock = FileLock(path, timeout=0)
    try:
        if _is_link(path):
            raise OSError(errno.ELOOP, "the lock file is a link", str(path))
        lock.acquire()
    except Timeout:
        return None
    except (OSError, ValueError) as exc:
        if error is None:
            raise
        if _is_link(path):
            raise error(
                Sentence(
                    QT_TRANSLATE_NOOP(
                        "core", "{path} is a link, not a lock file; remove it and try again."
                    ),
                    path=str(path),
                )
            ) from None
        raise error(os_error_sentence("write to", path, exc)) from None
    return lock


def _is_link(path: Path) -> bool:
    try:
        return path.is_symlink()
    except OSError:
        return False
