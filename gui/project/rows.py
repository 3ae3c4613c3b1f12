"""A project's segments and takes as the segment editor shows them: every cell's text worked out
once per project given (flags are judged project-wide), so the models' `data` is a lookup.
Plain data and translated strings, no widgets: made off the UI thread for a large project.

A check heard by the demo recogniser (random weights) says so wherever its numbers show: the
heard cell, its tooltip and the flag's sentence (core/project/reading.py)."""

from dataclasses import dataclass

from chattts_studio.core.asr.score import AsrCheck, percent
from chattts_studio.core.project import reading
from chattts_studio.core.project.flags import FLAG_NAMES, Flag
from chattts_studio.core.project.model import Project, Segment, Take
from chattts_studio.core.project.reading import Lexicon, printable
from chattts_studio.gui.i18n import core_text, translate

NONE = "-"  # a segment with no take yet: no length, no take
TRANSCRIPT_CHARS = 200  # a tooltip's transcript at most: the demo's can run on for lines


@dataclass(frozen=True)
class TakeInfo:
    """One take as the take list and the take picker show it."""

    id: int
    seed: int
    seconds: float
    badges: str = ""  # its flags' names, "fast · ASR"
    why: str = ""  # each flag's sentence, one a line
    heard: str = ""  # its speech recognition error rate ("4%", ">100% (demo)"); "" unchecked
    transcript: str = ""  # what speech recognition heard, and what it missed
    stale: bool = False


@dataclass(frozen=True)
class SegmentRow:
    """One segment as shown, every cell's text ready (data() only looks them up)."""

    number: int
    text: str
    speaker: str
    takes: tuple[TakeInfo, ...]
    chosen: int | None  # the chosen take's id
    duration: str
    take: str  # "2/3": the chosen take's place among the takes / their count
    badges: str
    why: str  # each flag's sentence, one a line
    heard: str  # the chosen take's speech recognition error rate ("4%"); "" unchecked
    transcript: str  # what speech recognition heard, and what it missed
    stale: bool  # the chosen take reads an older text (or voice, or dictionary)
    picked: bool
    locked: bool

    def take_info(self, take_id: int | None) -> TakeInfo | None:
        return next((t for t in self.takes if t.id == take_id), None)


def _words(runs: list[str]) -> str:
    return printable("、".join(runs), TRANSCRIPT_CHARS)


def _heard(check: AsrCheck, demo: bool) -> str:
    """The heard cell's tooltip: who heard, what, and what differs, every character printable."""
    lines = []
    if demo:
        lines.append(
            translate(
                "Segments",
                "Demo recogniser (random weights): not a real hearing. Its transcript is noise.",
            )
        )
    transcript = printable(check.transcript, TRANSCRIPT_CHARS)
    lines.append(translate("Segments", "Heard: {transcript}").format(transcript=transcript))
    if check.missing:
        lines.append(
            translate("Segments", "Not heard: {words}").format(words=_words(check.missing))
        )
    if check.extra:
        extra = _words(check.extra)
        lines.append(translate("Segments", "Heard but not written: {words}").format(words=extra))
    if check.score > 1.0:
        lines.append(
            translate(
                "Segments",
                "More was heard than the text says: errors are counted against the text's "
                "length, so this is over 100%.",
            )
        )
    return "\n".join(lines)


def _heard_cell(take: Take) -> tuple[str, str]:
    """The heard cell's text and tooltip for `take` ("", "" unchecked)."""
    if take.asr is None:
        return "", ""
    demo = reading.heard_by_demo(take)
    rate = percent(take.asr.score)
    shown = translate("Segments", "{rate} (demo)").format(rate=rate) if demo else rate
    return shown, _heard(take.asr, demo)


def _take_info(
    segment: Segment, take: Take, marks: list[Flag], spoken: str | None, words: dict[str, str]
) -> TakeInfo:
    heard, transcript = _heard_cell(take)
    return TakeInfo(
        id=take.id,
        seed=take.seed,
        seconds=take.measures.seconds,
        badges=" · ".join(words.get(f.kind, f.kind) for f in marks),
        why="\n".join(core_text(f.sentence) for f in marks),
        heard=heard,
        transcript=transcript,
        stale=not segment.current(take, spoken),
    )


def _row(
    number: int,
    segment: Segment,
    found: dict[tuple[int, int], list[Flag]],
    lexicon: Lexicon | None,
    words: dict[str, str],
) -> SegmentRow:
    spoken = None if lexicon is None else reading.spoken(segment.text, lexicon)
    takes = tuple(
        _take_info(segment, t, found.get((segment.id, t.id), []), spoken, words)
        for t in segment.takes
    )
    take = segment.chosen_take
    info = None if take is None else next(i for i in takes if i.id == take.id)
    if take is None or info is None:
        return SegmentRow(
            number=number,
            text=segment.text,
            speaker=segment.speaker,
            takes=takes,
            chosen=None,
            duration=NONE,
            take=NONE,
            badges="",
            why="",
            heard="",
            transcript="",
            stale=False,
            picked=segment.picked,
            locked=segment.locked,
        )
    place = [t.id for t in segment.takes].index(take.id) + 1
    return SegmentRow(
        number=number,
        text=segment.text,
        speaker=segment.speaker,
        takes=takes,
        chosen=take.id,
        duration=words["seconds"].format(seconds=f"{take.measures.seconds:.1f}"),
        take=f"{place}/{len(segment.takes)}",
        badges=info.badges,
        why=info.why,
        heard=info.heard,
        transcript=info.transcript,
        stale=info.stale,
        picked=segment.picked,
        locked=segment.locked,
    )


def build_rows(
    project: Project, lexicon: Lexicon | None, rows: list[int] | None = None
) -> list[SegmentRow]:
    """Rows `rows` of `project` (all when None), from any thread (translate is thread-safe).
    Flags are judged against the whole project's takes (reading.take_flags, what `project
    list` shows); their sentences stay Sentences so they are said in the interface's
    language."""
    found = reading.take_flags(project)
    words = _flag_words()
    chosen = range(len(project.segments)) if rows is None else rows
    return [_row(r + 1, project.segments[r], found, lexicon, words) for r in chosen]


def _flag_words() -> dict[str, str]:
    """The translated words rows are made of (each flag's name, core/project/flags.py
    FLAG_NAMES, the seconds), looked up once per build rather than per take."""
    words = {kind: translate("core", name) for kind, name in FLAG_NAMES.items()}
    words["seconds"] = translate("Segments", "{seconds} s")
    return words
