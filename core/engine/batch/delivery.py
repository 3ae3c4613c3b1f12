"""The continuous batch's audio out: each segment's chunks vocoded and delivered to its request in
order (batcher.py runs the decode).

On the CPU a chunk is vocoded on the vocoder thread while the GPT steps on; on CUDA inline (a
second thread's kernels would break graph capture) or, with Engine.vocoder_stream, on a second
stream launched from the batcher's thread (decode/vocoding.py). The audio is the same either way.
Every delivery (chunk, Finished, Failed) is made under `_out`, so nothing follows a Failed."""

import contextlib
import threading
from dataclasses import dataclass

import numpy as np

from chattts_studio.core import SAMPLE_RATE
from chattts_studio.core.engine.batch.tickets import BusyClock, Finished, Ticket, TicketDesk
from chattts_studio.core.engine.decode import vocoding
from chattts_studio.core.engine.decode.job import Job
from chattts_studio.core.engine.decode.streaming import ChunkVocoder, Window
from chattts_studio.core.engine.pipeline import out_of_memory
from chattts_studio.core.engine.request import AudioChunk


@dataclass
class FlyingChunk:
    """A chunk launched on the vocoder's side stream (CUDA): handed over once its audio exists
    (the call holds what the side stream reads and writes until then)."""

    entry: tuple[Ticket, int]
    vocoder: ChunkVocoder
    window: Window | None
    final: bool
    call: vocoding.Launched | None = None  # None: an empty window, nothing to vocode

    def ready(self) -> bool:
        return self.call is None or self.call.audio.ready()


class ChunkDelivery(TicketDesk):
    """The Batcher's chunks: planned on its thread, vocoded, sent in each request's order."""

    _by_key: dict[int, tuple[Ticket, int]]
    _vocoders: dict[int, ChunkVocoder]
    _side: vocoding.Side | None
    _flying: list[FlyingChunk]
    _busy: BusyClock
    _out: threading.RLock

    def _fail(self, ticket: Ticket, exc: Exception) -> None:
        raise NotImplementedError  # the Batcher's: fails one request

    def _row_failed(self, job: Job, exc: Exception) -> None:
        raise NotImplementedError  # the Batcher's: one row's own failure

    def _vocode(self, job: Job, final: bool) -> None:
        """Plan the job's next chunk now (its schedule depends on its steps alone); vocode and
        send it on the vocoder thread on the CPU, so the GPT steps on meanwhile (its audio is
        the same either way: the same windows in the same order), here on CUDA (kernels from a
        second thread would break the decoder's CUDA graph capture)."""
        entry, vocoder = self._by_key.get(job.key), self._vocoders.get(job.key)
        if entry is None or vocoder is None or entry[0].cancelled:
            return
        try:
            window = vocoder.plan(job.hiddens, final)
        except Exception as exc:  # as for its decode, its own (out of memory: the batch's)
            self._row_failed(job, exc)
            return
        if final:
            entry[0].steps += job.steps
            job.hiddens, job.tokens = [], []  # its audio is planned: the window holds them
        if self._side is not None:
            self._launch(entry, vocoder, window, final)
        elif self._vocoding is None:
            self._send_chunk(entry, vocoder, window, final)
        else:
            self._vocoding.submit(self._send_chunk, entry, vocoder, window, final)

    def _launch(
        self, entry: tuple[Ticket, int], vocoder: ChunkVocoder, window: Window | None, final: bool
    ) -> None:
        """Queue the chunk's vocoding on the side stream (an empty window too, so that it is
        handed over in its place in the order)."""
        chunk = FlyingChunk(entry, vocoder, window, final)
        if window is not None:
            assert self._side is not None
            try:
                chunk.call = self._side.launch(self.model, [window.hidden])
            except Exception as exc:  # as for a chunk inline: out of memory is the batch's
                if out_of_memory(exc):
                    raise
                self._fail(entry[0], exc)
                return
        self._flying.append(chunk)

    def _land(self, wait: bool = False) -> None:
        """Hand over the side stream's chunks whose audio exists (all of them when `wait`),
        in the order they were launched."""
        while self._flying and (wait or self._flying[0].ready()):
            chunk = self._flying.pop(0)
            audio = np.zeros(0, np.float32)
            if chunk.window is not None and chunk.call is not None:
                audio = chunk.vocoder.keep(chunk.window, chunk.call.audio.result()[0])
            self._deliver(chunk.entry, chunk.vocoder, audio, chunk.final)

    def _send_chunk(
        self, entry: tuple[Ticket, int], vocoder: ChunkVocoder, window: Window | None, final: bool
    ) -> None:
        """Vocode one planned chunk and send out whatever is next in its request's order."""
        ticket = entry[0]
        if ticket.cancelled or ticket.done:
            return
        try:
            with self._busy.held():  # on the vocoder thread, work the loop's time misses
                audio = np.zeros(0, dtype=np.float32) if window is None else vocoder.render(window)
        except Exception as exc:  # this job's vocoding; as for its decode, its own
            if out_of_memory(exc) and self._vocoding is None:
                raise  # the device's: it fails the batch (the decode loop's handler)
            self._fail(ticket, exc)
            return
        self._deliver(entry, vocoder, audio, final)

    def _deliver(
        self, entry: tuple[Ticket, int], vocoder: ChunkVocoder, audio: np.ndarray, final: bool
    ) -> None:
        """Send a made chunk and whatever is next in its request's order."""
        ticket, index = entry
        if ticket.cancelled or ticket.done:
            return
        if final:
            self.stats.audio_seconds += len(vocoder.audio()) / SAMPLE_RATE
        with self._out:
            if ticket.cancelled or ticket.done:  # failed meanwhile: nothing after Failed
                return
            ticket.waiting.setdefault(index, []).append(AudioChunk(index, audio, final))
            self._send(ticket)

    def _send(self, ticket: Ticket) -> None:
        if ticket.send_in_order() and not ticket.done:
            ticket.done = True
            with self._lock:
                if ticket in self._tickets:
                    self._tickets.remove(ticket)
            self.stats.completed += 1
            ticket.give(Finished(ticket.steps, ticket.samples / SAMPLE_RATE))

    def _settle(self) -> None:
        """Wait for the chunks still on the side stream and drop them: the batch failed or
        closed, and the side stream must not use memory given back."""
        flying, self._flying = self._flying, []
        for chunk in flying:
            if chunk.call is not None:
                with contextlib.suppress(Exception):  # the batch's own error is the one given
                    chunk.call.audio.result()
