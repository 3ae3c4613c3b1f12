"""What a synthesis job asks for and what it gives back, and the plain settings the other
packages hand the engine (sampling, refine, a speaker): the engine's face, free of torch."""

from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import StrEnum

import numpy as np

from chattts_studio.core import SAMPLE_RATE
from chattts_studio.core.engine.metrics import MemorySnapshot
from chattts_studio.core.errors import BadSettingError
from chattts_studio.core.messages import QT_TRANSLATE_NOOP, Sentence
from chattts_studio.core.text.prepare import Segment
from chattts_studio.core.voices.voice import Voice

SEGMENT_SIZE_RANGE = (5, 500)
BATCH_SIZE_RANGE = (0, 64)  # 0: automatic (auto_batch_size), settled once by Engine.plan
AUTO_BATCH_MAX = 16
SpeakerLike = str | Voice  # an embedding string (the older form) or a Voice


class Precision(StrEnum):
    """What the GPT computes in (devices.py's torch_dtype; check_precision says where each
    runs)."""

    FP32 = "fp32"
    FP16 = "fp16"
    BF16 = "bf16"
    INT8 = "int8"  # the GPT's linear layers as dynamic int8 (CPU); activations stay fp32


@dataclass(frozen=True)
class Sampling:
    temperature: float
    top_p: float
    top_k: int
    repetition_penalty: float = 1.05


@dataclass(frozen=True)
class RefineSettings:
    """ChatTTS's text pass: its prompt ([oral_N][laugh_N][break_N]) and sampling."""

    prompt: str
    top_p: float
    top_k: int


def auto_batch_size(device_id: str, segments: int) -> int:
    """The automatic batch: 16 rows, never more than segments. On a GPU 16 was the articles'
    sweet spot; on a CPU decode is bound by reading the weights, so more rows per read pay too
    (bench on 2 cores, fp32: RTF 2.38 at batch 1, 0.93 at 4, 0.37 at 16)."""
    del device_id  # the same rule on every device today; kept for a per-device choice
    return max(1, min(AUTO_BATCH_MAX, segments))


@dataclass(frozen=True)
class SynthesisRequest:
    text: str
    speaker: str | None = None  # a speaker embedding string; None: the speaker of `seed`
    seed: int = 0
    temperature: float = 0.3
    top_p: float = 0.7
    top_k: int = 20
    refine_text: bool = True
    speed: int = 5  # [speed_N]
    oral: int = 2  # [oral_N], used by refine
    laugh: int = 0  # [laugh_N], used by refine
    break_level: int = 6  # [break_N], used by refine
    segment_size: int = 50  # characters (segments are split further to fit the step cap)
    batch_size: int = 0  # rows decoded together; 0: automatic
    pause_seconds: float = 0.25  # silence between segments when joined
    turn_pause_seconds: float = 0.4  # a dialogue's silence between two lines (turns)
    decoder: str = "fast"  # "fast": Studio's decode loop; "stock": ChatTTS's generate()
    # A library voice (an embedding, or a cloned sample with its transcript); when set it is
    # used instead of `speaker` and the speaker of `seed`.
    voice: Voice | None = None
    # The pronunciation dictionary, (word, replacement) pairs (see lexicon.py): applied to the
    # text before it is segmented; only what the model reads changes.
    lexicon: tuple[tuple[str, str], ...] = ()

    def validate(self) -> None:
        """Raise BadSettingError, naming the setting and its range, for any value out of range."""
        checks: list[tuple[str, float, float, float]] = [
            (QT_TRANSLATE_NOOP("core", "segment size"), self.segment_size, *SEGMENT_SIZE_RANGE),
            (QT_TRANSLATE_NOOP("core", "batch size"), self.batch_size, *BATCH_SIZE_RANGE),
            (QT_TRANSLATE_NOOP("core", "temperature"), self.temperature, 0.01, 2.0),
            (QT_TRANSLATE_NOOP("core", "top-P"), self.top_p, 0.01, 1.0),
            (QT_TRANSLATE_NOOP("core", "top-K"), self.top_k, 1, 100),
            (QT_TRANSLATE_NOOP("core", "speed"), self.speed, 0, 9),
            (QT_TRANSLATE_NOOP("core", "oral"), self.oral, 0, 9),
            (QT_TRANSLATE_NOOP("core", "laugh"), self.laugh, 0, 2),
            (QT_TRANSLATE_NOOP("core", "break"), self.break_level, 0, 7),
            (QT_TRANSLATE_NOOP("core", "pause"), self.pause_seconds, 0.0, 5.0),
            (QT_TRANSLATE_NOOP("core", "turn pause"), self.turn_pause_seconds, 0.0, 5.0),
            (QT_TRANSLATE_NOOP("core", "seed"), self.seed, 0, 2**31 - 1),
        ]
        if self.decoder not in ("fast", "stock"):
            raise BadSettingError(
                Sentence(
                    QT_TRANSLATE_NOOP("core", "The decoder must be {fast} or {stock} (got {got})."),
                    fast="'fast'",
                    stock="'stock'",
                    got=repr(self.decoder),
                )
            )
        check_ranges(checks)


