"""Word-level subtitles from an alignment: WebVTT with a timestamp per word, karaoke ASS, SRT and
JSON. Words are grouped into lines at sentence ends, pauses and length; cue times and escaping
are core/audio/subtitles.py's.
"""

import json
from collections.abc import Sequence
from pathlib import Path

from chattts_studio.core.align.words import Alignment, Word, is_cjk
from chattts_studio.core.atomic import target_problem, write_text_atomic
from chattts_studio.core.audio.subtitles import Cue, escape_vtt, format_srt, stamp
from chattts_studio.core.errors import StudioError
from chattts_studio.core.messages import QT_TRANSLATE_NOOP, Sentence

FORMATS = ("json", "vtt", "srt", "ass")
LINE_WORDS = 7  # English words a line; a Chinese character counts half a word
LINE_SECONDS = 5.0
PAUSE_SECONDS = 0.7  # a silence this long starts a new line
_ENDS = frozenset("。！？!?；;….")
ASS_HEAD = """[Script Info]
ScriptType: v4.00+
PlayResX: 1280
PlayResY: 720
WrapStyle: 0

[V4+ Styles]
Format: Name, Fontname, Fontsize, PrimaryColour, SecondaryColour, OutlineColour, BackColour, \
Bold, Italic, Underline, StrikeOut, ScaleX, ScaleY, Spacing, Angle, BorderStyle, Outline, \
Shadow, Alignment, MarginL, MarginR, MarginV, Encoding
Style: Default,Arial,48,&H0000FFFF,&H00FFFFFF,&H00000000,&H80000000,0,0,0,0,100,100,0,0,1,2,\
1,2,40,40,40,1

[Events]
Format: Layer, Start, End, Style, Name, MarginL, MarginR, MarginV, Effect, Text
"""


def format_of(path: Path) -> str:
    """The format a file's name asks for: one of FORMATS, else one sentence."""
    kind = Path(path).suffix.lower().lstrip(".")
    if kind not in FORMATS:
        raise StudioError(
            Sentence(
                QT_TRANSLATE_NOOP(
                    "core", "Cannot write word timings as '{kind}': use .vtt, .srt, .ass or .json."
                ),
                kind=str(Path(path).suffix or path),
            )
        )
    return kind


def check_words_path(path: Path) -> str:
    """Refuse a word-timing target that cannot be written, before any work; its format."""
    kind = format_of(path)
    problem = target_problem(Path(path), example="speech.vtt")
    if problem:
        raise StudioError(problem)
    return kind


def lines(words: Sequence[Word]) -> list[list[Word]]:
    """The words grouped into subtitle lines, in order."""
    groups: list[list[Word]] = []
    size = 0.0
    for word in words:
        current = groups[-1] if groups else None
        breaks = current is None or (
            any(c in _ENDS for c in current[-1].tail)
            or word.start - current[-1].end > PAUSE_SECONDS
            or (size >= LINE_WORDS and not any(c in _ENDS for c in word.tail))
            or word.end - current[0].start > LINE_SECONDS
        )
        if breaks:
            groups.append([word])
            size = 0.0
        else:
            assert current is not None
            current.append(word)
        size += 0.5 if is_cjk(word.text) else 1.0
    return groups


def _spaced(before: Word | None, word: Word) -> str:
    """The space that goes before `word` in a line: only between two words of spaced scripts
    (none beside a Chinese character, as Chinese text is written)."""
    if before is None or is_cjk(before.text) or is_cjk(word.text):
        return ""
    return " "


def line_text(group: Sequence[Word]) -> str:
    return "".join(
        _spaced(group[i - 1] if i else None, w) + w.text + w.tail for i, w in enumerate(group)
    )


def format_word_vtt(alignment: Alignment) -> str:
    out = ["WEBVTT\n"]
    if alignment.estimated:
        out.append(
            f"NOTE {alignment.estimated} of {len(alignment.words)} word times are estimated "
            "(interpolated, not measured): the words in <c.estimated>.\n"
        )
    for group in lines(alignment.words):
        parts = []
        for i, word in enumerate(group):
            shown = escape_vtt(word.text + word.tail)
            if word.estimated:
                shown = f"<c.estimated>{shown}</c>"
            timed = f"<{stamp(word.start, False)}>" if i and word.start > group[0].start else ""
            parts.append(_spaced(group[i - 1] if i else None, word) + timed + shown)
        span = f"{stamp(group[0].start, False)} --> {stamp(group[-1].end, False)}"
        out.append(f"{span}\n{''.join(parts)}\n")
    return "\n".join(out)


def format_word_srt(alignment: Alignment) -> str:
    groups = lines(alignment.words)
    return format_srt([Cue(g[0].start, g[-1].end, line_text(g)) for g in groups])


def _ass_time(seconds: float) -> str:
    cs = max(0, round(seconds * 100))
    hours, cs = divmod(cs, 360_000)
    minutes, cs = divmod(cs, 6000)
    return f"{hours}:{minutes:02d}:{cs // 100:02d}.{cs % 100:02d}"


def _ass_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("{", "(").replace("}", ")")


def format_word_ass(alignment: Alignment) -> str:
    """Karaoke ASS: each word's \\k lasts from its start to the next word's (the last word's
    to its end), in whole centiseconds summed without drift."""
    events = []
    for group in lines(alignment.words):
        marks = [round(w.start * 100) for w in group] + [round(group[-1].end * 100)]
        text = "".join(
            f"{{\\k{max(0, marks[i + 1] - marks[i])}}}"
            + _spaced(group[i - 1] if i else None, w)
            + _ass_escape(w.text + w.tail)
            for i, w in enumerate(group)
        )
        start, end = _ass_time(marks[0] / 100), _ass_time(marks[-1] / 100)
        events.append(f"Dialogue: 0,{start},{end},Default,,0,0,0,karaoke,{text}\n")
    return ASS_HEAD + "".join(events)


def format_words(alignment: Alignment, kind: str) -> str:
    """The alignment in one of FORMATS."""
    if kind == "json":
        return json.dumps(alignment.to_json(), ensure_ascii=False, indent=1) + "\n"
    writer = {"vtt": format_word_vtt, "srt": format_word_srt, "ass": format_word_ass}[kind]
    return writer(alignment)


def write_words(path: Path, alignment: Alignment, kind: str) -> Path:
    """The alignment written atomically to `path` in `kind`."""
    write_text_atomic(Path(path), format_words(alignment, kind))
    return Path(path)
