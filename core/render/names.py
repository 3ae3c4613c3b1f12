"""File and folder names made from what a person typed (a book's or chapter's title). The names
Windows refuses (device names, reserved characters, trailing dots and spaces) are refused on every
system, so books move between systems.
"""

import re

UNSAFE_CHARACTERS = re.compile(r'[\\/:*?"<>|\x00-\x1f]+')
_DEVICES = {"con", "prn", "aux", "nul", "conin$", "conout$"}
RESERVED_STEMS = frozenset(
    _DEVICES | {f"{port}{digit}" for port in ("com", "lpt") for digit in "0123456789¹²³"}
)


def is_reserved_name(name: str) -> bool:
    """Whether `name` (a file or folder name, not a path) is one of Windows' device names,
    alone or with an extension."""
    stem = name.split(".", 1)[0].rstrip(" ").lower()
    return stem in RESERVED_STEMS


def safe_name(title: str, fallback: str, limit: int = 60) -> str:
    """A file or folder name for `title` that every system accepts: unsafe characters as
    spaces, spaces collapsed, at most `limit` characters, no dot or space at either end,
    `fallback` when nothing is left, and a device name kept apart by "_" ("CON" -> "CON_",
    "aux.txt" -> "aux_.txt")."""
    name = " ".join(UNSAFE_CHARACTERS.sub(" ", title).split())[:limit].strip(" .")
    if not name:
        return fallback
    if is_reserved_name(name):
        stem = name.split(".", 1)[0].rstrip(" ")
        name = f"{stem}_{name[len(stem) :]}"
    return name
