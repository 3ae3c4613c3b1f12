"""Finished segments' audio for the fast producer: the vocoder queue, and on CUDA the vocoder on
a second stream so the GPT's steps never wait for it (issue 34's "vocoder off the critical path").

Units of equal length share one vocoder call: ChatTTS pads a batch with zeros, which would change
the last ~50 steps of a shorter unit's audio, so only equal lengths are batched (their audio
equals one-at-a-time vocoding).

Inline (the lever off) `flush` vocodes and returns the audio at once, as before. With a side,
`flush` only launches the work and the GPT's next steps go on at once; `landed` hands over the
audio that exists, without waiting, in launch order, and `landed(wait=True)` waits for the rest
(the end of the job). The two sides:
- CUDA (`SideStream`): each group's hidden states are stacked on the GPT's stream (fresh copies
  the loop never writes again), the side stream waits for the GPT's stream up to that point,
  runs the DVAE decoder and Vocos, and copies the audio to pinned host memory behind an event
  (host_reads.audio_later). Until its audio is handed over, a flight holds every tensor the
  side stream reads or writes, so the caching allocator cannot give their memory to the GPT's
  stream while the vocoder still uses it.
- CPU (`VocoderThread`): the same call on a thread of its own (the Batcher's precedent for the
  speech API), so the GPT's step and the vocoder take turns on the cores instead of the step
  waiting; the same audio, bit for bit.
"""

import contextlib
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import torch

from chattts_studio.core.engine import host_reads
from chattts_studio.core.engine.decode.job import Job

if TYPE_CHECKING:
    from chattts_studio.core.engine.chattts.chat import ChatModel
    from chattts_studio.core.engine.metrics import LiveMetrics


@dataclass
class Launched:
    """A vocoder call under way and what it must keep alive until its audio is read."""

    audio: host_reads.LaterAudio
    holds: tuple[object, ...]


class SideStream:
    """A second CUDA stream on the model's device for the vocoder."""

    def __init__(self, device: torch.device) -> None:
        self.device = device
        self.stream = torch.cuda.Stream(device)

    @contextlib.contextmanager
    def after_current(self) -> Iterator[None]:
        """Run the block on the side stream, after everything queued on the current stream."""
        self.stream.wait_stream(torch.cuda.current_stream(self.device))
        with torch.cuda.stream(self.stream):
            yield

    def launch(self, model: "ChatModel", hiddens: list[torch.Tensor]) -> Launched:
        """Queue the vocoding of `hiddens` [steps, hidden] each (equal lengths) here; what the
        side stream reads and writes is held by the result until its audio is read."""
        with self.after_current():
            wavs = model.vocode_on_device(hiddens)
            audio = host_reads.audio_later(wavs)
        return Launched(audio, (hiddens, wavs))

    def close(self) -> None:
        pass


class VocoderThread:
    """The CPU's form: the vocoder on a thread of its own while the GPT steps on the others'
    cores (both engines' sessions sleep between calls, so the two take turns on the cores)."""

    def __init__(self) -> None:
        self.pool = ThreadPoolExecutor(1, "vocoder")

    def launch(self, model: "ChatModel", hiddens: list[torch.Tensor]) -> Launched:
        done = self.pool.submit(lambda: host_reads.audio(model.vocode_on_device(hiddens)))
        return Launched(host_reads.LaterAudio(done.done, done.result), (hiddens,))

    def close(self) -> None:
        self.pool.shutdown(wait=True)


Side = SideStream | VocoderThread


def side_stream(device: torch.device, wanted: bool) -> Side | None:
    """Where finished units are vocoded while the GPT steps on, when `wanted`: a second CUDA
    stream on a card, a thread of its own on the CPU; None: inline, on the GPT's own stream
    and thread. The tests replace this to run the queued form with stand-in seams."""
    if not wanted:
        return None
    return SideStream(device) if device.type == "cuda" else VocoderThread()


@dataclass
class Flight:
    """One vocoder call launched on the side, for these jobs."""

    jobs: list[Job]
    call: Launched


class VocodeQueue:
    def __init__(self, model: "ChatModel", live: "LiveMetrics", side: Side | None) -> None:
        self.model, self.live, self.side = model, live, side
        self.waiting: list[Job] = []
        self.flying: list[Flight] = []
        self.calls = 0  # vocoder calls made (for tests and figures)

    def add(self, job: Job) -> None:
        self.waiting.append(job)

    def __contains__(self, key: int) -> bool:
        return any(job.key == key for job in self.waiting)

    def __len__(self) -> int:
        return len(self.waiting)

    def flush(self) -> list[tuple[Job, np.ndarray]]:
        """Vocode everything waiting: each job with its audio, now; with a side stream, only
        the jobs of no steps now and the rest later, from `landed`. Jobs leave the queue only
        after their work is queued (an out-of-memory error here leaves them to be made again)."""
        groups: dict[int, list[Job]] = {}
        for job in self.waiting:
            groups.setdefault(job.steps, []).append(job)
        out: list[tuple[Job, np.ndarray]] = []
        for jobs in groups.values():
            if jobs[0].steps == 0:
                out += [(job, np.zeros(0, np.float32)) for job in jobs]
                continue
            hiddens = [torch.stack(job.hiddens) for job in jobs]
            self.calls += 1
            if self.side is None:
                self.live.update(stage="vocoder")
                out += zip(jobs, self.model.vocode(hiddens), strict=True)
                continue
            self.flying.append(Flight(jobs, self.side.launch(self.model, hiddens)))
        if self.side is None:
            self.live.update(stage="decode")
        self.waiting = []
        return out

    def landed(self, wait: bool = False) -> list[tuple[Job, np.ndarray]]:
        """The queued calls' audio that exists now, in the order they were queued (every
        call's when `wait`)."""
        out: list[tuple[Job, np.ndarray]] = []
        while self.flying and (wait or self.flying[0].call.audio.ready()):
            flight = self.flying.pop(0)
            out += zip(flight.jobs, flight.call.audio.result(), strict=True)
        return out

    def settle(self) -> None:
        """Wait for whatever is still queued, keeping nothing: the job is over (cancelled or
        failed) and the side stream must not read memory that is given back."""
        flying, self.flying = self.flying, []
        try:
            for flight in flying:
                with contextlib.suppress(Exception):  # the job's own error is the one raised
                    flight.call.audio.result()
        finally:
            if self.side is not None:
                self.side.close()
