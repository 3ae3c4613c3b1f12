"""Values read from a project's files with their type and limit checked. A damaged or hostile
file (a number too large, NaN, text where a number goes, nesting 100,000 deep, a lone
surrogate that no UTF-8 file can hold) is a ValueError with a short reason, which store.py says
in one sentence; never a value that fails later, in an export, a playback or a re-roll after
the model has loaded. The limits are documented in docs/projects.md.
"""

import math
from collections.abc import Mapping
from typing import Any

MAX_ID = 999_999_999  # segment and take ids (file names: 5 and 3 digits, growing past them)
MAX_PAUSE_S = 60.0  # seconds of silence before a segment, and the project's pause
MAX_TEXT = 100_000  # characters of a segment's text, and of a take's copies of it
MAX_NAME = 4_096  # characters of a title, speaker, model name or folder, device, take's file
MAX_VOICE = 10_000_000  # characters of a voice's embedding, cloned sample or transcript
MAX_SEGMENTS = 100_000
MAX_SEGMENT_TAKES = 10_000  # takes of one segment
MAX_STEPS = 100_000  # a take's steps and step cap (today's cap is 2,048)
MAX_ROWS = 4_096  # the row count a take was decoded at
MAX_TAKE_SECONDS = 600.0  # a take's length (today's longest is under 45 s)
MAX_COMPUTE_SECONDS = 1e7
MAX_LOUDNESS_DB = 1_000.0  # a take's measured loudness, either side of 0 dB
MAX_WORDS = MAX_TEXT  # a take's timed words (a word is a character at the least)
MAX_DEPTH = 32  # nesting of a value a newer version wrote, kept without being understood
MAX_PROJECT_BYTES = 1 << 30  # project.json (a 1,000-segment project's is 3.7 MB)
MAX_RECORD_BYTES = 16 << 20  # one take's record (a few kB)
# The generation settings' ranges: the window's (gui/panels/controls.py) and synth's
# (core/engine/request.py).
SETTING_RANGES: dict[str, tuple[float, float]] = {
    "temperature": (0.01, 2.0),
    "top_p": (0.01, 1.0),
    "top_k": (1, 100),
    "speed": (0, 9),
}

_MISSING = object()


def shown(value: Any, limit: int = 40) -> str:
    """A value as a reason quotes it: repr (one line, whatever it holds), cut short."""
    try:
        said = repr(value)
    except (RecursionError, ValueError):  # a repr too deep, an int too long to print
        said = f"<{type(value).__name__}>"
    return said if len(said) <= limit else said[: limit - 3] + "..."


def _get(data: Mapping[str, Any], key: str, where: str, default: Any) -> Any:
    value = data.get(key, default)
    if value is _MISSING:
        raise ValueError(f"{where}{key} is missing")
    return value


def whole(
    data: Mapping[str, Any], key: str, low: int, high: int, where: str = "", default: Any = _MISSING
) -> int:
    """data[key], a whole number from `low` to `high` (JSON's integers only: not 2.0, not true)."""
    value = _get(data, key, where, default)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{where}{key} is not a whole number ({shown(value)})")
    if not low <= value <= high:
        raise ValueError(f"{where}{key} is {shown(value)}, not from {low} to {high}")
    return value


def number(
    data: Mapping[str, Any],
    key: str,
    low: float,
    high: float,
    where: str = "",
    default: Any = _MISSING,
) -> float:
    """data[key], a finite number from `low` to `high` (an integer is one too)."""
    value = _get(data, key, where, default)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"{where}{key} is not a number ({shown(value)})")
    # Compared before float(): an integer of 400 digits has no float.
    if (isinstance(value, float) and not math.isfinite(value)) or not low <= value <= high:
        raise ValueError(f"{where}{key} is {shown(value)}, not from {low:g} to {high:g}")
    return float(value)


def text(
    data: Mapping[str, Any], key: str, limit: int, where: str = "", default: Any = _MISSING
) -> str:
    """data[key], a string of at most `limit` characters that UTF-8 can store."""
    value = _get(data, key, where, default)
    return checked_text(value, limit, f"{where}{key}")


def checked_text(value: Any, limit: int, what: str) -> str:
    if not isinstance(value, str):
        raise ValueError(f"{what} is not text ({shown(value)})")
    if len(value) > limit:
        raise ValueError(f"{what} is longer than {limit:,} characters")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate ("\ud800"): JSON reads it, no file holds it
        raise ValueError(f"{what} has a character no file can hold") from None
    return value


def flag(data: Mapping[str, Any], key: str, where: str = "", default: Any = _MISSING) -> bool:
    """data[key], true or false (not 1, not "yes")."""
    value = _get(data, key, where, default)
    if not isinstance(value, bool):
        raise ValueError(f"{where}{key} is not true or false ({shown(value)})")
    return value


def mapping(value: Any, what: str, known: tuple[str, ...] | None = None) -> dict[str, Any]:
    """`value`, a JSON object; with `known`, one that has no other keys."""
    if not isinstance(value, dict):
        raise ValueError(f"{what} is not an object ({shown(value)})")
    if known is not None:
        other = [k for k in value if k not in known]
        if other:
            raise ValueError(f"{what} has an unknown key {shown(other[0])}")
    return value


def listed(value: Any, limit: int, what: str) -> list[Any]:
    """`value`, a JSON array of at most `limit` items."""
    if not isinstance(value, list):
        raise ValueError(f"{what} is not a list ({shown(value)})")
    if len(value) > limit:
        raise ValueError(f"{what} has more than {limit:,} items")
    return value


def kept(value: Any, what: str) -> Any:
    """A value this version does not understand but writes back (a newer minor version's
    key): refused when nested deeper than MAX_DEPTH (writing it back would overflow the
    stack) or holding text no file can hold. Walked without recursion."""
    todo = [(value, 1)]
    while todo:
        item, depth = todo.pop()
        if depth > MAX_DEPTH:
            raise ValueError(f"{what} is nested deeper than {MAX_DEPTH} levels")
        if isinstance(item, str):
            checked_text(item, MAX_VOICE, what)
        elif isinstance(item, dict):
            for key, inner in item.items():
                checked_text(key, MAX_NAME, what)
                todo.append((inner, depth + 1))
        elif isinstance(item, list):
            todo.extend((inner, depth + 1) for inner in item)
    return value
