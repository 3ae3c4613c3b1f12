"""A project's segments and takes as the segment editor shows them: every cell's text worked out
once per project given (flags are judged project-wide), so the models' `data` is a lookup.
Plain data and translated strings, no widgets: made off the UI thread for a large project.

A check heard by the demo recogniser (random weights) says so wherever its numbers show: the
heard cell, its tooltip and the flag's sentence (core/project/reading.py); so does a voice
check by the demo speaker model (its similarities judge noise)."""

from dataclasses import dataclass

from chattts_studio.core.asr.score import AsrCheck, percent
from chattts_studio.core.project import reading
from chattts_studio.core.project.flags import FLAG_NAMES, Flag
from chattts_studio.core.project.model import Project, Segment, Take
from chattts_studio.core.project.reading import Lexicon, printable
from chattts_studio.core.speaker.check import (
    REFERENCE_PREVIEW,
    REFERENCE_RECORDING,
    REFERENCE_TAKE,
    VoiceCheck,
    voice_flag,
)
from chattts_studio.core.speaker.spread import RULE_SPREAD
from chattts_studio.gui.i18n import core_text, translate

NONE = "-"  # a segment with no take yet: no length, no take
UNCHECKED = "—"  # a take whose voice is not compared with its reference yet
DRIFT_MARK = "⚠"  # after a similarity below its threshold: the voice drifts
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
    voice: str = UNCHECKED  # its similarity to its voice's reference ("0.64 ⚠" drifts)
    voice_tip: str = ""  # against which reference, and the verdict
    reference: bool = False  # the take marked as its voice's reference


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
    voice: str = UNCHECKED  # the chosen take's similarity to its voice's reference
    voice_tip: str = ""

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


@dataclass(frozen=True)
class References:
    """What the voice cells of one project need to name a check's reference: each segment's
    number by its id, and each voice's marked reference ("segment-id/take-id") by its key."""

    numbers: dict[int, int]
    marked: dict[str, str]

    @staticmethod
    def of(project: Project) -> "References":
        segments = project.segments
        return References(
            {s.id: n for n, s in enumerate(segments, 1)},
            {s.voice.key(): f"{s.id}/{s.reference}" for s in segments if s.reference is not None},
        )

    def place(self, project: Project, reference_id: str) -> tuple[int, int] | None:
        """(segment number, the take's place among its takes) of "segment-id/take-id"; None
        when that take is gone (a merge, a split) or the id does not read."""
        segment_id, _, take_id = reference_id.partition("/")
        if not (segment_id.isdigit() and take_id.isdigit()):
            return None
        number = self.numbers.get(int(segment_id))
        ids = [t.id for t in project.at(number).takes] if number is not None else []
        return (number, ids.index(int(take_id)) + 1) if number and int(take_id) in ids else None


def _voice_cell(
    project: Project, segment: Segment, take: Take, references: References
) -> tuple[str, str]:
    """The voice cell's text and tooltip for `take`: its similarity (DRIFT_MARK after it below
    the threshold), the reference it was compared with, and whether that is still the voice's
    marked reference."""
    check = take.voice_check
    if check is None:
        return UNCHECKED, translate(
            "Segments", "Not compared with its voice's reference yet (Check voices)."
        )
    shown = f"{check.similarity:.2f}" + ("" if check.same else f" {DRIFT_MARK}")
    reference = _reference_text(project, check, references)
    flag = voice_flag(check)  # says the demo model judged it, when it did
    if flag is None:
        said = translate("Segments", "Same voice as its reference ({reference}).")
        lines = [said.format(reference=reference)]
        if check.demo:
            lines.insert(
                0,
                translate(
                    "Segments",
                    "Demo speaker model (random weights): its similarities judge noise, "
                    "not voices.",
                ),
            )
    else:
        said = translate("Segments", "Reference: {reference}.")
        lines = [core_text(flag), said.format(reference=reference)]
    lines.append(_rule_text(check))
    if check.demo:
        shown = translate("Segments", "{score} (demo)").format(score=shown)
    marked = references.marked.get(segment.voice.key()) if references.marked else None
    if marked is not None and marked != check.reference_id:
        lines.append(
            translate(
                "Segments",
                "Compared with an earlier reference: Check voices compares it with the marked one.",
            )
        )
    return shown, "\n".join(lines)


def _rule_text(check: VoiceCheck) -> str:
    """Which rule judged the take, and where it draws the line."""
    if check.rule == RULE_SPREAD:
        said = translate(
            "Segments",
            "Judged among this voice's {takes} takes: {bound} or more is the same voice.",
        )
        return said.format(takes=check.takes, bound=f"{check.bound:.2f}")
    said = translate(
        "Segments", "Judged by the fixed threshold: {bound} or more is the same voice."
    )
    return said.format(bound=f"{check.bound:.2f}")


def _reference_text(project: Project, check: VoiceCheck, references: References) -> str:
    """What a check's reference was, as the window names it ("take 3 of segment 2")."""
    if check.reference == REFERENCE_RECORDING:
        said = translate("Segments", "the voice's recording, {file}")
        return said.format(file=printable(check.reference_id, TRANSCRIPT_CHARS))
    if check.reference == REFERENCE_PREVIEW:
        said = translate("Segments", "the voice's preview clip, {file}")
        return said.format(file=printable(check.reference_id, TRANSCRIPT_CHARS))
    place = references.place(project, check.reference_id)
    if place is None:
        return translate("Segments", "a take no longer in the project")
    if check.reference == REFERENCE_TAKE:
        said = translate("Segments", "take {take} of segment {number}")
    else:
        said = translate(
            "Segments", "its voice's most typical take, take {take} of segment {number}"
        )
    return said.format(take=place[1], number=place[0])


def _take_info(
    project: Project,
    segment: Segment,
    take: Take,
    marks: list[Flag],
    spoken: str | None,
    words: dict[str, str],
    references: References,
) -> TakeInfo:
    heard, transcript = _heard_cell(take)
    voice, voice_tip = _voice_cell(project, segment, take, references)
    return TakeInfo(
        id=take.id,
        seed=take.seed,
        seconds=take.measures.seconds,
        badges=" · ".join(words.get(f.kind, f.kind) for f in marks),
        why="\n".join(core_text(f.sentence) for f in marks),
        heard=heard,
        transcript=transcript,
        stale=not segment.current(take, spoken),
        voice=voice,
        voice_tip=voice_tip,
        reference=segment.reference == take.id,
    )


def _row(
    project: Project,
    number: int,
    found: dict[tuple[int, int], list[Flag]],
    lexicon: Lexicon | None,
    words: dict[str, str],
    references: References,
) -> SegmentRow:
    segment = project.at(number)
    spoken = None if lexicon is None else reading.spoken(segment.text, lexicon)
    takes = tuple(
        _take_info(
            project, segment, t, found.get((segment.id, t.id), []), spoken, words, references
        )
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
            voice="",
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
        voice=info.voice,
        voice_tip=info.voice_tip,
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
    references = References.of(project)
    chosen = range(len(project.segments)) if rows is None else rows
    return [_row(project, r + 1, found, lexicon, words, references) for r in chosen]


def _flag_words() -> dict[str, str]:
    """The translated words rows are made of (each flag's name, core/project/flags.py
    FLAG_NAMES, the seconds), looked up once per build rather than per take."""
    words = {kind: translate("core", name) for kind, name in FLAG_NAMES.items()}
    words["seconds"] = translate("Segments", "{seconds} s")
    return words
