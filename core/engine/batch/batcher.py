"""One continuous batch for many requests: a thread that owns the model and one decoder. A request
joins at the next step; a row's failure fails its request alone, a step's failure every request.
See docs/architecture.md.
"""

import logging
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from itertools import count

import torch

from chattts_studio.core.engine.batch.delivery import ChunkDelivery, FlyingChunk
from chattts_studio.core.engine.batch.refine import REFINE_BATCH, refine_picks, refine_segments
from chattts_studio.core.engine.batch.tickets import (
    BatcherStats,
    BusyClock,
    Failed,
    QueueFull,
    Ticket,
)
from chattts_studio.core.engine.decode import vocoding
from chattts_studio.core.engine.decode.job import Job
from chattts_studio.core.engine.decode.loop import FastDecoder
from chattts_studio.core.engine.decode.slots import DecoderShape
from chattts_studio.core.engine.decode.streaming import FIRST_AUDIO_STEPS, ChunkVocoder
from chattts_studio.core.engine.decoder_pool import SIZING_LENGTH
from chattts_studio.core.engine.engine import Engine
from chattts_studio.core.engine.pipeline import out_of_memory, release_memory
from chattts_studio.core.engine.request import Sampling
from chattts_studio.core.errors import StudioError
from chattts_studio.core.seeds import segment_seed
from chattts_studio.core.text.prepare import (
    MAX_STEP_CAP,
    Segment,
    needed_steps,
)

log = logging.getLogger("chattts_studio")
FIRST_LENGTH = 256  # KV positions a decoder starts with (it grows for longer segments)
# A decoder grown past this (a request with very long segments) is dropped once the batch is
# idle: the next starts at FIRST_LENGTH again. Below it (what default segments need), it is
# kept: growing it again for every request would cost a copy of every row's cache.
KEEP_LENGTH = SIZING_LENGTH
# int8 quantizes each product's activations with one scale for the whole product: rows
# computed together would change one another's bits (and one row's NaN would spoil them
# all). One row per product keeps every response equal to its solo run.
INT8_CHUNKS = (
    "--chunk-rows above 1 cannot be used with int8: its quantization ties the rows of a "
    "product together; leave it at 1, or serve fp32 or bf16."
)


def heading(ticket: Ticket) -> bool:
    """Its first segment decodes alone: it has not yet the steps of its first chunk."""
    head = ticket.running.get(0) if ticket.next_admit == 1 else None
    return head is not None and not head.cancelled and head.steps < FIRST_AUDIO_STEPS


