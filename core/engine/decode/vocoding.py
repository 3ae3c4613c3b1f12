"""Finished segments' audio for the fast producer: the vocoder queue, and optionally the vocoder
beside the GPT's steps so they never wait for it.

Only units of equal length share a call (ChatTTS's zero padding would change a shorter unit's end).
Inline, `flush` returns the audio; with a side it only launches the work, and `landed` hands over
what exists, in launch order. `SideStream` (CUDA): a second stream, audio copied to pinned memory,
every tensor held until handed over. `VocoderThread` (CPU): the same bits."""

import contextlib
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import torch

from chattts_studio.core.engine.decode import host_reads
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
