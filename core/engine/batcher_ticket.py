"""A request inside the batcher (batcher.py): what it asks for, what it is delivered, its
ticket (cancelled, held back or released from any thread), which segments of which tickets are
refined together, and the batcher's counters."""

import logging
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Protocol

from chattts_studio.core.engine.chattts.chat import RefineSettings, SpeakerLike
from chattts_studio.core.engine.decode.job import Job
from chattts_studio.core.engine.decode.rowwise import Sampling
from chattts_studio.core.engine.request import AudioChunk
from chattts_studio.core.errors import StudioError
from chattts_studio.core.text.prepare import Segment

log = logging.getLogger("chattts_studio")


class QueueFull(StudioError):
    """More requests wait than the batcher accepts."""


@dataclass(frozen=True)
class SpeechOrder:
    """What one request asks for: its text, read by one speaker: an embedding string, or a
    Voice as Engine.check_voice returns it (a cloned voice's sample and its transcript, already
    normalised as synthesis reads it: the batcher puts it into every prompt as it is)."""

    text: str
    speaker: SpeakerLike
    seed: int = 0
    speed: int = 5  # ChatTTS's [speed_N], 0-9
    # Per request (issue 23); None: the batcher's own (Batcher.sampling, .segment_size, no
    # refine). Rows with different sampling share one step.
    sampling: Sampling | None = None
    refine: RefineSettings | None = None  # ChatTTS's text pass before the segment's prompt
    segment_size: int | None = None
    # Its rows may share products with other shared requests' (throughput; Job.shared): its
    # audio is then not bit-identical to its solo run. False: exact, whatever shares the batch.
    shared: bool = False


@dataclass(frozen=True)
class Finished:
    """The request's last audio went out."""

    steps: int
    audio_seconds: float


@dataclass(frozen=True)
class Failed:
    error: BaseException


Delivery = AudioChunk | Finished | Failed


@dataclass(eq=False)
class Ticket:
    """One request inside the batcher. cancel() is safe from any thread."""

    id: int
    order: SpeechOrder
    segments: list[Segment]
    deliver: Callable[[Delivery], None]
    next_admit: int = 0  # the next segment to give a row
    next_out: int = 0  # the segment whose audio goes out next
    rows: int = 0  # rows it holds now
    steps: int = 0
    samples: int = 0
    running: dict[int, Job] = field(default_factory=dict)  # segment index -> job
    waiting: dict[int, list[AudioChunk]] = field(default_factory=dict)  # chunks not out yet
    cancelled: bool = False
    done: bool = False
    # Its reader is behind (see Batcher.hold_back): it takes no new row meanwhile.
    held_back: bool = False
    # submit(holds_audio=True): the caller keeps its audio until release(); until then it
    # counts against max_waiting whenever it holds no row.
    released: bool = False
    wake: Callable[[], None] = lambda: None  # the batcher's, so a cancel is seen at once
    # order.refine: the refined text of segments not admitted yet (segment index -> text).
    refined: dict[int, str] = field(default_factory=dict)

    def cancel(self) -> None:
        """Its rows are freed before the decoder's next step; nothing more is delivered."""
        self.cancelled = True
        for job in list(self.running.values()):
            job.cancelled = True
        self.wake()

    def release(self) -> None:
        """The caller holds none of its audio any more (holds_audio tickets)."""
        self.released = True

    def give(self, item: Delivery) -> None:
        """Deliver `item`: a listener's failure is its request's (cancelled), never the
        batch's."""
        try:
            self.deliver(item)
        except Exception as exc:
            log.warning("request %d: delivery failed: %s", self.id, exc)
            self.cancel()

    def send_in_order(self) -> bool:
        """Deliver the chunks next in its order (later segments' wait for the ones before);
        True once every segment's audio is out."""
        while self.next_out < len(self.segments):
            chunks = self.waiting.pop(self.next_out, [])
            for chunk in chunks:
                self.samples += len(chunk.audio)
                self.give(chunk)
            if not (chunks and chunks[-1].final):
                return False
            self.next_out += 1
        return True

    def unrefined(self) -> Iterator[int]:
        """Its segments still to be refined, in the order it admits them."""
        start = self.next_admit
        return (i for i in range(start, len(self.segments)) if i not in self.refined)


@dataclass
class BatcherStats:
    """Counters for /metrics, read from any thread (plain numbers, updated in place)."""

    requests: int = 0
    completed: int = 0
    cancelled: int = 0
    failed: int = 0
    steps: int = 0  # row-steps decoded
    audio_seconds: float = 0.0
    busy_seconds: float = 0.0  # wall time the decoder loop ran
    rows_busy: int = 0
    waiting_segments: int = 0
    # Counted by the speech API's responses (server_stream): clients that left before the
    # end, that stopped reading and were cut off, and responses ended by an error after their
    # headers went out.
    disconnected: int = 0
    stalled: int = 0
    aborted: int = 0


class Submits(Protocol):
    """What takes requests: the Batcher."""

    def submit(
        self, order: SpeechOrder, deliver: Callable[[Delivery], None], holds_audio: bool = False
    ) -> Ticket: ...


def collect(batcher: Submits, order: SpeechOrder) -> tuple[threading.Event, list[Delivery]]:
    """Submit `order` and gather what it delivers; the event is set once it Finished or
    Failed (for callers that want a request's whole audio: benchmarks, checks, tests)."""
    got: list[Delivery] = []
    done = threading.Event()

    def deliver(item: Delivery) -> None:
        got.append(item)
        if isinstance(item, Finished | Failed):
            done.set()

    batcher.submit(order, deliver)
    return done, got