class Batcher(ChunkDelivery):
    """Owns `engine`'s model from start() to close(): nothing else may use it meanwhile."""

    def __init__(
        self,
        engine: Engine,
        slots: int | None = None,
        segment_size: int = 50,
        max_waiting: int = 64,
        exact: bool = True,
        chunk_rows: int | None = None,
    ) -> None:
        model, loaded = engine.model, engine.loaded
        if model is None or loaded is None:
            raise StudioError("No model is loaded.")
        self.engine, self.model = engine, model
        self.random_weights = loaded.info.random_weights
        # None: from the device (on CUDA as many rows as free memory holds, else 16).
        self.slots = slots or engine.max_rows()
        self.segment_size, self.max_waiting = segment_size, max_waiting
        on_cuda = loaded.device.kind == "cuda"
        self._static, self._graphs = on_cuda, on_cuda and engine.cuda_graphs
        self.exact = exact
        # On the CPU, rows per product of the exact step (None: EXACT_CHUNK_ROWS, one): one
        # makes a lone request cost what synth does; more make many clients cheaper. Every
        # response equals its solo run at any value (the bits differ between values).
        if chunk_rows is not None and chunk_rows > 1 and loaded.precision.value == "int8":
            raise StudioError(INT8_CHUNKS)
        self.chunk_rows = chunk_rows
        # A shared request's rows run as one product, except under int8 (see INT8_CHUNKS: a
        # row's NaN would spoil its product-mates too): there every request stays exact.
        self.rows_may_share = loaded.precision.value != "int8"
        # The engine's, kept for the model's life: taken again before each run, so that after
        # a failure (the pool dropped it) a fresh one replaces it.
        self._decoder: FastDecoder | None = self._pooled()
        self.sampling = Sampling(0.3, 0.7, 20)  # SynthesisRequest's defaults
        self.stats = BatcherStats()
        self._busy = BusyClock(self.stats)  # the loop's time and the vocoder thread's, once
        # Called with the ticket id of every busy row after each step (tests, benchmarks).
        self.step_listeners: list[Callable[[list[int]], None]] = []
        self._tickets: list[Ticket] = []
        self._holding: list[Ticket] = []  # holds_audio tickets not released yet
        self._by_key: dict[int, tuple[Ticket, int]] = {}
        self._vocoders: dict[int, ChunkVocoder] = {}
        self._ids = count(1)
        self._keys = count()
        self._lock = threading.Condition()
        self._closed = False
        self._thread = threading.Thread(target=self._loop, name="batcher", daemon=True)
        # Vocoding beside the GPT's steps on the CPU (see _vocode): one thread, so chunks are
        # made and sent in the order they were planned. Deliveries to a request (chunks,
        # Finished, Failed) happen under _out, from whichever thread, never two at once.
        # On CUDA with Engine.vocoder_stream, chunks are vocoded on a second stream instead,
        # launched from this thread (no kernels from another thread while a graph is captured)
        # and handed over once their audio exists, in the order they were planned.
        self._side = vocoding.side_stream(model.device, engine.vocoder_stream)
        self._flying: list[FlyingChunk] = []
        plain = on_cuda or self._side is not None
        self._vocoding = None if plain else ThreadPoolExecutor(1, "batcher-vocoder")
        self._out = threading.RLock()

    # -- the batcher's thread ---------------------------------------------------------------
    @property
    def decoder(self) -> FastDecoder:
        """The decoder in use: the pool's, made again after a failure dropped it."""
        if self._decoder is None:
            self._decoder = self._pooled()
        return self._decoder

    def _pooled(self) -> FastDecoder:
        shape = DecoderShape(
            self.slots, self._static, self._graphs, self.exact, chunk_rows=self.chunk_rows
        )
        return self.engine.decoders.decoder(self.model, shape, FIRST_LENGTH)

    def _next_job(self) -> Job | None:
        """The decoder's source: the next segment of the ticket holding fewest rows (refined
        first, with others, when its request asks for refine)."""
        while True:
            with self._lock:
                self._drop_cancelled()
                ready = [t for t in self._tickets if self._admits(t)]
                if not ready or self._closed:  # closed: a cut-short refine is not redone
                    return None
                ready.sort(key=lambda t: (t.rows, t.id))
                ticket = ready[0]
                index = ticket.next_admit
                picks = None
                if ticket.order.refine is not None and index not in ticket.refined:
                    limit = min(self.slots, REFINE_BATCH)
                    picks = refine_picks(ticket, ready, limit, heads=index == 0)
                else:
                    ticket.next_admit += 1
                    ticket.rows += 1
                    self._count_waiting()
            if picks is None:
                break
            self._refine(picks)  # outside the lock; then choose again (anything may change)
        segment = ticket.segments[index]
        key = next(self._keys)
        cap = segment.step_cap
        text = ticket.refined.pop(index, None)
        if text is not None:  # refine adds pauses and fillers: room for them
            cap = min(MAX_STEP_CAP, max(cap, needed_steps(text)))
        # Random weights never say EOS reliably: hold it off so demo audio has the length
        # speech of that text would have (as the engine does).
        min_steps = cap if self.random_weights else 1
        job = Job(key, self._embedder(ticket, segment, text), cap, min_steps)
        job.prompt_len = len(text or segment.text) + 16  # an estimate until admitted
        job.seed = segment_seed(ticket.order.seed, index)
        job.sampling = ticket.order.sampling  # None: the run's, self.sampling
        job.shared = ticket.order.shared and self.rows_may_share
        ticket.running[index] = job
        self._by_key[key] = (ticket, index)
        self._vocoders[key] = ChunkVocoder(self.model)
        return job

    @staticmethod
    def _admits(ticket: Ticket) -> bool:
        return (
            not ticket.held_back
            and ticket.next_admit < len(ticket.segments)
            and not heading(ticket)
        )

    def _embedder(
        self, ticket: Ticket, segment: Segment, refined: str | None
    ) -> Callable[[], torch.Tensor]:
        def make() -> torch.Tensor:
            text = self.model.normalize(segment.text) if refined is None else refined
            order = ticket.order
            return self.model.embed(
                self.model.prompt_ids(text, order.speed, order.speaker), order.speaker
            )

        return make

    def _refine(self, picks: list[tuple[Ticket, int]]) -> None:
        device = self.engine.loaded.device.id if self.engine.loaded else "cpu"
        refine_segments(self.model, picks, self._fail, lambda: self._closed, device)

    def _drop_cancelled(self) -> None:
        for ticket in [t for t in self._tickets if t.cancelled]:
            self._tickets.remove(ticket)
            self.stats.cancelled += 1
            for job in list(ticket.running.values()):
                job.cancelled = True  # also a job admitted after cancel() looked
                self._forget(job)

    def _forget(self, job: Job) -> None:
        entry = self._by_key.pop(job.key, None)
        self._vocoders.pop(job.key, None)
        if entry is not None:
            entry[0].running.pop(entry[1], None)
            entry[0].rows -= 1

    def _on_step(self, keys: list[int]) -> None:
        self.stats.steps += len(keys)
        self.stats.rows_busy = len(keys)
        ids = [self._by_key[k][0].id for k in keys if k in self._by_key]
        for listener in list(self.step_listeners):
            listener(ids)

    def _loop(self) -> None:
        while True:
            with self._lock:
                # A ticket held back by its reader waits without a decode spinning for it.
                while not self._closed and not any(
                    t.cancelled or self._admits(t) for t in self._tickets
                ):
                    self._lock.wait()
                if self._closed:
                    break
            memory = False
            try:
                with self._busy.held():
                    self._run_decoder()
                    self._shrink_when_grown()
            except Exception as exc:  # a device failure: every request in flight gets it
                log.warning("batch failed: %s", exc)
                memory = out_of_memory(exc)
                if memory:  # requests keep the error, not the failed frames (the decoder's)
                    exc.__traceback__ = None
                self._fail_all(exc)
                if self._decoder is not None:  # its state is unknown now
                    self.engine.decoders.discard(self._decoder)
                    self._decoder = None
            finally:
                self.stats.rows_busy = 0
            if memory:  # outside the except block, whose traceback held the decoder
                release_memory(self.engine.loaded.device.id if self.engine.loaded else "cpu")
        self._fail_all(QueueFull("The server is shutting down."))
        if self._side is not None:
            self._side.close()

    def _shrink_when_grown(self) -> None:
        """Idle now: a cache one long segment grew for every slot (segment_size 500: 2,048
        positions, ~4 GB at 16 slots on the official model) is not kept for the server's
        life."""
        decoder = self._decoder
        if decoder is not None and decoder.max_len > KEEP_LENGTH:
            self.engine.decoders.discard(decoder)
            self._decoder = None
            del decoder
            release_memory(self.engine.loaded.device.id if self.engine.loaded else "cpu")

    def _run_decoder(self) -> None:
        decoder = self._decoder = self._pooled()
        closed = lambda: self._closed  # noqa: E731
        jobs = decoder.run(self._next_job, self.sampling, closed, self._on_step, self._row_failed)
        for ended in jobs:
            if ended is not None:
                self._vocode(ended, True)
                self._forget(ended)
                continue
            # After every step, so each segment's chunk boundaries fall at the same steps
            # whatever else runs (its audio bits depend on them).
            for job in decoder.active:
                vocoder = self._vocoders.get(job.key) if job is not None else None
                if job is not None and vocoder is not None and vocoder.ready(job.steps):
                    self._vocode(job, False)
            self._land()
        self._land(wait=True)
        with self._lock:
            self._drop_cancelled()

    def _row_failed(self, job: Job, exc: Exception) -> None:
        """The decoder's `failed`: one row's own failure fails its request alone. Out of
        memory is the device's: raised, it fails the batch."""
        if out_of_memory(exc):
            raise exc
        entry = self._by_key.get(job.key)
        if entry is not None:
            self._fail(entry[0], exc)

    def _fail(self, ticket: Ticket, exc: Exception) -> None:
        log.warning("request %d failed: %s", ticket.id, exc)
        with self._lock:
            if ticket in self._tickets:
                self._tickets.remove(ticket)
            for job in list(ticket.running.values()):
                job.cancelled = True  # the decoder frees its rows before the next step
                self._forget(job)
            self._count_waiting()
        with self._out:  # not beside a chunk the vocoder thread is giving it
            if not ticket.cancelled and not ticket.done:
                ticket.done = True
                self.stats.failed += 1
                ticket.give(Failed(exc))

    def _fail_all(self, exc: BaseException) -> None:
        with self._lock:
            tickets, self._tickets = self._tickets, []
        if self._decoder is not None:
            self._decoder.active[:] = [None] * self.slots
        self.stats.rows_busy = 0
        self._by_key.clear()
        self._vocoders.clear()
        self._settle()
        with self._out:
            for ticket in tickets:
                if not ticket.cancelled and not ticket.done:
                    ticket.done = True
                    self.stats.failed += 1
                    ticket.give(Failed(exc))
