"""Speed and memory figures, and the live snapshot another thread reads while a job runs."""

import os
import threading
import time
from collections import deque
from dataclasses import dataclass, field, replace
from typing import Any

import psutil

# torch is imported where CUDA or MPS is asked about, not here: the window imports this module
# for its live panel before the worker has imported torch (a start without the wait).


@dataclass(frozen=True)
class MemorySnapshot:
    """Memory at one moment. On CUDA the allocator's figures; on MPS Metal's figures and the
    process's RSS (the GPT runs on the CPU there); on CPU the process's RSS."""

    device: str
    allocated: int | None = None  # bytes held by tensors (CUDA)
    reserved: int | None = None  # bytes held by the caching allocator (CUDA)
    peak: int | None = None  # peak allocated since the job started (CUDA)
    free: int | None = None  # free on the device (CUDA)
    total: int | None = None  # the device's memory (CUDA)
    rss: int | None = None  # this process's resident memory (CPU)
    mps_allocated: int | None = None  # bytes held by MPS tensors (torch.mps)
    mps_driver: int | None = None  # bytes Metal's driver holds for this process (torch.mps)

    @property
    def in_use(self) -> int:
        """The one figure to plot: allocated on CUDA, RSS on CPU."""
        return int(self.allocated if self.allocated is not None else (self.rss or 0))

    def describe(self) -> str:
        mib = 2**20
        if self.allocated is not None:
            return (
                f"VRAM {self.allocated / mib:.0f} MiB allocated, "
                f"{(self.reserved or 0) / mib:.0f} MiB reserved, "
                f"peak {(self.peak or 0) / mib:.0f} MiB of {(self.total or 0) / mib:.0f} MiB"
            )
        if self.device.startswith("mps"):
            if self.mps_allocated is None and self.mps_driver is None:
                metal = "MPS figures unavailable in this PyTorch"
            else:
                metal = (
                    f"MPS {(self.mps_allocated or 0) / mib:.0f} MiB allocated, "
                    f"{(self.mps_driver or 0) / mib:.0f} MiB held by the Metal driver"
                )
            return (
                f"{metal}, process memory {(self.rss or 0) / mib:.0f} MiB "
                "(the GPT runs on the CPU there)"
            )
        return f"process memory {(self.rss or 0) / mib:.0f} MiB (CPU)"


def _mps_figure(name: str) -> int | None:
    """One of torch.mps's memory figures, or None where this PyTorch or platform lacks it."""
    import torch

    function = getattr(getattr(torch, "mps", None), name, None)
    if function is None:
        return None
    try:
        return int(function())
    except (RuntimeError, AttributeError, TypeError):
        return None


_process: psutil.Process | None = None


def _rss() -> int:
    """This process's resident memory. The Process is kept: making one reads /proc for its
    start time, and the live panel asks ten times a second from the UI thread."""
    global _process
    if _process is None or _process.pid != os.getpid():  # made again in a forked child
        _process = psutil.Process()
    return int(_process.memory_info().rss)


def memory_snapshot(device: str) -> MemorySnapshot:
    if device.startswith("cuda"):
        import torch

        if torch.cuda.is_available():
            index = torch.device(device).index or 0
            free, total = torch.cuda.mem_get_info(index)
            return MemorySnapshot(
                device,
                allocated=torch.cuda.memory_allocated(index),
                reserved=torch.cuda.memory_reserved(index),
                peak=torch.cuda.max_memory_allocated(index),
                free=free,
                total=total,
                rss=_rss(),
            )
    if device == "mps" or device.startswith("mps:"):
        return MemorySnapshot(
            device,
            rss=_rss(),
            mps_allocated=_mps_figure("current_allocated_memory"),
            mps_driver=_mps_figure("driver_allocated_memory"),
        )
    return MemorySnapshot(device, rss=_rss())


def reset_peak(device: str) -> None:
    if not device.startswith("cuda"):
        return
    import torch

    if torch.cuda.is_available():
        torch.cuda.reset_peak_memory_stats(torch.device(device).index or 0)


@dataclass(frozen=True)
class LiveSnapshot:
    """What the live panel draws; a frozen copy, safe to hand to another thread."""

    stage: str = "idle"  # idle, loading, refine, decode, vocoder, done, cancelled, error
    segment: int = 0  # 1-based segment being worked on
    segments: int = 0
    segments_done: int = 0
    steps_done: int = 0  # GPT steps of this job's finished and running segments (all rows)
    steps_left: int = 0  # expected steps still to come (text-derived, corrected as rows end)
    steps_per_second: float = 0.0  # over the last few seconds (shown)
    average_rate: float = 0.0  # steps per second since the job started (for the time left)
    audio_seconds: float = 0.0  # audio finished so far
    compute_seconds: float = 0.0  # wall time since the job started
    first_audio_seconds: float | None = None
    batch_size: int = 0
    refined: int = 0  # segments through ChatTTS's refine pass so far (refine on)
    memory: MemorySnapshot | None = None
    note: str = ""  # e.g. "out of memory: batch halved to 4"

    @property
    def steps_planned(self) -> int:
        """The job's expected total steps as known now."""
        return self.steps_done + self.steps_left

    @property
    def rtf(self) -> float | None:
        return self.compute_seconds / self.audio_seconds if self.audio_seconds > 0 else None

    @property
    def fraction(self) -> float:
        """0..1; exactly 1 once every segment has ended, and only then."""
        if self.segments and self.segments_done >= self.segments:
            return 1.0
        total = self.steps_done + self.steps_left
        return min(0.999, self.steps_done / total) if total else 0.0

    @property
    def seconds_left(self) -> float | None:
        """Expected steps left over the job's average rate so far: on an even text it falls
        steadily (vocoder pauses and refine batches are in the average, not in a jump)."""
        if self.average_rate <= 0 or self.steps_left <= 0:
            return None
        return self.steps_left / self.average_rate


