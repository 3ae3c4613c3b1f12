"""What the worker is asked to do and what each job ends with: plain dataclasses, no Qt, and
no torch (the engine's types are named for the type checker only)."""

from dataclasses import dataclass, field
from enum import StrEnum
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from chattts_studio.core.engine.cancel import CancelToken
from chattts_studio.core.engine.request import (
    JobSummary,
    SegmentResult,
    SynthesisRequest,
    join_audio,
)
from chattts_studio.core.voices.voice import Voice

if TYPE_CHECKING:  # imported by the worker thread, never by the window's import chain
    from chattts_studio.core.engine.devices import Device, Precision
    from chattts_studio.core.engine.loading import LoadedModel
    from chattts_studio.core.render.book import RenderOptions
    from chattts_studio.core.results.store import ResultStore


class JobKind(StrEnum):
    LOAD = "load"
    SYNTHESIZE = "synthesize"
    AUDITION = "audition"
    DOWNLOAD = "download"
    SPEAKER = "speaker"
    BUILD = "build"  # demo weights built (and verified) without loading them
    RENDER = (
        "render"  # a book (or a text) rendered into a folder by chattts_studio.core.render.book
    )
    VOICE = "voice"  # a voice cloned from a recording: auditioned, or kept in the library
    SERVE = "serve"  # the speech API started over the loaded model (gui/serve/serving.py)
    PROJECT = "project"  # takes made for the segment editor (core/services/project.py)


@dataclass(frozen=True)
class Job:
    kind: JobKind
    number: int
    # Made when the job is queued: a cancel before it starts, while it runs, or just as it
    # ends all reach this job and no other.
    cancel: CancelToken = field(default_factory=CancelToken, compare=False, repr=False)


@dataclass(frozen=True)
class LoadJob:
    model: str
    device: str | None
    precision: str
    # Asked for before the device probe reached the window: the saved choice, which the worker
    # settles as the controls will show it (see DeviceProbe.settle).
    settle: bool = False
    engine: str = "auto"  # auto, torch or onnx: what runs the GPT's decode step


@dataclass(frozen=True)
class DeviceProbe:
    """What the worker found once torch was imported: the devices and what each can do."""

    devices: "list[Device]"
    default: str  # the default device's id (the first usable CUDA device, else the CPU)
    cuda: str  # one sentence on CUDA: usable, or why not
    support: "dict[str, dict[Precision, str | None]]"  # per usable device: None or why not
    precisions: "tuple[Precision, ...]"  # every precision, fp32 first
    # Per usable device and precision: each engine's value -> None, or why it cannot run
    # there (core/engine/onnxrt/choice.py's engine_support).
    engines: "dict[str, dict[Precision, dict[str, str | None]]]" = field(default_factory=dict)

    def engine_reasons(self, device_id: str, precision: "Precision") -> dict[str, str | None]:
        return self.engines.get(device_id, {}).get(precision, {})

    def settle_engine(self, device_id: str, precision: "Precision", engine: str) -> str:
        """A saved engine as it can be used with this device and precision: one that cannot
        (or an unknown one) is auto, which always can."""
        reasons = self.engine_reasons(device_id, precision)
        return engine if engine in reasons and reasons[engine] is None else "auto"

    def usable(self, device_id: str) -> bool:
        return any(d.id == device_id and d.usable for d in self.devices)

    def settle(self, device_id: str | None, precision: str) -> "tuple[str, Precision]":
        """A saved choice as it can be used here: an absent or unusable device is the default
        one, a precision that device cannot do (or an unknown one) is fp32."""
        device = device_id if device_id and self.usable(device_id) else self.default
        fp32 = self.precisions[0]
        chosen = next((p for p in self.precisions if p.value == precision), fp32)
        return device, chosen if self.support[device].get(chosen) is None else fp32


@dataclass(frozen=True)
class SynthesisJob:
    request: SynthesisRequest
    speaker_seed: int | None = None  # the speaker of this seed when request.speaker is None
    speaker_label: str = ""
    # A dialogue script (the request's text, `Name: text` lines) and each name's voice.
    voices: "dict[str, Voice] | None" = field(default=None, compare=False)