def check_ranges(checks: Iterable[tuple[str, float, float, float]]) -> None:
    """BadSettingError naming the first (setting name, value, low, high) whose value is outside
    low..high (NaN too: it compares false), as one sentence."""
    for name, value, low, high in checks:
        if not low <= value <= high:
            raise BadSettingError(
                Sentence(
                    QT_TRANSLATE_NOOP(
                        "core", "The {setting} must be between {low} and {high} (got {value})."
                    ),
                    setting=Sentence(name),
                    low=f"{low:g}",
                    high=f"{high:g}",
                    value=f"{value:g}",
                )
            )


@dataclass(frozen=True)
class Part:
    """Who reads a segment of a dialogue: the line's speaker and the turn it belongs to."""

    voice: Voice
    name: str
    turn: int  # the script line's place among the turns (segments of one line share it)


@dataclass(frozen=True)
class JobPlan:
    """A request made ready to run, once per job: its segments (the only segmenting of the
    job), the batch size resolved for the device, and the speaker embedding to use."""

    request: SynthesisRequest
    segments: tuple[Segment, ...]
    batch_size: int
    speaker: str  # the embedding ("" for a cloned voice that has none)
    voice: Voice | None = None  # the job's voice; None: the embedding `speaker`
    parts: tuple[Part, ...] = ()  # a dialogue: one per segment; empty: every one is `voice`

    def voice_at(self, index: int) -> Voice:
        if self.parts:
            return self.parts[index].voice
        return self.voice or Voice(embedding=self.speaker)

    def name_at(self, index: int) -> str:
        return self.parts[index].name if self.parts else ""

    def pause_before(self, index: int) -> float:
        """Seconds of silence before segment `index` when the job's audio is joined: the turn
        pause where a dialogue's speaker line changes, else the segment pause."""
        if index == 0:
            return 0.0
        if self.parts and self.parts[index].turn != self.parts[index - 1].turn:
            return self.request.turn_pause_seconds
        return self.request.pause_seconds

    def join(self, results: list["SegmentResult"]) -> np.ndarray:
        """The job's segments end to end in order, with the pauses `pause_before` gives."""
        parts: list[np.ndarray] = []
        for result in sorted(results, key=lambda r: r.index):
            gap = round(self.pause_before(result.index) * SAMPLE_RATE) if parts else 0
            parts += [np.zeros(gap, np.float32), result.audio.astype(np.float32, copy=False)]
        return np.concatenate(parts) if parts else np.zeros(0, dtype=np.float32)

    @property
    def expected_steps(self) -> int:
        return sum(s.expected_steps for s in self.segments)


@dataclass(frozen=True)
class SegmentResult:
    """One finished segment, yielded in text order."""

    index: int
    segments: int  # how many the job has
    text: str
    audio: np.ndarray = field(repr=False)  # float32, mono, 24 kHz
    steps: int
    compute_seconds: float  # the batch's time shared by its rows in proportion to their steps
    batch_size: int
    memory: MemorySnapshot | None = None
    # Ended at its step cap without the model's end-of-speech (real weights only): the text
    # may be cut short. Planning splits segments so this should not happen; it is reported.
    hit_cap: bool = False
    # Cancelled while it was being made: `audio` is what had been streamed of it (its start).
    partial: bool = False
    speaker: str = ""  # a dialogue's speaker name for this segment ("" outside dialogues)

    @property
    def audio_seconds(self) -> float:
        return len(self.audio) / SAMPLE_RATE

    @property
    def rtf(self) -> float:
        return self.compute_seconds / self.audio_seconds if self.audio_seconds else float("inf")


@dataclass(frozen=True)
class AudioChunk:
    """Playable audio as soon as it exists: pieces of a segment, in order; `final` marks the
    segment's last piece."""

    index: int
    audio: np.ndarray = field(repr=False)
    final: bool


@dataclass(frozen=True)
class SegmentRestarted:
    """The segment starts again (after out of memory): drop every chunk of it streamed so far;
    its audio comes again from the beginning."""

    index: int


@dataclass(frozen=True)
class JobSummary:
    segments: int
    audio_seconds: float
    wall_seconds: float
    steps: int
    first_audio_seconds: float | None
    peak_memory: int | None
    batch_size: int = 0  # the batch the job finished with (smaller after out of memory)

    @property
    def rtf(self) -> float:
        return self.wall_seconds / self.audio_seconds if self.audio_seconds else float("inf")

    @property
    def steps_per_second(self) -> float:
        return self.steps / self.wall_seconds if self.wall_seconds else 0.0


def join_clips(clips: list[np.ndarray], pause_seconds: float = 0.25) -> np.ndarray:
    """Clips end to end, in the given order, with `pause_seconds` of silence between them."""
    gap = np.zeros(round(pause_seconds * SAMPLE_RATE), dtype=np.float32)
    parts: list[np.ndarray] = []
    for i, clip in enumerate(clips):
        if i:
            parts.append(gap)
        parts.append(clip.astype(np.float32, copy=False))
    return np.concatenate(parts) if parts else np.zeros(0, dtype=np.float32)


def join_audio(results: list[SegmentResult], pause_seconds: float = 0.25) -> np.ndarray:
    """The segments end to end, in text order, with `pause_seconds` of silence between them."""
    return join_clips([r.audio for r in sorted(results, key=lambda r: r.index)], pause_seconds)
