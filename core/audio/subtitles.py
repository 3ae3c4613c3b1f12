"""Subtitles (SRT and WebVTT): one cue per sentence, timed from where each segment sits in the
audio; in a dialogue each cue names its speaker.
"""

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from chattts_studio.core import SAMPLE_RATE
from chattts_studio.core.atomic import target_problem, write_text_atomic
from chattts_studio.core.errors import StudioError
from chattts_studio.core.messages import QT_TRANSLATE_NOOP, Sentence
from chattts_studio.core.text.prepare import estimate_seconds, is_speakable

KINDS = ("srt", "vtt")
_TOKEN = re.compile(r"\[[^\[\]\s]{1,32}\]")  # [uv_break] and friends: not shown
_ENDS = frozenset("。！？!?；;…\n")
_CLOSERS = frozenset("”’」』）)】》\"'")
_TIME = re.compile(r"(?:(\d+):)?(\d{1,2}):(\d{2})[.,](\d{3})")


@dataclass(frozen=True)
class Cue:
    start: float  # seconds
    end: float
    text: str
    speaker: str = ""  # who says it, in a dialogue


def subtitle_kind(path: Path) -> str:
    kind = Path(path).suffix.lower().lstrip(".")
    if kind not in KINDS:
        raise StudioError(
            Sentence(
                QT_TRANSLATE_NOOP("core", "Cannot write subtitles as '{kind}': use .srt or .vtt."),
                kind=str(Path(path).suffix or path),
            )
        )
    return kind


def check_subtitle_path(path: Path) -> str:
    """Refuse a subtitle target we cannot write, before any work; return its kind."""
    kind = subtitle_kind(path)
    problem = target_problem(Path(path), example="speech.srt")
    if problem:
        raise StudioError(problem)
    return kind


def sentences(text: str) -> list[str]:
    """The text's sentences, control tokens removed. A sentence ends after 。！？!?；;… (and
    the closing quotes that follow), or after a '.' followed by a space; a piece with nothing
    to say joins the sentence before it."""
    text = _TOKEN.sub("", text)
    pieces: list[str] = []
    current: list[str] = []
    ended = False
    for i, char in enumerate(text):
        if ended and char not in _ENDS and char not in _CLOSERS and char != ".":
            pieces.append("".join(current))
            current, ended = [], False
        current.append(char)
        after = text[i + 1] if i + 1 < len(text) else " "
        if char in _ENDS or (char == "." and (after.isspace() or after in _CLOSERS)):
            ended = True
    pieces.append("".join(current))
    out: list[str] = []
    for piece in (" ".join(p.split()) for p in pieces):
        if not piece:
            continue
        if out and not is_speakable(piece):
            out[-1] = f"{out[-1]}{piece}"
        else:
            out.append(piece)
    return out


def segment_cues(text: str, start: float, end: float, speaker: str = "") -> list[Cue]:
    """The cues of one segment that sits at [start, end) seconds."""
    parts = sentences(text) or [" ".join(_TOKEN.sub("", text).split())]
    weights = [estimate_seconds(p) or float(len(p)) or 1.0 for p in parts]
    total = sum(weights)
    cues: list[Cue] = []
    at = start
    for i, (part, weight) in enumerate(zip(parts, weights, strict=True)):
        stop = end if i == len(parts) - 1 else at + (end - start) * weight / total
        cues.append(Cue(at, stop, part, speaker))
        at = stop
    return cues


def cues_for(
    timeline: Iterable[tuple[str, int, int]],
    offset: int = 0,
    speakers: Sequence[str] | None = None,
) -> list[Cue]:
    """Cues for segments given as (text, first sample, end sample) in the audio; `offset`
    samples are added to every time (a chapter's place in a whole book); `speakers`, when
    given, names who says each segment."""
    cues: list[Cue] = []
    for i, (text, first, end) in enumerate(timeline):
        speaker = speakers[i] if speakers else ""
        cues.extend(
            segment_cues(
                text, (first + offset) / SAMPLE_RATE, (end + offset) / SAMPLE_RATE, speaker
            )
        )
    return cues


def escape_vtt(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def stamp(seconds: float, comma: bool) -> str:
    ms = max(0, round(seconds * 1000))
    hours, ms = divmod(ms, 3_600_000)
    minutes, ms = divmod(ms, 60_000)
    secs, ms = divmod(ms, 1000)
    return f"{hours:02d}:{minutes:02d}:{secs:02d}{',' if comma else '.'}{ms:03d}"


def format_srt(cues: list[Cue]) -> str:
    blocks = [
        f"{n}\n{stamp(c.start, True)} --> {stamp(c.end, True)}\n"
        f"{f'{c.speaker}: ' if c.speaker else ''}{c.text}\n"
        for n, c in enumerate(cues, 1)
    ]
    return "\n".join(blocks)


def format_vtt(cues: list[Cue], note: str | None = None) -> str:
    head = "WEBVTT\n\n" + (f"NOTE {note}\n\n" if note else "")
    blocks = [
        f"{stamp(c.start, False)} --> {stamp(c.end, False)}\n"
        f"{f'<v {escape_vtt(c.speaker)}>' if c.speaker else ''}{c.text}\n"
        for c in cues
    ]
    return head + "\n".join(blocks)


def write_subtitles(path: Path, cues: list[Cue], note: str | None = None) -> Path:
    """Write cues atomically, SRT or WebVTT after the extension. `note` goes in a WebVTT NOTE
    (SRT has no place for comments)."""
    path = Path(path)
    kind = subtitle_kind(path)
    write_text_atomic(path, format_srt(cues) if kind == "srt" else format_vtt(cues, note))
    return path


def _seconds(stamp: str) -> float:
    match = _TIME.fullmatch(stamp.strip())
    if not match:
        raise ValueError(f"not a subtitle time: {stamp!r}")
    hours, minutes, secs, ms = match.groups()
    return int(hours or 0) * 3600 + int(minutes) * 60 + int(secs) + int(ms) / 1000


def parse_subtitles(text: str) -> list[Cue]:
    """Cues read back from SRT or WebVTT text (times and text; numbers and notes skipped)."""
    cues: list[Cue] = []
    for block in re.split(r"\n\s*\n", text.replace("\r\n", "\n").strip()):
        lines = block.splitlines()
        for i, line in enumerate(lines):
            if "-->" in line:
                start, end = line.split("-->")
                cues.append(
                    Cue(_seconds(start), _seconds(end.split()[0]), "\n".join(lines[i + 1 :]))
                )
                break
    return cues
