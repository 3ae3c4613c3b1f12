"""Windows' rules for files in use, kept on Linux for tests (docs/development.md, "Checking on
Windows and macOS").

Windows refuses to delete, rename or replace a file that a process holds open or mapped into
memory (np.memmap, safetensors, ONNX Runtime), to rename or remove a folder while a file in it
is held, to rename onto an existing name (os.rename), and to replace a folder (os.replace onto
one). Linux allows all of these, so code that breaks on Windows passes here unless a test holds
Linux to the same rules: `WindowsRules.install` wraps os.remove, os.unlink, os.rmdir,
os.rename and os.replace (which shutil.rmtree, shutil.move, tempfile and pathlib's Path
methods call) so that they raise what Windows raises. What this process holds is read from
/proc/self/fd (open files and folders), /proc/self/maps (mapped files) and /proc/self/cwd;
what other processes hold is not seen.
"""

import errno
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

# Windows' own words and codes (what a PermissionError's winerror holds there).
IN_USE = "The process cannot access the file because it is being used by another process"
ACCESS_DENIED = "Access is denied"
ALREADY_EXISTS = "Cannot create a file when that file already exists"
ERROR_SHARING_VIOLATION = 32
ERROR_ACCESS_DENIED = 5
ERROR_ALREADY_EXISTS = 183


def _windows_error(
    kind: type[OSError], code: int, text: str, winerror: int, *names: str
) -> OSError:
    exc = kind(code, text, *names)
    exc.winerror = winerror  # type: ignore[attr-defined]  # as Windows sets it
    return exc


def held_paths() -> set[str]:
    """Every file and folder this process holds now: its open descriptors' targets, the
    files mapped into its memory and its current folder (resolved absolute paths)."""
    return open_paths() | mapped_paths()


def open_paths() -> set[str]:
    """The files and folders this process has open, and its current folder."""
    held = {os.getcwd()}
    fds = "/proc/self/fd"
    for name in os.listdir(fds):
        try:
            target = os.readlink(f"{fds}/{name}")
        except OSError:  # the descriptor listdir itself used, closed since
            continue
        if target.startswith("/") and not target.startswith("/proc/"):
            held.add(target.removesuffix(" (deleted)"))
    return held


def mapped_paths() -> set[str]:
    """The files mapped into this process's memory."""
    held = set()
    with open("/proc/self/maps", encoding="utf-8", errors="surrogateescape") as maps:
        for line in maps:
            fields = line.rstrip("\n").split(maxsplit=5)
            if len(fields) == 6 and fields[5].startswith("/"):
                held.add(fields[5].removesuffix(" (deleted)"))
    return held


def where(path: Any, dir_fd: int | None = None) -> str:
    """`path` as /proc names it: absolute, its folder's links resolved (not the last part: a
    link is removed or renamed itself), relative to `dir_fd` when given (shutil.rmtree)."""
    text = os.fsdecode(path)
    if dir_fd is not None and not os.path.isabs(text):
        text = os.path.join(os.readlink(f"/proc/self/fd/{dir_fd}"), text)
    head, tail = os.path.split(os.path.abspath(text))
    return os.path.join(os.path.realpath(head), tail)


def holding(path: str, held: set[str]) -> str | None:
    """The held path that keeps `path` from being removed or renamed: itself, or (a folder)
    anything under it; None when nothing does."""
    if path in held:
        return path
    inside = path.rstrip("/") + "/"
    return next((h for h in sorted(held) if h.startswith(inside)), None)


@dataclass
class WindowsRules:
    """The wrapped os functions. `refused` lists each refusal as (function, path held) for a
    test to check that the rule was met, not merely that nothing failed."""

    refused: list[tuple[str, str]] = field(default_factory=list)
    real: dict[str, Any] = field(default_factory=dict)

    def install(self, monkeypatch: pytest.MonkeyPatch) -> "WindowsRules":
        for name in ("remove", "unlink", "rmdir", "rename", "replace"):
            self.real[name] = getattr(os, name)
        monkeypatch.setattr(os, "remove", self._removal("remove"))
        monkeypatch.setattr(os, "unlink", self._removal("unlink"))
        monkeypatch.setattr(os, "rmdir", self._removal("rmdir"))
        monkeypatch.setattr(os, "rename", self._move("rename"))
        monkeypatch.setattr(os, "replace", self._move("replace"))
        return self

    def _refuse(self, function: str, path: str, culprit: str, *names: str) -> OSError:
        """A sharing violation (32) for a file held open; access denied (5) for one only
        mapped into memory, as Windows answers a delete or rename of a mapped file."""
        self.refused.append((function, culprit))
        if holding(path, open_paths()) is None:
            return _windows_error(
                PermissionError, errno.EACCES, ACCESS_DENIED, ERROR_ACCESS_DENIED, *names
            )
        return _windows_error(
            PermissionError, errno.EACCES, IN_USE, ERROR_SHARING_VIOLATION, *names
        )

    def _removal(self, function: str) -> Any:
        real = self.real[function]

        def removal(path: Any, *, dir_fd: int | None = None) -> None:
            target = where(path, dir_fd)
            culprit = holding(target, held_paths())
            if culprit is not None:
                raise self._refuse(function, target, culprit, os.fsdecode(path))
            real(path, dir_fd=dir_fd)

        removal.__name__ = function
        return removal

    def _move(self, function: str) -> Any:
        real = self.real[function]

        def move(
            src: Any, dst: Any, *, src_dir_fd: int | None = None, dst_dir_fd: int | None = None
        ) -> None:
            source, target = where(src, src_dir_fd), where(dst, dst_dir_fd)
            names = (os.fsdecode(src), os.fsdecode(dst))
            held = held_paths()
            for path in (source, target):
                culprit = holding(path, held)
                if culprit is not None:
                    raise self._refuse(function, path, culprit, *names)
            if function == "rename" and os.path.lexists(target) and source != target:
                raise _windows_error(
                    FileExistsError, errno.EEXIST, ALREADY_EXISTS, ERROR_ALREADY_EXISTS, *names
                )
            if os.path.isdir(target) and not os.path.islink(target) and source != target:
                # MoveFileEx replaces files only: onto a folder, even an empty one, it fails.
                raise _windows_error(
                    PermissionError, errno.EACCES, ACCESS_DENIED, ERROR_ACCESS_DENIED, *names
                )
            real(src, dst, src_dir_fd=src_dir_fd, dst_dir_fd=dst_dir_fd)

        move.__name__ = function
        return move


@pytest.fixture
def windows_rules(monkeypatch: pytest.MonkeyPatch) -> Iterator[WindowsRules]:
    """os's removals and renames refuse, as Windows does, what this process holds open or
    mapped (see WindowsRules)."""
    yield WindowsRules().install(monkeypatch)


@pytest.fixture
def posix_file_rules() -> None:
    """Asked for by a test of something only POSIX allows (a file replaced while it is
    read): the folders that run under Windows' rules leave that test to POSIX's."""
