"""Every platform branch in core (core/platforms.py), each taken on a simulated platform: the
platform injected into the function, or platforms.OS_NAME switched while an atomic write runs
against stand-ins for what Windows refuses (a flush through a read-only handle, opening a
folder)."""

import errno
import os
import stat
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from chattts_studio.core import platforms
from chattts_studio.core.atomic import write_text_atomic
from chattts_studio.core.voices.speakers import SpeakerLibrary


def test_each_branch_on_each_platform(tmp_path: Path) -> None:
    assert platforms.is_windows("nt") and not platforms.is_windows("posix")
    # The folder of a rename is flushed on POSIX only: Windows cannot open a folder.
    assert platforms.can_fsync_folder("posix") and not platforms.can_fsync_folder("nt")
    # A replace refused as in use is tried again on Windows only.
    assert platforms.replace_retry_delays("posix") == ()
    assert len(platforms.replace_retry_delays("nt")) >= 3
    # The longest name: asked of the file system on POSIX, Windows' 255 there.
    assert platforms.name_max(tmp_path, "nt") == platforms.NAME_MAX
    assert platforms.name_max(tmp_path, "posix") == os.pathconf(tmp_path, "PC_NAME_MAX")
    # Peak memory: bytes on macOS, KiB on Linux.
    assert platforms.max_rss_bytes(1000, "darwin") == 1000
    assert platforms.max_rss_bytes(1000, "linux") == 1024 * 1000
    # The flush handle is writable everywhere (Windows refuses a read-only one).
    assert platforms.FSYNC_OPEN_FLAGS & os.O_ACCMODE == os.O_RDWR


def test_the_current_platform_is_read_when_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    assert os.name == platforms.OS_NAME and sys.platform == platforms.PLATFORM
    monkeypatch.setattr(platforms, "OS_NAME", "nt")
    assert platforms.is_windows() and not platforms.can_fsync_folder()
    assert platforms.replace_retry_delays() == platforms.WINDOWS_REPLACE_RETRY_S
    monkeypatch.setattr(platforms, "OS_NAME", "posix")
    assert not platforms.is_windows() and platforms.can_fsync_folder()
    monkeypatch.setattr(platforms, "PLATFORM", "darwin")
    assert platforms.max_rss_bytes(5) == 5


class Spy:
    """os.open and os.fsync as Windows behaves: a folder cannot be opened, and a handle without
    write access cannot be flushed (EBADF). Records what was flushed and opened."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.opened: list[tuple[str, int]] = []
        self.flushed: list[int] = []
        real_open, real_fsync = os.open, os.fsync

        def fake_open(path: object, flags: int, *args: object, **kw: object) -> int:
            # filelock's POSIX lock probes its folder; on Windows its own lock runs instead.
            if "filelock" not in Path(sys._getframe(1).f_code.co_filename).parts:
                self.opened.append((os.fspath(path), flags))  # type: ignore[arg-type]
                if Path(os.fspath(path)).is_dir():  # type: ignore[arg-type]
                    raise PermissionError(errno.EACCES, "Access is denied")
            return real_open(path, flags, *args, **kw)  # type: ignore[arg-type]

        def fake_fsync(fd: int) -> None:
            os.write(fd, b"")  # EBADF for a handle without write access, as Windows' flush
            self.flushed.append(fd)
            real_fsync(fd)

        monkeypatch.setattr(os, "open", fake_open)
        monkeypatch.setattr(os, "fsync", fake_fsync)


@pytest.fixture
def windows(monkeypatch: pytest.MonkeyPatch) -> Iterator[Spy]:
    spy = Spy(monkeypatch)
    monkeypatch.setattr(platforms, "OS_NAME", "nt")
    yield spy
    monkeypatch.undo()


def test_atomic_writes_on_windows_flush_a_writable_handle_and_never_open_a_folder(
    tmp_path: Path, windows: Spy
) -> None:
    target = tmp_path / "notes.txt"
    write_text_atomic(target, "first")
    write_text_atomic(target, "second")  # over an existing file too
    library = SpeakerLibrary(tmp_path / "speakers.json")
    library.add("Alice", "豆" * 40)  # a library save is an atomic write under its lock
    assert target.read_text(encoding="utf-8") == "second"
    assert SpeakerLibrary(library.path).names() == ["Alice"]
    assert len(windows.flushed) == 3
    assert not [path for path, _flags in windows.opened if Path(path).is_dir()]
    assert not list(tmp_path.glob(".*part*"))


def test_atomic_writes_on_posix_also_flush_the_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    flushed: list[int] = []
    real_fsync = os.fsync

    def spy(fd: int) -> None:
        flushed.append(os.fstat(fd).st_mode)
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", spy)
    monkeypatch.setattr(platforms, "OS_NAME", "posix")
    write_text_atomic(tmp_path / "notes.txt", "text")
    monkeypatch.undo()
    assert [stat.S_ISREG(m) for m in flushed] == [True, False]  # the file, then its folder


def test_a_replace_refused_as_in_use_is_tried_again_on_windows_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "speakers.json"
    target.write_text("old", encoding="utf-8")
    real_replace = os.replace
    refusals = [2]

    def replace(src: object, dst: object) -> None:
        if refusals[0]:  # a reader holds the target for a moment
            refusals[0] -= 1
            raise PermissionError(errno.EACCES, "The process cannot access the file")
        real_replace(src, dst)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "replace", replace)
    monkeypatch.setattr(platforms, "OS_NAME", "posix")
    with pytest.raises(PermissionError):
        write_text_atomic(target, "new")
    assert target.read_text(encoding="utf-8") == "old"

    refusals[0] = 2
    monkeypatch.setattr(platforms, "OS_NAME", "nt")
    write_text_atomic(target, "new")
    monkeypatch.undo()
    assert target.read_text(encoding="utf-8") == "new"
    assert not list(tmp_path.glob(".*part*"))
