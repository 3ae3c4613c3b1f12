"""A synthesized result's words in time and in its text: each word's seconds in the audio and its
characters in the text, so a view can mark the word being spoken and play from a word.
"""

import bisect
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from chattts_studio.core.align.words import Word, language_of, text_words
from chattts_studio.core.errors import StudioError

# ChatTTS's control tokens, as the aligner drops them (words.py): never searched for words.
CONTROL = re.compile(r"\[[^\[\]\s]{0,32}\]")
# How far past the last word found a word is looked for: a word the text does not have as
# written (a dictionary entry's reading) is skipped, not matched paragraphs later.
LOOKAHEAD = 200
# Between words, the one before stays shown for this long after its end (a short pause reads
# as part of it); in a longer pause no word is shown.
HOLD_SECONDS = 0.4


@dataclass(frozen=True)
class WordSpan:
    """A word's time in the audio and its characters in the text (`first` to `last`,
    exclusive)."""

    start: float  # seconds
    end: float
    first: int
    last: int
    estimated: bool = False  # interpolated, not measured


def word_spans(text: str, words: Sequence[Word]) -> list[WordSpan]:
    """Each of `words` (in spoken order) found in `text` after the one before; a word not
    found nearby gets no span."""
    searched = CONTROL.sub(lambda m: " " * len(m.group()), text)
    spans, cursor = [], 0
    for word in words:
        found = searched.find(word.text, cursor, cursor + LOOKAHEAD + len(word.text))
        if found < 0:
            continue
        cursor = found + len(word.text)
        spans.append(WordSpan(word.start, word.end, found, cursor, word.estimated))
    return spans


def spoken_at(spans: Sequence[WordSpan], seconds: float) -> int | None:
    """The index of the word being spoken at `seconds`, or None (before the first, in a
    pause longer than the hold, after the last)."""
    starts = [s.start for s in spans]
    at = bisect.bisect_right(starts, seconds) - 1
    if at < 0:
        return None
    if seconds < max(spans[at].end, spans[at].start) + HOLD_SECONDS:
        return at
    return None


def word_at(spans: Sequence[WordSpan], position: int) -> int | None:
    """The index of the word whose characters hold `position` (a cursor just after a word's
    last character is in it too), or None."""
    for index, span in enumerate(spans):
        if span.first <= position <= span.last:
            return index
        if span.first > position:
            break
    return None


def chinese_recognizer(text: str) -> Any:
    """What times a Chinese text's words: the official recogniser when it is downloaded, else
    None (every Chinese word estimated), as `synth --word-timing` chooses."""
    try:
        chinese = language_of(text_words(text)) == "zh"
    except StudioError:
        return None
    from chattts_studio.core.asr import models

    if not chinese or not models.official_present():
        return None
    from chattts_studio.core.asr.sensevoice import SenseVoice

    return SenseVoice(models.official_folder())


def result_spans(
    text: str, segments: Sequence[tuple[str, np.ndarray, int]], rate: int
) -> list[WordSpan]:
    """The words of a result made a segment at a time (each segment's text, its audio and its
    first sample in the result), timed and placed in `text`, the text that was synthesized."""
    # Imported here: a window imports this module before its first paint, the aligner later.
    from chattts_studio.core.align.sphinx import EnglishAligner
    from chattts_studio.core.align.timeline import WordTimeline

    recognizer = chinese_recognizer(text)
    if language_of(text_words(text)) == "en":
        EnglishAligner.check()  # one sentence, not an import error in the first segment
    timeline = WordTimeline(rate, recognizer)
    for said, audio, first in segments:
        timeline.add(np.asarray(audio, dtype=np.float32), said, first)
    return word_spans(text, timeline.words)
