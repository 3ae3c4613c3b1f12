"""Times for the words no pass could measure: interpolated between measured words or the speech's
ends, each word's share of the gap by its expected length. Also where speech is at all, by its
loudness.
"""

from collections.abc import Sequence

import numpy as np

from chattts_studio.core.align.words import Word
from chattts_studio.core.text.prepare import estimate_seconds

FRAME_SECONDS = 0.01
SILENT_DBFS = -50.0  # no 10 ms frame louder than this: silence (a 16-bit file's hiss is ~-90)
SPEECH_BELOW_PEAK_DB = 35.0  # a frame this far under the loudest is a pause
SHORTEST_WORD = 0.05  # seconds any word is given in an estimate's share


def frame_levels(audio: np.ndarray, rate: int) -> np.ndarray:
    """Each 10 ms frame's RMS level in dBFS."""
    size = max(1, round(rate * FRAME_SECONDS))
    count = len(audio) // size
    if count == 0:
        return np.full(1, -120.0)
    frames = np.asarray(audio[: count * size], dtype=np.float64).reshape(count, size)
    rms = np.sqrt(np.mean(frames**2, axis=1))
    return np.asarray(20 * np.log10(np.maximum(rms, 1e-6)))


def speech_span(audio: np.ndarray, rate: int) -> tuple[float, float] | None:
    """(first, last) second of speech, or None when the audio is silence."""
    levels = frame_levels(audio, rate)
    peak = float(levels.max())
    if peak < SILENT_DBFS:
        return None
    loud = np.flatnonzero(levels > max(peak - SPEECH_BELOW_PEAK_DB, SILENT_DBFS))
    return float(loud[0] * FRAME_SECONDS), float((loud[-1] + 1) * FRAME_SECONDS)


def interpolated(
    texts: Sequence[str], measured: Sequence[tuple[float, float] | None], span: tuple[float, float]
) -> list[Word]:
    """Words with their measured times, and each unmeasured run of words spread over the gap
    between its measured neighbours (or `span`'s ends) and marked estimated."""
    words: list[Word] = []
    i = 0
    while i < len(texts):
        times = measured[i]
        if times is not None:
            words.append(Word(texts[i], times[0], times[1]))
            i += 1
            continue
        run_end = i
        while run_end < len(texts) and measured[run_end] is None:
            run_end += 1
        after = measured[run_end] if run_end < len(texts) else None
        start = words[-1].end if words else span[0]
        stop = after[0] if after is not None else max(span[1], start)
        words += _spread(texts[i:run_end], start, max(stop, start))
        i = run_end
    return words


def _spread(texts: Sequence[str], start: float, stop: float) -> list[Word]:
    weights = [max(estimate_seconds(t), SHORTEST_WORD) for t in texts]
    total = sum(weights)
    out: list[Word] = []
    at = start
    for text, weight in zip(texts, weights, strict=True):
        end = at + (stop - start) * weight / total
        out.append(Word(text, at, end, estimated=True))
        at = end
    return out
