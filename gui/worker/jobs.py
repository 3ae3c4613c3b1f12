"""The worker's jobs as the window sees them: a numbered Job of a kind, and how it ended (Done,
Failure or CancelledOutcome). Plain data, no Qt."""

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from chattts_studio.core.engine.cancel import CancelToken


class JobKind(StrEnum):
    LOAD = "load"
    SYNTHESIZE = "synthesize"
    AUDITION = "audition"
    DOWNLOAD = "download"
    SPEAKER = "speaker"
    BUILD = "build"  # demo weights built (and verified) without loading them
    RENDER = "render"  # a book, a text or a project rendered into a folder
    VOICE = "voice"  # a voice cloned from a recording: auditioned, or kept in the library
    SERVE = "serve"  # the speech API started over the loaded model
    PROJECT = "project"  # takes made or heard for the segment editor


@dataclass(frozen=True)
class Job:
    kind: JobKind
    number: int
    # Made when the job is queued: a cancel before it starts, while it runs, or just as it
    # ends all reach this job and no other.
    cancel: CancelToken = field(default_factory=CancelToken, compare=False, repr=False)


@dataclass(frozen=True)
class Started:
    """The first event of every job: the worker has taken it."""


@dataclass(frozen=True)
class Done:
    job: Job
    value: Any


@dataclass(frozen=True)
class Failure:
    job: Job
    error: Exception
    partial: Any = None  # what the job made before it (a synthesis's finished segments)


@dataclass(frozen=True)
class CancelledOutcome:
    job: Job
    partial: Any = None


Outcome = Done | Failure | CancelledOutcome
