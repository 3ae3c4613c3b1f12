"""Full and read-only disks for the tests of the app's writers: a real small file system (a
tmpfs, which root may mount: filled or remounted read-only), and errors to inject where
mounting is not allowed (root ignores permission bits, so a chmod proves nothing)."""

import contextlib
import errno
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest


@contextlib.contextmanager
def small_disk(where: Path, size: str = "256k") -> Iterator[Path]:
    """`where` as a fresh tmpfs of `size`; skipped, saying why, where mounting is refused."""
    where.mkdir(parents=True, exist_ok=True)
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)],
        capture_output=True,
        text=True,
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here ({mounted.stderr.strip() or 'not root'})")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


def read_only(where: Path) -> None:
    """The tmpfs at `where` remounted read-only (its files stay as they are)."""
    subprocess.run(["mount", "-o", "remount,ro", str(where)], check=True)


def fill(where: Path, leave: int = 0) -> Path:
    """A file that takes the room left on `where`'s file system but `leave` bytes."""
    filler = where / ".filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        block = b"\0" * 4096
        with contextlib.suppress(OSError):
            while True:
                os.write(fd, block)
    finally:
        os.close(fd)
    if leave:
        os.truncate(filler, max(0, filler.stat().st_size - leave))
    return filler


def enospc(path: object = "") -> OSError:
    return OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))


def erofs(path: object = "") -> OSError:
    return OSError(errno.EROFS, os.strerror(errno.EROFS), str(path))


def files_under(folder: Path) -> dict[str, bytes]:
    """Every file under `folder` (relative path: bytes), to compare before and after."""
    return {
        str(p.relative_to(folder)): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and p.name != ".filler"
    }
