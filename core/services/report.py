"""What a job tells its caller while it runs: how far it is (`Progress`), and what it has made
so far (`Partial`: handed over if it is cancelled or fails). The window's worker carries each
event to the UI thread as it comes; the command line prints what it wants of them."""

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

Report = Callable[[object], None]  # one event: a Progress, a Partial, or a job's own kind


@dataclass(frozen=True)
class Progress:
    stage: str
    fraction: float  # 0..1; negative when the total is unknown
    detail: str = ""  # a sentence (a core Sentence, so the window can translate it)


@dataclass(frozen=True)
class Partial:
    """What the job has made so far: the caller keeps it if the job stops early."""

    value: Any


def ignore(_event: object) -> None:
    """A Report for callers that want no events."""
