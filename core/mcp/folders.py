"""The one folder the MCP server writes in, and the folders it may read books from. Every path an
agent names is checked here first: nothing is written outside the output folder, nor read outside
the given folders.
"""

import os
import re
from dataclasses import dataclass
from pathlib import Path

from chattts_studio.core import paths
from chattts_studio.core.errors import StudioError
from chattts_studio.core.render.names import UNSAFE_CHARACTERS, is_reserved_name

DEFAULT_FOLDER = "mcp"  # under the app's data folder
BOOK_SUFFIXES = (".txt", ".md", ".markdown", ".epub")
MOST_PARTS = 4  # folders deep a name may reach inside the output folder
MOST_NAME_BYTES = 200
_DRIVE = re.compile(r"^[A-Za-z]:")


class PathRefused(StudioError):
    """A path an agent named that the server will not write or read; one sentence says why."""


def name_parts(name: str, example: str) -> list[str]:
    """The parts of a name relative to the output folder (either separator), or PathRefused:
    an absolute path, `..`, a hidden name (the render's own `.segments`), characters or names
    Windows refuses, a trailing dot or space (Windows drops them)."""
    if not name.strip():
        raise PathRefused(f"The name is empty; give one such as {example}.")
    if name.startswith(("/", "\\")) or _DRIVE.match(name) or os.path.isabs(name):
        raise PathRefused(
            f"{name!r} is an absolute path; give a name inside the output folder, such as "
            f"{example}."
        )
    parts = [p for p in re.split(r"[\\/]+", name) if p not in ("", ".")]
    if not parts:
        raise PathRefused(f"{name!r} names no file or folder; give one such as {example}.")
    if len(parts) > MOST_PARTS:
        raise PathRefused(f"{name!r} must be a name at most {MOST_PARTS} folders deep.")
    for part in parts:
        if part == "..":
            raise PathRefused(
                f"{name!r} leads out of the output folder ('..'); give a name inside it."
            )
        if part.startswith("."):
            raise PathRefused(f"{name!r} names a hidden file or folder (it starts with a dot).")
        if UNSAFE_CHARACTERS.search(part):
            raise PathRefused(
                f'{name!r} has characters Windows refuses in names (<>:"|?* or control characters).'
            )
        if part != part.rstrip(" ."):
            raise PathRefused(f"{name!r} ends a name in a dot or a space, which Windows drops.")
        if is_reserved_name(part):
            raise PathRefused(
                f"{part!r} is a name Windows reserves for a device (CON, NUL, COM1...); "
                "choose another."
            )
        if len(part.encode("utf-8")) > MOST_NAME_BYTES:
            raise PathRefused(f"A part of {name[:40]!r}… is longer than {MOST_NAME_BYTES} bytes.")
    return parts


def inside(path: Path, root: Path) -> bool:
    return path == root or path.is_relative_to(root)


@dataclass(frozen=True)
class OutputFolder:
    """The folder every file the server writes goes into (its real path: links resolved)."""

    root: Path

    @classmethod
    def open(cls, folder: Path | None = None) -> "OutputFolder":
        """`folder` (default: `mcp` in the app's data folder), made when missing."""
        path = Path(folder) if folder is not None else paths.data_dir() / DEFAULT_FOLDER
        if path.exists() and not path.is_dir():
            raise StudioError(f"The output folder {path} is a file; give a folder.")
        try:
            path.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StudioError(
                f"Cannot make the output folder {path}: {exc.strerror or exc}."
            ) from None
        if not path.is_dir():
            raise StudioError(f"The output folder {path} is not a folder.")
        return cls(Path(os.path.realpath(path)))

    def place(self, name: str, example: str) -> Path:
        """Where `name` lands in the folder, its folders made; PathRefused when it would land
        outside (a link on the way leading out included)."""
        candidate = self.root.joinpath(*name_parts(name, example))
        if not inside(Path(os.path.realpath(candidate)), self.root):
            raise PathRefused(
                f"{name!r} leads out of the output folder through a link; give another name."
            )
        try:
            candidate.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise PathRefused(
                f"Cannot make the folder for {name!r}: {exc.strerror or exc}."
            ) from None
        # A link made meanwhile on the way would show here (made folders are real ones).
        if not inside(Path(os.path.realpath(candidate.parent)), self.root):
            raise PathRefused(
                f"{name!r} leads out of the output folder through a link; give another name."
            )
        return candidate


@dataclass(frozen=True)
class BookFolders:
    """The folders the user allowed books to be read from (`--books`); none by default."""

    roots: tuple[Path, ...] = ()

    @classmethod
    def open(cls, folders: list[Path]) -> "BookFolders":
        for folder in folders:
            if not Path(folder).is_dir():
                raise StudioError(f"The books folder {folder} is not a folder.")
        return cls(tuple(Path(os.path.realpath(f)) for f in folders))

    def book(self, name: str) -> Path:
        """The book file `name` names (relative to a books folder, or a path inside one):
        a .txt, .md or .epub file inside an allowed folder, links resolved; else PathRefused."""
        if not self.roots:
            raise PathRefused(
                "This server reads no book files: pass the text itself, or ask the user to "
                "start it with --books FOLDER to allow the books in FOLDER."
            )
        if "\0" in name or not name.strip():
            raise PathRefused("The book's name is empty or not a file name.")
        given = Path(name)
        candidates = [given] if given.is_absolute() else [r / given for r in self.roots]
        for candidate in candidates:
            real = Path(os.path.realpath(candidate))
            if not any(inside(real, root) for root in self.roots):
                continue
            if not real.is_file():
                continue
            if real.suffix.lower() not in BOOK_SUFFIXES:
                raise PathRefused(f"{name!r} is not a book: give a .txt, .md or .epub file.")
            return real
        folders = ", ".join(str(r) for r in self.roots)
        raise PathRefused(
            f"{name!r} is not a book file inside the allowed books folder(s) ({folders})."
        )
