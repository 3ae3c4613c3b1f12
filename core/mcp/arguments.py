"""A tool call's arguments read by hand against their type and range, so a wrong one is one
sentence naming it, and an argument a tool does not take is refused rather than ignored.
"""

import math
from collections.abc import Mapping, Sequence
from typing import Any

from chattts_studio.core.errors import StudioError

MOST_NAME_CHARS = 1000  # a speaker's, a file's or a folder's name


class BadArgument(StudioError):
    """A tool argument of the wrong type or out of its range (one sentence)."""


class Arguments:
    """One call's arguments; each reader checks one of them and gives its value."""

    def __init__(self, tool: str, given: Mapping[str, Any] | None, known: Sequence[str]) -> None:
        self.tool = tool
        self.given = dict(given or {})
        unknown = sorted(set(self.given) - set(known))
        if unknown:
            takes = ", ".join(known) if known else "no arguments"
            raise BadArgument(f"{tool} has no argument {unknown[0]!r}; it takes {takes}.")

    def present(self, name: str) -> bool:
        return self.given.get(name) is not None

    def text(self, name: str, limit: int, longer: str = "") -> str | None:
        """A text of at most `limit` characters; `longer` says where a longer one goes."""
        value = self.given.get(name)
        if value is None:
            return None
        if not isinstance(value, str):
            raise BadArgument(f"The {name} must be a string.")
        if len(value) > limit:
            raise BadArgument(
                f"The {name} has {len(value):,} characters; the limit is {limit:,}{longer}."
            )
        return value

    def name(self, name: str) -> str | None:
        """A short name (a speaker, a file, a folder): a string of at most 1000 characters."""
        value = self.given.get(name)
        if value is None:
            return None
        if not isinstance(value, str) or len(value) > MOST_NAME_CHARS:
            raise BadArgument(
                f"The {name} must be a string of at most {MOST_NAME_CHARS} characters."
            )
        return value

    def whole(self, name: str, low: int, high: int, default: int) -> int:
        value = self.given.get(name)
        if value is None:
            return default
        if isinstance(value, float) and value.is_integer():
            value = int(value)  # JSON has one number type: 5.0 is 5
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise BadArgument(f"The {name} must be a whole number from {low} to {high}.")
        return value

    def number(self, name: str, low: float, high: float, default: float) -> float:
        value = self.given.get(name)
        if value is None:
            return default
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not math.isfinite(value)
            or not low <= value <= high
        ):
            raise BadArgument(f"The {name} must be a number from {low:g} to {high:g}.")
        return float(value)

    def flag(self, name: str, default: bool) -> bool:
        value = self.given.get(name)
        if value is None:
            return default
        if not isinstance(value, bool):
            raise BadArgument(f"The {name} must be true or false.")
        return value

    def choice(self, name: str, choices: Sequence[str], default: str | None) -> str | None:
        value = self.given.get(name)
        if value is None:
            return default
        if not isinstance(value, str) or value not in choices:
            raise BadArgument(f"The {name} must be one of {', '.join(choices)}.")
        return value
