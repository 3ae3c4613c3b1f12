"""A text aligned to its audio: each word timed by its language's method (sphinx.py for English,
recognised.py for Chinese), the rest estimated. Silence, or a text the audio does not say, is
refused in one sentence.
"""

from dataclasses import replace
from pathlib import Path

import numpy as np

from chattts_studio.core.align.estimate import interpolated, speech_span
from chattts_studio.core.align.recognised import TimedRecognizer, recognised_times
from chattts_studio.core.align.sphinx import EnglishAligner
from chattts_studio.core.align.words import Alignment, language_of, tails, text_words
from chattts_studio.core.errors import StudioError
from chattts_studio.core.messages import QT_TRANSLATE_NOOP, Sentence

ESTIMATED_ONLY = "estimated from the length of each word"
# A take with at least this many words of which more than this share was squeezed out does not
# say its text: refusing it beats timing a few words well and the rest by guess.
LEAST_WORDS_TO_JUDGE, MOST_ESTIMATED = 4, 0.5


class AlignmentError(StudioError):
    """The audio cannot be aligned with the text (silence, another text)."""


def read_audio(path: Path) -> tuple[np.ndarray, int]:
    """A file's audio as mono float32 (channels averaged) and its rate; one sentence when it
    cannot be read."""
    import soundfile

    path = Path(path)
    try:
        audio, rate = soundfile.read(str(path), dtype="float32", always_2d=True)
    except (OSError, RuntimeError, ValueError, soundfile.LibsndfileError) as exc:
        reason = str(exc).strip() or type(exc).__name__
        if not path.exists():
            reason = QT_TRANSLATE_NOOP("core", "there is no such file")
        raise AlignmentError(
            Sentence(
                QT_TRANSLATE_NOOP("core", "{path} cannot be read as audio: {reason}."),
                path=str(path),
                reason=reason,
            )
        ) from None
    return np.asarray(audio.mean(axis=1), dtype=np.float32), int(rate)


def align(
    audio: np.ndarray,
    rate: int,
    text: str,
    language: str = "auto",
    recognizer: TimedRecognizer | None = None,
    english: EnglishAligner | None = None,
) -> Alignment:
    """`text`'s words timed in `audio` (mono or channels last, any rate). `recognizer` times
    Chinese; without one Chinese words are all estimated."""
    words = text_words(text)
    chosen = language_of(words, language)
    audio = np.asarray(audio, dtype=np.float32)
    if audio.ndim == 2:
        audio = audio.mean(axis=1)
    duration = len(audio) / rate if rate > 0 else 0.0
    span = speech_span(audio, rate)
    if span is None:
        raise AlignmentError(
            QT_TRANSLATE_NOOP("core", "The audio is silent: there is no speech to align.")
        )
    if chosen == "en":
        aligner = english or EnglishAligner()
        times = aligner.times(audio, rate, words)
        method = aligner.method
        if times is None or _mostly_unplaced(times, aligner.last_unknown):
            raise AlignmentError(
                QT_TRANSLATE_NOOP(
                    "core",
                    "The audio does not say the text (or not clearly enough to align): "
                    "check that the text is what is spoken.",
                )
            )
    elif recognizer is not None:
        times = recognised_times(recognizer, audio, rate, words, chosen, span[1])
        method = f"{recognizer.name} token times"
    else:
        times, method = [None] * len(words), ESTIMATED_ONLY
    timed = interpolated(words, times, span)
    shown = [replace(w, tail=tail) for w, tail in zip(timed, tails(text), strict=True)]
    return Alignment(shown, chosen, method, duration)


def _mostly_unplaced(times: list[tuple[float, float] | None], unknown: int) -> bool:
    """Whether most of the words the dictionary knows were squeezed out (the unknown ones are
    estimated whatever the audio says)."""
    known = len(times) - unknown
    unplaced = sum(t is None for t in times) - unknown
    return known >= LEAST_WORDS_TO_JUDGE and unplaced > MOST_ESTIMATED * known
