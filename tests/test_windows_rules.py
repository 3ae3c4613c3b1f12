"""The Windows file rules the file tests run under (tests/windows_rules.py): a file this process
holds open or mapped cannot be deleted, renamed or replaced, nor can the folder it is in, and
nothing is refused once it is let go."""

import errno
import os
import shutil
from pathlib import Path

import numpy as np
import pytest
from windows_rules import ERROR_SHARING_VIOLATION, IN_USE, WindowsRules


def in_use(exc: pytest.ExceptionInfo[OSError]) -> None:
    """What Windows raises for a sharing violation."""
    assert isinstance(exc.value, PermissionError) and exc.value.errno == errno.EACCES
    assert exc.value.winerror == ERROR_SHARING_VIOLATION  # type: ignore[attr-defined]
    assert exc.value.strerror == IN_USE


def test_an_open_file_cannot_be_deleted_renamed_or_replaced(
    tmp_path: Path, windows_rules: WindowsRules
) -> None:
    path = tmp_path / "open.txt"
    path.write_text("held")
    other = tmp_path / "other.txt"
    other.write_text("new")
    with open(path, "rb"):
        for remove in (os.remove, os.unlink, Path.unlink):
            with pytest.raises(PermissionError) as exc:
                remove(path)
            in_use(exc)
        with pytest.raises(PermissionError) as exc:
            os.replace(other, path)  # the target is held
        in_use(exc)
        with pytest.raises(PermissionError):
            path.rename(tmp_path / "moved.txt")  # the source is held
        with pytest.raises(PermissionError):
            Path(other).replace(path)
    assert path.read_text() == "held" and other.read_text() == "new"
    assert [function for function, _ in windows_rules.refused] == [
        "remove", "unlink", "unlink", "replace", "rename", "replace",
    ]  # fmt: skip
    assert {held for _, held in windows_rules.refused} == {str(path)}
    # Closed: everything is allowed again.
    os.replace(other, path)
    assert path.read_text() == "new"
    path.unlink()
    assert not path.exists()


def test_a_mapped_file_is_held_until_the_last_view_goes(
    tmp_path: Path, windows_rules: WindowsRules
) -> None:
    path = tmp_path / "audio.f32"
    np.arange(1000, dtype=np.float32).tofile(path)
    mapped = np.memmap(path, dtype=np.float32, mode="r")
    view = mapped[10:20]  # a slice keeps the mapping too
    del mapped
    with pytest.raises(PermissionError) as exc:
        path.unlink()
    in_use(exc)
    assert float(view[0]) == 10.0
    del view
    path.unlink()
    assert not path.exists()


def test_a_folder_with_a_held_file_stays(tmp_path: Path, windows_rules: WindowsRules) -> None:
    folder = tmp_path / "result"
    (folder / "inner").mkdir(parents=True)
    (folder / "meta.json").write_text("{}")
    held = folder / "inner" / "audio.f32"
    held.write_bytes(b"\0" * 64)
    with open(held, "rb"):
        with pytest.raises(PermissionError):
            shutil.rmtree(folder)  # its dir_fd-relative unlink is refused
        shutil.rmtree(folder, ignore_errors=True)  # the rest goes, as on Windows
        assert [p.relative_to(folder) for p in folder.rglob("*")] == [
            Path("inner"),
            Path("inner/audio.f32"),
        ]
        with pytest.raises(PermissionError):
            folder.rename(tmp_path / "moved")  # a folder with a held file in it
        descriptor = os.open(folder / "inner", os.O_RDONLY)
    try:
        held.unlink()  # closed now
        with pytest.raises(PermissionError):
            (folder / "inner").rmdir()  # the folder itself is held open
        name = "inner"
        parent = os.open(folder, os.O_RDONLY)
        try:
            with pytest.raises(PermissionError):
                os.rmdir(name, dir_fd=parent)
        finally:
            os.close(parent)
    finally:
        os.close(descriptor)
    shutil.rmtree(folder)
    assert not folder.exists()


def test_a_held_file_is_found_through_a_linked_folder_and_a_folder_descriptor(
    tmp_path: Path, windows_rules: WindowsRules
) -> None:
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "link").symlink_to(real)
    path = real / "model.safetensors"
    path.write_bytes(b"x" * 4096)
    folder = os.open(real, os.O_RDONLY)
    try:
        with open(tmp_path / "link" / "model.safetensors", "rb"):
            with pytest.raises(PermissionError):
                os.unlink("model.safetensors", dir_fd=folder)
            with pytest.raises(PermissionError):
                os.remove(tmp_path / "link" / "model.safetensors")
        os.unlink("model.safetensors", dir_fd=folder)
    finally:
        os.close(folder)
    assert not path.exists()


def test_windows_renames_refuse_an_existing_name_and_a_folder_target(
    tmp_path: Path, windows_rules: WindowsRules
) -> None:
    src, dst = tmp_path / "a.txt", tmp_path / "b.txt"
    src.write_text("a")
    dst.write_text("b")
    with pytest.raises(FileExistsError):
        os.rename(src, dst)  # Windows' rename never replaces
    folder = tmp_path / "folder"
    folder.mkdir()
    with pytest.raises(PermissionError):
        os.replace(src, folder)  # nor does replace, onto a folder (even an empty one)
    building = tmp_path / "building"
    building.mkdir()
    with pytest.raises(PermissionError):
        os.replace(building, folder)
    os.replace(src, dst)  # a file onto a file that nobody holds: allowed
    os.rename(building, tmp_path / "built")
    assert dst.read_text() == "a" and (tmp_path / "built").is_dir()
    assert windows_rules.refused == []  # none of these was about a file in use


def test_without_the_fixture_linux_allows_it(tmp_path: Path) -> None:
    """The rules are the fixture's, not the system's: the same delete passes without it."""
    path = tmp_path / "open.txt"
    path.write_text("held")
    with open(path, "rb"):
        path.unlink()
    assert not path.exists()