@dataclass(frozen=True)
class VoiceJob:
    """A voice from a recording: a file (read by the worker) or a microphone take at `rate`,
    with its transcript; auditioned on `base.text`, or kept in the library as `name`."""

    transcript: str
    base: SynthesisRequest
    source: Path | None = None
    take: np.ndarray | None = field(default=None, repr=False)
    rate: int = 0
    name: str = ""  # set: keep the voice under this name (else audition it)
    replace: bool = False
    library: Path | None = None  # the speaker library file the window shows


@dataclass(frozen=True)
class VoiceOutcome:
    spec: VoiceJob
    audio: np.ndarray | None = field(default=None, repr=False)  # the audition
    kept: str = ""  # the name it was kept under


@dataclass(frozen=True)
class AuditionJob:
    text: str
    count: int
    base: SynthesisRequest
    # Set: the text is read by this voice blend ("Ann*0.7+seed:42*0.3"), not by `count` random
    # seeds; `library` holds the library voices its parts may name (no file read on the worker).
    blend: str = ""
    library: "dict[str, Voice]" = field(default_factory=dict, compare=False, repr=False)


@dataclass(frozen=True)
class Progress:
    job: Job
    stage: str
    fraction: float  # 0..1; negative when the total is unknown
    detail: str = ""


@dataclass(frozen=True)
class SynthesisOutcome:
    job: SynthesisJob
    results: list[SegmentResult]
    summary: JobSummary | None
    speaker: str  # the embedding that was used
    loaded: "LoadedModel | None" = None
    # Where the window keeps its audio (on disk); the results then carry views of it.
    store: "ResultStore | None" = field(default=None, compare=False, repr=False)

    @cached_property
    def audio(self) -> np.ndarray:
        """The whole result: a read-only view of the store's file when it has one, else joined
        once (a long one is tens of MB to copy)."""
        if self.store is not None:
            return self.store.samples()
        return join_audio(self.results, self.job.request.pause_seconds)


@dataclass(frozen=True)
class RenderSpec:
    """A render job of the window's queue: a book file, or the editor's text as a book."""

    request: SynthesisRequest  # every setting; its text is not used
    folder: Path
    options: "RenderOptions"
    source: Path | None = None  # .txt, .md or .epub; None: `text`
    text: str = ""
    title: str = ""
    speaker_seed: int | None = None  # the speaker of this seed when request.speaker is None


@dataclass(frozen=True)
class ProjectJob:
    """A segment editor action that makes takes on the loaded model: "new" (the request's
    text, or the script `lines`, as a new project at `path`), "reroll" (segments `numbers`, or
    the flagged or the unlocked ones) or "edit" (segment numbers[0] says `text` now: one take
    of it made again); or that hears them (core/asr): "check" (every chosen take not heard
    yet), "clean" (the flagged segments re-rolled until clean, `tries` takes at most each) and
    "best" (best of `takes`). The request carries the window's sampling settings and
    dictionary."""

    action: str
    path: Path
    numbers: tuple[int, ...] | list[int] = ()
    takes: int = 1
    text: str = ""
    flagged: bool = False
    unlocked: bool = False
    request: SynthesisRequest | None = None
    speaker_seed: int | None = None  # "new": the speaker of this seed when no voice is given
    lines: tuple[tuple[str, Voice, str], ...] = ()  # "new": a script's speaker, voice, text
    tries: int = 0  # "clean": new takes of a segment at most


@dataclass(frozen=True)
class ProjectDone:
    folder: Path
    made: int  # takes made
    seconds: float  # the job's wall time


@dataclass(frozen=True)
class RenderDone:
    """What a finished render made: its files, and how many segments it made or kept."""

    folder: Path
    files: list[Path]
    made: int
    kept: int
    audio_seconds: float
    warnings: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Candidate:
    seed: int | None  # None: a blend's voice
    embedding: str
    audio: np.ndarray = field(repr=False)


@dataclass(frozen=True)
class SeedSpeaker:
    seed: int
    embedding: str


@dataclass(frozen=True)
class CancelledOutcome:
    job: Job
    partial: SynthesisOutcome | None = None


@dataclass(frozen=True)
class Failure:
    job: Job
    error: Exception
    partial: SynthesisOutcome | None = None  # the segments a synthesis finished before it
