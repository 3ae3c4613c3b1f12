"""A request inside the batcher (batcher.py): what it asks for, what it is delivered, its
ticket (cancelled, held back or released from any thread), which segments of which tickets are
refined together, and the batcher's counters."""

import contextlib
import logging
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from chattts_studio.core.engine.decode.job import Job
from chattts_studio.core.engine.decode.rowwise import check_sampling
from chattts_studio.core.engine.request import AudioChunk, RefineSettings, Sampling, SpeakerLike
from chattts_studio.core.errors import StudioError
from chattts_studio.core.text.prepare import Segment, check_text, split_segments
from chattts_studio.core.voices.voice import Voice

if TYPE_CHECKING:
    from chattts_studio.core.engine.chattts.chat import ChatModel

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
    # Per request; None: the batcher's own (Batcher.sampling, .segment_size, no
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
class BusyClock:
    """Wall time during which any of its holders works (the decode loop, the vocoder thread
    that renders chunks beside it on the CPU): time they overlap is counted once, added to
    `stats.busy_seconds` as each busy stretch ends. The RTF /metrics shows is made of it."""

    def __init__(self, stats: "BatcherStats") -> None:
        self._stats = stats
        self._lock = threading.Lock()
        self._holders = 0
        self._since = 0.0

    @contextlib.contextmanager
    def held(self) -> Iterator[None]:
        with self._lock:
            if self._holders == 0:
                self._since = time.perf_counter()
            self._holders += 1
        try:
            yield
        finally:
            with self._lock:
                self._holders -= 1
                if self._holders == 0:
                    self._stats.busy_seconds += time.perf_counter() - self._since


class BatcherStats:
    """Counters for /metrics, read from any thread (plain numbers, updated in place)."""

    requests: int = 0
    completed: int = 0
    cancelled: int = 0
    failed: int = 0
    steps: int = 0  # row-steps decoded
    audio_seconds: float = 0.0
    busy_seconds: float = 0.0  # wall time the decoder loop or the vocoder thread worked (BusyClock)
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


class TicketDesk:
    """The Batcher's side that any thread calls: requests in, their queue, its thread started
    and closed (batcher.py holds the side its own thread runs: the decode and delivery)."""

    _thread: threading.Thread
    _lock: threading.Condition
    _closed: bool
    _vocoding: ThreadPoolExecutor | None
    _tickets: list[Ticket]
    _holding: list[Ticket]
    _ids: Iterator[int]
    model: "ChatModel"
    segment_size: int
    max_waiting: int
    stats: BatcherStats

    def start(self) -> None:
        self._thread.start()

    def close(self) -> None:
        with self._lock:
            self._closed = True
            self._lock.notify_all()
        if self._thread.is_alive():
            self._thread.join()
        if self._vocoding is not None:  # what it still holds belongs to failed requests
            self._vocoding.shutdown(wait=True)

    def segments_of(self, order: SpeechOrder) -> list[Segment]:
        """The request's segments; BadTextError (one sentence) when it cannot be spoken."""
        size = order.segment_size or self.segment_size
        return split_segments(check_text(order.text), size, first_apart=True)

    def submit(
        self,
        order: SpeechOrder,
        deliver: Callable[[Delivery], None],
        holds_audio: bool = False,
    ) -> Ticket:
        """Queue a request; `deliver` is called from the batcher's thread with its audio in
        order, then Finished or Failed. Raises QueueFull, BadTextError for its text, or
        SpeakerError for a voice sample this model cannot read. `holds_audio`: the caller
        keeps audio until ticket.release(), and the ticket counts as waiting meanwhile."""
        if order.sampling is not None:  # here: inside the step it would fail every request
            check_sampling(order.sampling)
        segments = self.segments_of(order)
        if isinstance(order.speaker, Voice) and order.speaker.sample:
            # Here, not when a row takes it: a failure inside the decode loop fails every
            # request in the batch.
            self.model.check_sample(order.speaker.sample)
        with self._lock:
            if self._closed:
                raise QueueFull("The server is shutting down.")
            waiting = self._waiting()
            if waiting >= self.max_waiting:
                raise QueueFull(f"{waiting} requests are waiting already; try again in a moment.")
            ticket = Ticket(next(self._ids), order, segments, deliver, wake=self._wake)
            self._tickets.append(ticket)
            if holds_audio:
                self._holding.append(ticket)
            self.stats.requests += 1
            self._count_waiting()
            self._lock.notify_all()
        return ticket

    def _waiting(self) -> int:
        """Requests that hold memory but no decoder row: queued, held back by their reader,
        or decoded and not yet taken (only `slots` requests can hold rows, so this bounds
        them all)."""
        self._holding = [t for t in self._holding if not (t.released or t.cancelled)]
        queued = [t for t in self._tickets if t.rows == 0 and not t.cancelled]
        unsent = [t for t in self._holding if t.rows == 0 and t.done]
        return len(queued) + len(unsent)

    def hold_back(self, ticket: Ticket, held: bool) -> None:
        """A reader that fell behind holds its request back: no new row until it catches up
        (rows it holds finish their segments). Any thread."""
        with self._lock:
            ticket.held_back = held
            self._lock.notify_all()

    def _wake(self) -> None:
        with self._lock:
            self._lock.notify_all()

    def alive(self) -> bool:
        """Started, not closed, and its thread still running (a server's health check)."""
        return self._thread.is_alive() and not self._closed

    def queue_length(self) -> int:
        """Requests with no segment decoding yet."""
        return sum(1 for t in list(self._tickets) if t.next_admit == 0 and not t.cancelled)

    def active_requests(self) -> int:
        return sum(1 for t in list(self._tickets) if not t.cancelled)

    def _count_waiting(self) -> None:
        self.stats.waiting_segments = sum(
            len(t.segments) - t.next_admit for t in self._tickets if not t.cancelled
        )
