"""The words of a text as the aligner times them (each Chinese character, each run of Latin letters
or digits), and what it says of each; punctuation and control tokens get no time. See
docs/alignment.md.
"""

import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from chattts_studio.core.errors import BadTextError
from chattts_studio.core.messages import QT_TRANSLATE_NOOP

LANGUAGES = ("auto", "en", "zh")
_CONTROL = re.compile(r"\[[^\[\]\s]{0,32}\]")
_CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
# A Chinese character, or letters and digits with apostrophes and inner dots (3.5) inside.
_WORD = re.compile(f"[{_CJK}]|[^\\W_{_CJK}]+(?:['’.,][^\\W_{_CJK}]+)*")


@dataclass(frozen=True)
class Word:
    text: str  # as written in the text
    start: float  # seconds into the audio
    end: float
    estimated: bool = False  # interpolated, not measured
    tail: str = ""  # the punctuation after it in the text, for subtitles

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        out["start"], out["end"] = round(self.start, 3), round(self.end, 3)
        del out["tail"]
        return out


@dataclass(frozen=True)
class Alignment:
    """A text's words in time, the language it was read in and the method that timed it."""

    words: list[Word]
    language: str  # "en" or "zh"
    method: str  # what measured the times that are not estimated
    duration: float  # seconds of audio

    @property
    def estimated(self) -> int:
        return sum(w.estimated for w in self.words)

    def to_json(self) -> dict[str, Any]:
        return {
            "language": self.language,
            "method": self.method,
            "duration": round(self.duration, 3),
            "estimated": self.estimated,
            "words": [w.to_json() for w in self.words],
        }


def is_cjk(word: str) -> bool:
    return len(word) == 1 and bool(re.match(f"[{_CJK}]", word))


def text_words(text: str) -> list[str]:
    """The words of `text` that are spoken, in order; one sentence when there is none."""
    found = _WORD.findall(_CONTROL.sub(" ", text))
    if not found:
        raise BadTextError(
            QT_TRANSLATE_NOOP("core", "The text has no words to align: give the words spoken.")
        )
    return found


def tails(text: str) -> list[str]:
    """The punctuation that follows each spoken word (spaces and control tokens dropped)."""
    cleaned = _CONTROL.sub(" ", text)
    found = list(_WORD.finditer(cleaned))
    ends = [m.start() for m in found[1:]] + [len(cleaned)]
    return ["".join(cleaned[m.end() : stop].split()) for m, stop in zip(found, ends, strict=True)]


def language_of(words: Sequence[str], asked: str = "auto") -> str:
    """The language to align in: the one asked, or Chinese when Chinese characters are at
    least a third of the words (a Chinese text quotes English names and the like)."""
    if asked != "auto":
        return asked
    cjk = sum(is_cjk(w) for w in words)
    return "zh" if cjk * 3 >= len(words) and cjk else "en"
