"""The verified-hash cache remembers a file only as it was read for its hash: a file replaced
or written while it was being verified (or after, before the verdict is recorded) is hashed
again next time; an unchanged one is not."""

import hashlib
import os
from pathlib import Path

import pytest

from chattts_studio.core.weights import hashcache, models


@pytest.fixture(autouse=True)
def own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CHATTTS_STUDIO_HOME", str(tmp_path / "home"))


def _weights(folder: Path) -> dict[str, str]:
    """A folder with every asset file (a few bytes each) and its sha256 map."""
    hashes = {}
    for number, relative in enumerate(models.ASSET_FILES):
        path = folder / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(f"weights {number}".encode() * 100)
        hashes[models.hash_key(relative)] = hashlib.sha256(path.read_bytes()).hexdigest()
    return hashes


def _hashed(path: Path) -> "hashcache.Hashed":
    with open(path, "rb") as fh:
        taken = hashcache.stamp(os.fstat(fh.fileno()))
        return hashcache.Hashed(hashlib.sha256(fh.read()).hexdigest(), taken)


def test_an_unchanged_file_is_remembered(tmp_path: Path) -> None:
    path = tmp_path / "f.bin"
    path.write_bytes(b"a" * 100)
    hashed = _hashed(path)
    hashcache.remember({path: hashed})
    assert hashcache.cached(path) == hashed.digest


def test_a_file_replaced_between_its_hash_and_the_verdict_is_not_remembered(
    tmp_path: Path,
) -> None:
    path = tmp_path / "f.bin"
    path.write_bytes(b"a" * 100)
    hashed = _hashed(path)
    (tmp_path / "g.bin").write_bytes(b"b" * 100)
    os.replace(tmp_path / "g.bin", path)  # another file under the name, hashed by nobody
    hashcache.remember({path: hashed})
    assert hashcache.cached(path) is None
    assert not (tmp_path / "home" / hashcache.CACHE_NAME).read_text().count("f.bin")


@pytest.mark.parametrize("change", ["replaced", "written"])
def test_a_file_changed_while_verify_hashes_it_is_hashed_again(
    tmp_path: Path, change: str, posix_file_rules: None
) -> None:
    """While the first asset file is being read (its first block is in), another file takes
    its name, or new bytes are written to it: its verdict is not kept; the others' are.
    (Windows refuses to replace a file that is open, so the first change is POSIX's alone.)"""
    folder = tmp_path / "weights"
    hashes = _weights(folder)
    first = folder / models.ASSET_FILES[0]
    calls: list[int] = []

    def meanwhile(_done: int, _total: int) -> None:
        calls.append(_done)
        if len(calls) > 1:
            return
        if change == "replaced":
            (tmp_path / "other").write_bytes(b"other bytes")
            os.replace(tmp_path / "other", first)
        else:
            before = first.stat().st_mtime_ns
            with open(first, "r+b") as fh:
                fh.write(b"new bytes")
            # A second later, whatever the clock's grain (it may not have ticked since).
            os.utime(first, ns=(before, before + 1_000_000_000))

    models.verify(folder, hashes, "test", progress=meanwhile)
    assert hashcache.cached(first) is None
    for relative in models.ASSET_FILES[1:]:
        assert hashcache.cached(folder / relative) == hashes[models.hash_key(relative)]
    # Checked again, the changed file is read again and refused.
    with pytest.raises(models.ModelError, match="does not match"):
        models.verify(folder, hashes, "test", quick=True)
