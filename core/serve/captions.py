"""Captions for a speech response: one cue per sentence, timed from where each segment sits in the
audio, through the CLI's cue function; and word timestamps in Kokoro-FastAPI's shape, from
core/align.
"""

import threading
from typing import Any

import numpy as np

from chattts_studio.core import SAMPLE_RATE
from chattts_studio.core.align.estimate import interpolated, speech_span
from chattts_studio.core.align.timeline import WordTimeline
from chattts_studio.core.align.words import Word, text_words
from chattts_studio.core.audio.subtitles import cues_for, format_srt, format_vtt
from chattts_studio.core.errors import StudioError
from chattts_studio.core.text.prepare import Segment

# One aligner for the server: PocketSphinx's decoders are kept between calls and are not
# shared between threads, so requests align one at a time.
_ALIGNING = threading.Lock()
_ALIGNERS: dict[str, Any] = {}


def captions(kind: str, segments: list[Segment], spans: list[tuple[int, int, int]]) -> Any:
    """`spans`: (segment index, first sample, end sample) of each segment in the audio. SRT and
    WebVTT as text; json as a list of {"start", "end", "text"} (seconds, to the millisecond)."""
    timeline = [(segments[index].shown, first, end) for index, first, end in spans]
    cues = cues_for(timeline)
    if kind == "srt":
        return format_srt(cues)
    if kind == "vtt":
        return format_vtt(cues)
    return [{"start": round(c.start, 3), "end": round(c.end, 3), "text": c.text} for c in cues]


def _aligners() -> tuple[Any, Any]:
    """(English aligner or None without PocketSphinx, Chinese recogniser or None), made once."""
    if not _ALIGNERS:
        from chattts_studio.core.align.sphinx import EnglishAligner

        try:
            EnglishAligner.check()
            _ALIGNERS["en"] = EnglishAligner()
        except StudioError:
            _ALIGNERS["en"] = None
        _ALIGNERS["zh"] = None
        try:
            from chattts_studio.core.asr import models

            if models.official_present():
                from chattts_studio.core.asr.sensevoice import SenseVoice

                _ALIGNERS["zh"] = SenseVoice(models.official_folder())
        except (ImportError, StudioError, OSError):
            pass  # Chinese words are estimated
    return _ALIGNERS["en"], _ALIGNERS["zh"]


def _spread(audio: np.ndarray, text: str, offset: float) -> list[Word]:
    """Every word of `text` estimated over the speech in `audio`, moved by `offset` seconds."""
    try:
        words = text_words(text)
    except StudioError:
        return []
    span = speech_span(audio, SAMPLE_RATE) or (0.0, len(audio) / SAMPLE_RATE)
    spread = interpolated(words, [None] * len(words), span)
    return [Word(w.text, w.start + offset, w.end + offset, True) for w in spread]


def word_timestamps(
    segments: list[Segment],
    spans: list[tuple[int, int, int]],
    pieces: dict[int, list[np.ndarray]],
) -> list[dict[str, Any]]:
    """Kokoro-FastAPI's `timestamps`, [{"word", "start_time", "end_time"}] in seconds, plus
    "estimated": each segment's audio (`pieces`, its chunks by segment index) aligned with the
    text it says and placed at its span; what the aligner refuses (the demo weights' noise) or
    cannot time (no PocketSphinx, Chinese without a recogniser) is estimated and says so."""
    words: list[Word] = []
    with _ALIGNING:
        english, recognizer = _aligners()  # made under the lock: one set for the server
        for index, first, _end in spans:
            parts = pieces.get(index) or [np.zeros(0, dtype=np.float32)]
            audio = np.concatenate(parts).astype(np.float32, copy=False)
            text = segments[index].text  # what the model said
            if english is None:
                words += _spread(audio, text, first / SAMPLE_RATE)
                continue
            timeline = WordTimeline(SAMPLE_RATE, recognizer, english)
            timeline.add(audio, text, first)
            words += timeline.words
    return [
        {
            "word": w.text,
            "start_time": round(w.start, 3),
            "end_time": round(w.end, 3),
            "estimated": w.estimated,
        }
        for w in words
    ]
