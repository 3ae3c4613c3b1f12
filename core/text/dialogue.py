"""Dialogue scripts: several library speakers in one job, one `Name: text` turn a line, planned as
one job (core/engine/script_plan.py) and joined in script order. The format: docs/voices.md.
"""

import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TypeVar

from chattts_studio.core.errors import StudioError
from chattts_studio.core.messages import QT_TRANSLATE_NOOP, Sentence, cannot_read, not_text
from chattts_studio.core.text.prepare import clean

V = TypeVar("V")  # what the library holds for a name (a Voice)
MAX_SCRIPT_BYTES = 4 << 20
_TURN = re.compile(r"(?P<name>[^:：]{1,100}?)\s*[:：](?P<text>.*)")


class ScriptError(StudioError):
    """A dialogue script cannot be used; the sentence names the line."""


@dataclass(frozen=True)
class Turn:
    line: int  # 1-based line number where the turn starts
    name: str
    text: str


def parse_script(text: str) -> list[Turn]:
    """The script's turns in order; ScriptError naming the line for anything malformed."""
    turns: list[Turn] = []
    for number, raw in enumerate(clean(text).split("\n"), 1):
        stripped = raw.strip()
        if not stripped or stripped.startswith("#"):
            continue
        if raw[0] in " \t\u3000":
            if not turns:
                raise ScriptError(
                    Sentence(
                        QT_TRANSLATE_NOOP(
                            "core",
                            "Line {number} is indented, which continues a turn, but no turn "
                            "starts before it; start it with 'Name: text'.",
                        ),
                        number=number,
                    )
                )
            last = turns[-1]
            turns[-1] = replace(last, text=f"{last.text} {stripped}".strip())
            continue
        match = _TURN.fullmatch(stripped)
        if match is None or not match.group("name").strip():
            raise ScriptError(
                Sentence(
                    QT_TRANSLATE_NOOP(
                        "core",
                        "Line {number} does not start with a speaker's name and a colon "
                        "('Name: text'); indent it to continue the turn above.",
                    ),
                    number=number,
                )
            )
        turns.append(Turn(number, match.group("name").strip(), match.group("text").strip()))
    if not turns:
        raise ScriptError(
            QT_TRANSLATE_NOOP("core", "The script has no lines to speak ('Name: text').")
        )
    return turns


def read_script(path: Path) -> list[Turn]:
    path = Path(path)
    try:
        if path.stat().st_size > MAX_SCRIPT_BYTES:
            raise ScriptError(
                Sentence(
                    QT_TRANSLATE_NOOP("core", "{path} is too large to be a dialogue script."),
                    path=str(path),
                )
            )
        return parse_script(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ScriptError(cannot_read(path, exc)) from None
    except UnicodeDecodeError:
        raise ScriptError(not_text(path)) from None


def voices_for(turns: list[Turn], library: Mapping[str, V]) -> dict[str, V]:
    """Each speaker's voice; ScriptError at the first line whose name the library lacks."""
    for turn in turns:
        if turn.name not in library:
            known = ", ".join(sorted(library)[:10]) or Sentence(
                QT_TRANSLATE_NOOP("core", "none yet")
            )
            raise ScriptError(
                Sentence(
                    QT_TRANSLATE_NOOP(
                        "core",
                        "Line {line}: there is no speaker named '{name}' in the library "
                        "(speakers: {known}).",
                    ),
                    line=turn.line,
                    name=turn.name,
                    known=known,
                )
            )
    return {turn.name: library[turn.name] for turn in turns}
