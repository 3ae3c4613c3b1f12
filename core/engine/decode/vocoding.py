"""Finished segments' audio for the fast producer: the vocoder queue, and on CUDA the vocoder on
a second stream so the GPT's steps never wait for it (issue 34's "vocoder off the critical path").

Units of equal length share one vocoder call: ChatTTS pads a batch with zeros, which would change
the last ~50 steps of a shorter unit's audio, so only equal lengths are batched (their audio
equals one-at-a-time vocoding).

Without a side stream (the CPU, or the lever off) `flush` vocodes and returns the audio at once,
as before. With one, `flush` only queues the work: each group's hidden states are stacked on
the GPT's stream (fresh copies the loop never writes again), the side stream waits for the
GPT's stream up to that point, runs the DVAE decoder and Vocos, and copies the audio to pinned
host memory behind an event (host_reads.audio_later). The GPT's next steps are queued at once;
`landed` hands over the audio whose event has completed, without waiting, and `landed(wait=
True)` waits for the rest (the end of the job). Until its audio is handed over, a flight holds
every tensor the side stream reads or writes, so the caching allocator cannot give their memory
to the GPT's stream while the vocoder still uses it.
"""

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import torch

from chattts_studio.core.engine import host_reads
from chattts_studio.core.engine.decode.job import Job

if TYPE_CHECKING:
    from chattts_studio.core.engine.chattts.chat import ChatModel
    from chattts_studio.core.engine.metrics import LiveMetrics


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


def side_stream(device: torch.device, wanted: bool) -> SideStream | None:
    """The vocoder's stream: a second one on CUDA when `wanted`; None (the GPT's own) else.
    The tests replace this to run the queued form on the CPU and on fake CUDA."""
    return SideStream(device) if wanted and device.type == "cuda" else None


@dataclass
class Flight:
    """One vocoder call queued on the side stream, and what it must keep alive until done."""

    jobs: list[Job]
    audio: host_reads.LaterAudio
    holds: tuple[object, ...]


class VocodeQueue:
    def __init__(self, model: "ChatModel", live: "LiveMetrics", side: SideStream | None) -> None:
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
            with self.side.after_current():
                wavs = self.model.vocode_on_device(hiddens)
                later = host_reads.audio_later(wavs)
            self.flying.append(Flight(jobs, later, (hiddens, wavs)))
        if self.side is None:
            self.live.update(stage="decode")
        self.waiting = []
        return out

    def landed(self, wait: bool = False) -> list[tuple[Job, np.ndarray]]:
        """The queued calls' audio that exists now, in the order they were queued (every
        call's when `wait`)."""
        out: list[tuple[Job, np.ndarray]] = []
        while self.flying and (wait or self.flying[0].audio.ready()):
            flight = self.flying.pop(0)
            out += zip(flight.jobs, flight.audio.result(), strict=True)
        return out

    def settle(self) -> None:
        """Wait for whatever is still queued, keeping nothing: the job is over (cancelled or
        failed) and the side stream must not read memory that is given back."""
        for flight in self.flying:
            flight.audio.result()
        self.flying = []
