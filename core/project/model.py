"""What a project holds, as plain data: its segments (text, voice, pause before), each with its
takes (everything needed to make the take again bit for bit, its audio file and measures), the
chosen take and a lock. No I/O here (store.py reads and writes it) and no Qt.

Ids never move: a segment keeps its id through edits, splits and merges (its place in the list
is its order), and a take keeps its id within its segment, so a file name or an undo step
that names one stays true. Users see 1-based positions (`number`), never ids.
"""

from dataclasses import dataclass, field, replace
from typing import Any

from chattts_studio.core.align.words import Alignment
from chattts_studio.core.asr.score import AsrCheck
from chattts_studio.core.project.flags import Measures
from chattts_studio.core.speaker.check import VoiceCheck
from chattts_studio.core.voices.voice import Voice

FORMAT = 1  # project.json's schema; a newer one is refused (store.py), an older one upgraded


@dataclass(frozen=True)
class TakeSettings:
    """The generation settings a take was made with (the project's, or the command's)."""

    temperature: float = 0.3
    top_p: float = 0.7
    top_k: int = 20
    speed: int = 5


@dataclass(frozen=True)
class Maker:
    """What made a take, besides its seed and settings: the model's identity (its weights and
    precision, render/manifest/run.py's model_identity), the engine, the device, and the row
    count of the decode step's products (a row's bits depend on it: core/engine/takes.py)."""

    model: str
    engine: str
    precision: str
    device: str
    rows: int
    # Random weights (the demo models) never say end of speech: they are held to the step
    # cap on purpose, so reaching it is no flag.
    random_weights: bool = False


@dataclass(frozen=True)
class Take:
    id: int
    seed: int
    settings: TakeSettings
    maker: Maker
    text: str  # the segment's text when the take was made (an edit leaves old takes stale)
    spoken_text: str  # that text with the pronunciation dictionary of the time applied
    model_text: str  # what the model read: spoken_text with numbers read out
    voice: str  # Voice.key() of the voice it was read in
    audio: str  # its file, relative to the project folder
    steps: int
    cap: int
    eos: bool  # ended by the model's end of speech (not at its step cap)
    compute_seconds: float
    measures: Measures
    made_at: str  # ISO 8601, UTC
    # What speech recognition heard in it, scored against spoken_text (core/asr); None until
    # checked. A check of a stale take is kept: it says what that take says.
    asr: AsrCheck | None = None
    # How alike its voice is to its voice's reference (core/speaker); None until checked.
    voice_check: VoiceCheck | None = None
    # Its words in time (core/align), kept when it was checked with timings to hand, for an
    # export or reader to use; None in a project saved before, or a take never timed.
    words: Alignment | None = None


@dataclass
class Segment:
    id: int
    text: str
    voice: Voice
    speaker: str = ""  # a dialogue line's speaker name; "" for the project's voice
    pause_before: float = 0.0  # seconds of silence before it (the first segment's is unused)
    takes: list[Take] = field(default_factory=list)
    chosen: int | None = None  # a take id
    picked: bool = False  # chosen by hand: never replaced automatically
    locked: bool = False  # never re-rolled, edited or replaced
    # A take of this segment the user marked as its voice's reference for the voice check.
    reference: int | None = None
    # The highest take id whose files lie in takes/ (store.load sets it): a record that did
    # not read, a take whose writer died before its record. A new take's id is above it, so
    # its files never replace them. Not saved.
    reserved: int = field(default=0, compare=False, repr=False)

    def take(self, take_id: int) -> Take | None:
        return next((t for t in self.takes if t.id == take_id), None)

    @property
    def chosen_take(self) -> Take | None:
        return self.take(self.chosen) if self.chosen is not None else None

    def next_take_id(self) -> int:
        return max(max((t.id for t in self.takes), default=0), self.reserved) + 1

    def current(self, take: Take, spoken: str | None = None) -> bool:
        """Whether the take reads the segment's text as it is now, in its voice; with
        `spoken` (the text with today's pronunciation dictionary applied), also whether the
        dictionary still reads it as the take did (a changed entry makes it stale)."""
        if take.text != self.text or take.voice != self.voice.key():
            return False
        return spoken is None or spoken == take.spoken_text


@dataclass
class Project:
    title: str
    settings: TakeSettings
    model: str  # the model name the project asks for (demo, demo-full, official, a folder)
    segments: list[Segment] = field(default_factory=list)
    next_segment_id: int = 1
    # Where the project was made, as it was asked for: later commands default to them.
    device: str | None = None
    precision: str = "fp32"
    engine: str = "auto"
    pause: float = 0.25  # seconds before a segment that a split makes
    # Every take's seed comes from it and the take's place (core/seeds.py's take_seed); None
    # in a project saved before projects kept one (drawn at its next take).
    seed: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)  # keys a newer minor version wrote
    # What reading it left out, one sentence each (a take record that does not read): shown,
    # never saved.
    warnings: list[str] = field(default_factory=list, compare=False, repr=False)

    def new_segment(self, text: str, voice: Voice, **kw: Any) -> Segment:
        segment = Segment(self.next_segment_id, text, voice, **kw)
        self.next_segment_id += 1
        return segment

    def at(self, number: int) -> Segment:
        """The segment at 1-based position `number` (what users type)."""
        return self.segments[number - 1]

    def number_of(self, segment_id: int) -> int:
        return next(i + 1 for i, s in enumerate(self.segments) if s.id == segment_id)


def with_take(segment: Segment, take: Take, choose: bool) -> Segment:
    """`segment` with `take` added; chosen when `choose` (never over a hand pick or a lock)."""
    segment.takes.append(take)
    if (choose and not segment.locked and not segment.picked) or segment.chosen is None:
        segment.chosen = take.id
    return segment


def edited(segment: Segment, text: str) -> Segment:
    """The segment with new text: its takes stay (stale: they read the old text), the hand
    pick is undone since the picked take no longer says what the segment says."""
    return replace(segment, text=text, picked=False)
