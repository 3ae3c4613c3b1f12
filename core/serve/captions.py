"""Captions for a speech response: one cue per sentence, timed from where each segment really
sits in the audio (its samples as the Encoder joined them, pauses between), through the same
cue function the CLI's subtitles use."""

from typing import Any

from chattts_studio.core.audio.subtitles import cues_for, format_srt, format_vtt
from chattts_studio.core.text.prepare import Segment


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