class _Expected:
    """Expected steps still to come, corrected as segments run and end: a running segment
    counts what it still needs (at least one step, however far past its estimate it ran), an
    ended one nothing. Kept incrementally: a 100,000-character job has thousands of segments."""

    def __init__(self, expected: list[int]) -> None:
        self.expected = dict(enumerate(expected))  # by key, until the segment ends
        self.made: dict[int, int] = {}
        self.total = len(expected) and sum(max(e, 1) for e in expected)

    def _need(self, key: int) -> int:
        return max(self.expected[key] - self.made.get(key, 0), 1)

    def step(self, key: int) -> None:
        if key in self.expected:
            before = self._need(key)
            self.made[key] = self.made.get(key, 0) + 1
            self.total -= before - self._need(key)

    def end(self, key: int) -> int:
        """The segment ended: returns the steps it made."""
        if key not in self.expected:
            return 0
        self.total -= self._need(key)
        del self.expected[key]
        return self.made.pop(key, 0)

    def restart(self) -> int:
        """Running segments start over: returns the steps they had made."""
        lost = 0
        for key in list(self.made):
            before = self._need(key)
            lost += self.made.pop(key)
            self.total += self._need(key) - before
        return lost


@dataclass
class LiveMetrics:
    """Written by the synthesis thread, read by anyone at any moment (under a lock)."""

    device: str = "cpu"
    _snap: LiveSnapshot = field(default_factory=LiveSnapshot)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _started: float = 0.0
    _step_times: deque[tuple[float, int]] = field(default_factory=lambda: deque(maxlen=256))
    _expected: _Expected = field(default_factory=lambda: _Expected([]))

    def start(self, stage: str, expected_steps: list[int] | None = None) -> None:
        """A new job; `expected_steps[key]` is each segment's expected step count."""
        with self._lock:
            self._started = time.perf_counter()
            self._step_times.clear()
            self._expected = _Expected(expected_steps or [])
            self._snap = LiveSnapshot(
                stage=stage,
                segments=len(expected_steps or []),
                steps_left=self._expected.total,
                memory=self._snap.memory,
            )

    def update(self, **changes: Any) -> None:
        with self._lock:
            self._snap = replace(self._snap, **changes)

    def add_steps(self, keys: list[int]) -> None:
        """One GPT step of the segments `keys` (one row each) finished."""
        now = time.perf_counter()
        with self._lock:
            self._step_times.append((now, len(keys)))
            for key in keys:
                self._expected.step(key)
            done = self._snap.steps_done + len(keys)
            elapsed = now - self._started
            self._snap = replace(
                self._snap,
                steps_done=done,
                steps_left=self._expected.total,
                steps_per_second=self._rate(now),
                average_rate=done / elapsed if elapsed > 0 else 0.0,
            )

    def _rate(self, now: float) -> float:
        """Steps per second over the last few seconds: smooth enough for a time left."""
        window = [(t, n) for t, n in self._step_times if now - t <= 4.0]
        if len(window) < 2:
            return self._snap.steps_per_second
        span = window[-1][0] - window[0][0]
        return sum(n for _, n in window[1:]) / span if span > 0 else 0.0

    def segment_done(self, key: int) -> None:
        with self._lock:
            self._expected.end(key)
            self._snap = replace(
                self._snap,
                segments_done=self._snap.segments_done + 1,
                steps_left=self._expected.total,
            )

    def restarted(self) -> None:
        """Running segments start again (after out of memory): their steps are undone."""
        with self._lock:
            lost = self._expected.restart()
            self._snap = replace(
                self._snap,
                steps_done=self._snap.steps_done - lost,
                steps_left=self._expected.total,
            )

    def elapsed(self) -> float:
        return time.perf_counter() - self._started if self._started else 0.0

    def snapshot(self) -> LiveSnapshot:
        """A consistent copy with fresh memory and wall-clock figures."""
        memory = memory_snapshot(self.device)
        with self._lock:
            compute = (
                self.elapsed()
                if self._snap.stage not in ("idle", "done", "cancelled", "error")
                else self._snap.compute_seconds
            )
            self._snap = replace(self._snap, memory=memory, compute_seconds=compute)
            return self._snap
