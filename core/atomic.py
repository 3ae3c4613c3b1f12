"""Atomic file writes: a temp file beside the target, fsync, then rename over it."""

import contextlib
import os
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path


@contextlib.contextmanager
def atomic_path(target: Path, suffix: str = "") -> Iterator[Path]:
    """Yield a temp path in target's folder; on success it replaces target, else it is removed.

    The temp file keeps target's extension (or `suffix`) so writers that pick a format from the
    name (soundfile) still do the right thing.
    """
    target = Path(target)
    ext = suffix or target.suffix
    fd, tmp_name = tempfile.mkstemp(
        prefix=f".{target.stem[:40]}.", suffix=f".part{ext}", dir=target.parent
    )
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        yield tmp
        with open(tmp, "rb") as fh:
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()


def write_text_atomic(target: Path, text: str) -> None:
    with atomic_path(target) as tmp:
        tmp.write_text(text, encoding="utf-8")


def write_with(target: Path, writer: Callable[[Path], None]) -> None:
    with atomic_path(target) as tmp:
        writer(tmp)
