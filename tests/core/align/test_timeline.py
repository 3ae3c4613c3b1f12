"""Word timings for audio made a segment at a time: each segment's words land where the segment
sits in the file, and a segment the aligner refuses (noise) has its words estimated, not lost."""

import numpy as np

from chattts_studio.core import SAMPLE_RATE
from chattts_studio.core.align.timeline import REFUSED, WordTimeline
from chattts_studio.core.devtools.alignacc import ESPEAK_RATE, at_app_rate, espeak, sentence

FIRST = "The weather is very nice today."
SECOND = "Please remember to bring the blue folder."


def test_segments_words_are_placed_at_their_offsets() -> None:
    timeline = WordTimeline(SAMPLE_RATE)
    one = sentence("en-us+f2", FIRST)
    two = sentence("en-us+f2", SECOND)
    assert one is not None and two is not None
    gap = SAMPLE_RATE // 2
    second_at = len(one.audio) + gap
    timeline.add(one.audio, FIRST, 0)
    timeline.add(two.audio, SECOND, second_at)
    got = timeline.alignment()
    assert [w.text for w in got.words] == [*one.words, *two.words]
    assert not any(w.estimated for w in got.words)
    starts = [w.start for w in got.words]
    truth = one.starts + [s + second_at / SAMPLE_RATE for s in two.starts]
    assert np.median(np.abs(np.subtract(starts, truth))) <= 0.04
    assert got.duration == (second_at + len(two.audio)) / SAMPLE_RATE
    assert got.method == "pocketsphinx forced alignment"


def test_a_refused_segment_is_estimated_inside_its_own_span() -> None:
    timeline = WordTimeline(SAMPLE_RATE)
    said = at_app_rate(espeak().say("en-us+f2", FIRST)[0], ESPEAK_RATE)
    noise = np.random.default_rng(3).normal(0, 0.1, SAMPLE_RATE * 2).astype(np.float32)
    timeline.add(said, FIRST, 0)
    timeline.add(noise, SECOND, len(said))
    timeline.add(np.zeros(100, np.float32), "[uv_break]", len(said) + len(noise))
    got = timeline.alignment()
    refused = [w for w in got.words if w.estimated]
    assert [w.text for w in refused] == [
        "Please",
        "remember",
        "to",
        "bring",
        "the",
        "blue",
        "folder",
    ]
    start, end = len(said) / SAMPLE_RATE, (len(said) + len(noise)) / SAMPLE_RATE
    assert all(start <= w.start <= w.end <= end for w in refused)
    assert REFUSED in got.method and refused[-1].tail == "."
