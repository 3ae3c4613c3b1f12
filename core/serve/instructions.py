"""OpenAI's `instructions` (a free-text style prompt) read for what ChatTTS can honestly do: speed
words, laughing and pauses map to its controls, the rest is ignored. What was done goes back in the
X-Instructions header.
"""

import re
from dataclasses import dataclass, field

from chattts_studio.core.serve.request import speed_token

HEADER = "X-Instructions"
# Speed words as OpenAI's speed multiplier: then the same [speed_N] the speed field gives.
_SPEEDS = (
    (re.compile(r"\b(very|really|extremely)\s+(slow(ly)?|slower)\b"), 0.5),
    (re.compile(r"\b(very|really|extremely)\s+(fast|quick(ly)?|rapid(ly)?|faster)\b"), 2.0),
    (re.compile(r"\b(slow(ly)?|slower|unhurried|leisurely)\b|慢"), 0.7),
    (re.compile(r"\b(fast|quick(ly)?|rapid(ly)?|faster|hurried(ly)?|brisk(ly)?)\b|快速|快点"), 1.4),
    (re.compile(r"\b(normal|regular|natural|moderate)\s+(speed|pace|tempo)\b"), 1.0),
)
_LAUGH = re.compile(r"\blaugh(s|ing|ter)?\b|\bchuckl(e|es|ing)\b|\bgiggl(e|es|ing)\b|笑")
_LOTS = re.compile(r"\b(a lot|lots|much|many|plenty|often|frequent(ly)?)\b")
_PAUSE = re.compile(r"\bpaus(e|es|ing)\b|\bbreaks?\b|停顿")
_NO_PAUSE = re.compile(
    r"\b(no|without|fewer|few|less|don'?t|do not|never)\s+(\w+\s+)?(paus(e|es|ing)|breaks?)\b"
    r"|不要停顿|少停顿"
)
# "don't laugh", "not too fast", "no laughing": a wish against a control is not that control.
_NEGATED = re.compile(r"\b(no|not|without|never|don'?t|do not|stop|avoid)\s+(\w+\s+){0,2}?$")
# What is left once the mapped words are out: anything with letters was a wish we cannot keep.
_WORD = re.compile(r"[^\W\d_]{3,}|[\u4e00-\u9fff]")
_FILLER = frozenset(
    "and the with speak speaking talk talking say read reading voice style please speed pace "
    "tempo some more lot lots much many long longer short shorter don not too no never "
    "without".split()
)


@dataclass(frozen=True)
class Reading:
    """What the instructions change: None where they change nothing."""

    speed: int | None = None  # [speed_N]
    laugh: int | None = None  # refine-text's laugh level
    laugh_token: bool = False  # a [laugh] before the text (refine-text off)
    break_level: int | None = None  # refine-text's break level
    applied: list[str] = field(default_factory=list)
    ignored: list[str] = field(default_factory=list)

    def header(self) -> str:
        """The X-Instructions value: ASCII only, never the client's own words echoed."""
        parts = []
        if self.applied:
            parts.append("applied " + ", ".join(self.applied))
        if self.ignored:
            parts.append("ignored: " + "; ".join(self.ignored))
        return "; ".join(parts) or "ignored: nothing in them maps to a ChatTTS control"


def read_instructions(
    text: str, refine_text: bool, speed_set: bool, levels_set: frozenset[str] = frozenset()
) -> Reading:
    """The instructions mapped onto ChatTTS's controls. A field the body sets itself wins over
    the instructions (`speed_set`, `levels_set` names the refine levels it set)."""
    said = " ".join(text.lower().split())
    rest = said
    applied: list[str] = []
    ignored: list[str] = []
    speed: int | None = None
    laugh: int | None = None
    laugh_token = False
    break_level: int | None = None

    for pattern, multiplier in _SPEEDS:
        found = pattern.search(said)
        if found:
            rest = pattern.sub(" ", rest)
            if _negated(said, found.start()):
                ignored.append("speed words said in the negative")
            elif speed_set:
                ignored.append("speed words (the speed field is set)")
            else:
                speed = speed_token(multiplier)
                applied.append(f"speed={speed}")
            break
    laughing = _LAUGH.search(said)
    if laughing:
        rest = _LOTS.sub(" ", _LAUGH.sub(" ", rest))
        if _negated(said, laughing.start()):
            ignored.append("laughing said in the negative")
        elif "laugh" in levels_set:
            ignored.append("laughing (the laugh field is set)")
        elif refine_text:
            # "laugh a lot", "laugh often": the words right after it, not "much" anywhere.
            laugh = 2 if _LOTS.search(said[laughing.end() : laughing.end() + 16]) else 1
            applied.append(f"laugh={laugh}")
        else:
            laugh_token = True
            applied.append("laugh=[laugh]")
    if _PAUSE.search(said):
        fewer = bool(_NO_PAUSE.search(said))
        rest = _PAUSE.sub(" ", _NO_PAUSE.sub(" ", rest))
        if "break" in levels_set:
            ignored.append("pauses (the break field is set)")
        elif not refine_text:
            ignored.append("pauses (they need refine_text: true)")
        else:
            break_level = 0 if fewer else 7
            applied.append(f"break={break_level}")
    left = [w for w in _WORD.findall(rest) if w not in _FILLER]
    if left:
        ignored.append("the rest (ChatTTS has no control for tone, emotion or accent)")
    return Reading(speed, laugh, laugh_token, break_level, applied, ignored)


def _negated(said: str, at: int) -> bool:
    """Whether the words just before `at` say no to what follows ("don't", "not too")."""
    before = said[max(0, at - 40) : at]
    return bool(_NEGATED.search(before)) or any(c in "不别" for c in before[-2:])
