"""What the check listens with: any recogniser behind one small interface (mono float32 audio in,
text in "zh" or "en" out, called off the UI thread), and one take's check through it.
"""

from dataclasses import replace
from typing import Protocol

import numpy as np

from chattts_studio.core.asr.score import AsrCheck, NumberReaders, check
from chattts_studio.core.text.numbers import NUMBER_READERS

MODEL_RATE = 16_000  # what speech recognisers' models take


class Recognizer(Protocol):
    name: str

    def transcribe(self, audio: np.ndarray, sample_rate: int, language: str) -> str: ...


def at_model_rate(audio: np.ndarray, sample_rate: int) -> np.ndarray:
    """Mono float32 audio resampled to MODEL_RATE (a polyphase filter: no aliasing)."""
    from math import gcd

    from scipy.signal import resample_poly

    audio = np.asarray(audio, dtype=np.float32).reshape(-1)
    if sample_rate == MODEL_RATE:
        return audio
    common = gcd(sample_rate, MODEL_RATE)
    out = resample_poly(audio, MODEL_RATE // common, sample_rate // common)
    return np.asarray(out, dtype=np.float32)


def hear(
    recognizer: Recognizer,
    text: str,
    audio: np.ndarray,
    sample_rate: int,
    language: str,
    readers: NumberReaders = NUMBER_READERS,
) -> AsrCheck:
    """One take checked: what `recognizer` hears in `audio`, scored against `text` (the
    segment's text as the model read it), with the recogniser's name (the demo's is said)."""
    got = check(text, recognizer.transcribe(audio, sample_rate, language), readers)
    return replace(got, recognizer=recognizer.name)
