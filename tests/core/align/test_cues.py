"""Word-level subtitles read back by real parsers (webvtt-py, pysubs2) and the project's own:
each format's cues, times and words are those of the alignment, the WebVTT cue timestamps sit
inside their cue in order, and the karaoke \\k durations add up to each line's length."""

import io
import re

import pysubs2
import pytest
import webvtt

from chattts_studio.core.align.cues import format_words, line_text, lines
from chattts_studio.core.align.words import Alignment, Word
from chattts_studio.core.audio.subtitles import parse_subtitles

WORDS = [
    Word("The", 0.20, 0.31),
    Word("weather", 0.31, 0.65),
    Word("is", 0.65, 0.78, tail=","),
    Word("nice", 0.80, 1.10, estimated=True, tail="&."),
    Word("今", 2.50, 2.71),
    Word("天", 2.71, 2.95, tail="，"),
    Word("好", 2.95, 3.20, tail="。"),
]
ALIGNED = Alignment(WORDS, "en", "test", 3.5)


def test_lines_break_at_sentence_ends_and_keep_chinese_together() -> None:
    groups = lines(WORDS)
    assert [[w.text for w in g] for g in groups] == [
        ["The", "weather", "is", "nice"],
        ["今", "天", "好"],
    ]
    assert line_text(groups[0]) == "The weather is, nice&."
    assert line_text(groups[1]) == "今天，好。"


def test_webvtt_has_a_timestamp_before_each_word_inside_its_cue() -> None:
    text = format_words(ALIGNED, "vtt")
    assert text.startswith("WEBVTT\n")
    parsed = webvtt.from_buffer(io.StringIO(text))
    assert [(c.start, c.end) for c in parsed] == [
        ("00:00:00.200", "00:00:01.100"),
        ("00:00:02.500", "00:00:03.200"),
    ]
    assert [c.text for c in parsed] == ["The weather is, nice&amp;.", "今天，好。"]
    cues = parse_subtitles(text)
    first = cues[0].text
    stamps = re.findall(r"<(\d\d:\d\d:\d\d\.\d{3})>", first)
    assert stamps == ["00:00:00.310", "00:00:00.650", "00:00:00.800"]
    assert "<c.estimated>nice&amp;.</c>" in first  # escaped, and said to be estimated
    assert "NOTE 1 of 7 word times are estimated" in text
    seconds = [int(s[6:8]) + int(s[9:]) / 1000 for s in stamps]
    assert cues[0].start < seconds[0] < seconds[1] < seconds[2] < cues[0].end


def test_srt_is_one_cue_a_word_group() -> None:
    subs = pysubs2.SSAFile.from_string(format_words(ALIGNED, "srt"), format_="srt")
    assert [e.plaintext for e in subs] == ["The weather is, nice&.", "今天，好。"]
    assert [(e.start, e.end) for e in subs] == [(200, 1100), (2500, 3200)]


def test_karaoke_ass_durations_add_up_to_each_line() -> None:
    subs = pysubs2.SSAFile.from_string(format_words(ALIGNED, "ass"), format_="ass")
    assert len(subs) == 2 and "Default" in subs.styles
    for event, group in zip(subs, lines(WORDS), strict=True):
        ks = [int(k) for k in re.findall(r"\\k(\d+)", event.text)]
        assert len(ks) == len(group)
        assert sum(ks) * 10 == event.end - event.start
        assert event.start == round(group[0].start * 1000)
    first = [int(k) for k in re.findall(r"\\k(\d+)", subs[0].text)]
    assert first == [11, 34, 15, 30]  # the gap before "nice" belongs to "is"


@pytest.mark.parametrize("kind", ["json", "vtt", "srt", "ass"])
def test_every_word_is_in_every_format(kind: str) -> None:
    text = format_words(ALIGNED, kind)
    for word in ("The", "weather", "今", "好"):
        assert word in text
