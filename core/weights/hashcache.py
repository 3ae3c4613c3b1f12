"""Hashes of model files already verified, kept across runs so unchanged weights are not read again
on every start. A verdict holds only while path, size, modification time and inode are unchanged.
See docs/reliability.md.
"""

import json
import os
import threading
from dataclasses import dataclass
from pathlib import Path

from chattts_studio.core import paths
from chattts_studio.core.atomic import write_text_atomic

CACHE_NAME = "verified-hashes.json"
FORMAT = 1
_lock = threading.Lock()


def _cache_file() -> Path:
    return paths.data_dir() / CACHE_NAME


Stamp = tuple[int, int, int]  # size, modification time (ns), inode


def stamp(st: os.stat_result) -> Stamp:
    return (st.st_size, st.st_mtime_ns, st.st_ino)


@dataclass(frozen=True)
class Hashed:
    """A file's sha256 and the stamp of the very file that was read for it."""

    digest: str
    stamp: Stamp


def _stamp(path: Path) -> list[int]:
    return list(stamp(path.stat()))


def _read() -> dict[str, list[object]]:
    try:
        data = json.loads(_cache_file().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}  # absent or damaged: hash again (and write a good one)
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        return {}
    files = data.get("files")
    return files if isinstance(files, dict) else {}


def cached(path: Path) -> str | None:
    """The file's sha256 when it was verified before and has not changed since."""
    with _lock:
        entry = _read().get(str(path.resolve()))
    if not isinstance(entry, list) or len(entry) != 4:
        return None
    try:
        if entry[:3] != _stamp(path):
            return None
    except OSError:
        return None
    digest = entry[3]
    return digest if isinstance(digest, str) else None


def remember(verified: dict[Path, Hashed]) -> None:
    """Record files whose bytes were hashed just now and matched, each with the stamp its hash
    was taken with; one the path no longer shows (replaced or written since) is left out."""
    if not verified:
        return
    with _lock:
        files = _read()
        for path, hashed in verified.items():
            try:
                if _stamp(path) != list(hashed.stamp):
                    continue
                files[str(path.resolve())] = [*hashed.stamp, hashed.digest]
            except OSError:
                continue
        # Forget files that are gone, so the cache cannot grow without end.
        files = {name: entry for name, entry in files.items() if os.path.exists(name)}
        try:
            _cache_file().parent.mkdir(parents=True, exist_ok=True)
            write_text_atomic(_cache_file(), json.dumps({"format": FORMAT, "files": files}))
        except OSError:
            pass  # a read-only data folder: hashing again next time is the only cost
