"""Speed and memory figures, and the live snapshot another thread reads while a job runs."""

import threading
import time
from collections import deque
from dataclasses import dataclass, field, replace

import psutil
import torch


@dataclass(frozen=True)
class MemorySnapshot:
    """Memory at one moment. On CUDA the allocator's figures; on CPU the process's RSS."""

    device: str
    allocated: int | None = None  # bytes held by tensors (CUDA)
    reserved: int | None = None  # bytes held by the caching allocator (CUDA)
    peak: int | None = None  # peak allocated since the job started (CUDA)
    free: int | None = None  # free on the device (CUDA)
    total: int | None = None  # the device's memory (CUDA)
    rss: int | None = None  # this process's resident memory (CPU)

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
        return f"process memory {(self.rss or 0) / mib:.0f} MiB (CPU)"


def memory_snapshot(device: str) -> MemorySnapshot:
    if device.startswith("cuda") and torch.cuda.is_available():
        index = torch.device(device).index or 0
        free, total = torch.cuda.mem_get_info(index)
        return MemorySnapshot(
            device,
            allocated=torch.cuda.memory_allocated(index),
            reserved=torch.cuda.memory_reserved(index),
            peak=torch.cuda.max_memory_allocated(index),
            free=free,
            total=total,
            rss=psutil.Process().memory_info().rss,
        )
    return MemorySnapshot(device, rss=psutil.Process().memory_info().rss)


def reset_peak(device: str) -> None:
    if device.startswith("cuda") and torch.cuda.is_available():
        torch.cuda.reset_peak_memory_stats(torch.device(device).index or 0)


@dataclass(frozen=True)
class LiveSnapshot:
    """What the live panel draws; a frozen copy, safe to hand to another thread."""

    stage: str = "idle"  # idle, loading, refine, decode, vocoder, done, cancelled, error
    segment: int = 0  # 1-based segment being worked on
    segments: int = 0
    steps_done: int = 0  # GPT steps finished in this job (all rows of a batch count)
    steps_planned: int = 0
    steps_per_second: float = 0.0  # over the last second or so
    audio_seconds: float = 0.0  # audio finished so far
    compute_seconds: float = 0.0  # wall time since the job started
    first_audio_seconds: float | None = None
    batch_size: int = 0
    memory: MemorySnapshot | None = None
    note: str = ""  # e.g. "out of memory: batch halved to 4"

    @property
    def rtf(self) -> float | None:
        return self.compute_seconds / self.audio_seconds if self.audio_seconds > 0 else None

    @property
    def fraction(self) -> float:
        return min(1.0, self.steps_done / self.steps_planned) if self.steps_planned else 0.0


@dataclass
class LiveMetrics:
    """Written by the synthesis thread, read by anyone at any moment (under a lock)."""

    device: str = "cpu"
    _snap: LiveSnapshot = field(default_factory=LiveSnapshot)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _started: float = 0.0
    _step_times: deque[tuple[float, int]] = field(default_factory=lambda: deque(maxlen=64))

    def start(self, stage: str, segments: int = 0, steps_planned: int = 0) -> None:
        with self._lock:
            self._started = time.perf_counter()
            self._step_times.clear()
            self._snap = LiveSnapshot(
                stage=stage,
                segments=segments,
                steps_planned=steps_planned,
                memory=self._snap.memory,
            )

    def update(self, **changes: object) -> None:
        with self._lock:
            self._snap = replace(self._snap, **changes)  # type: ignore[arg-type]

    def add_steps(self, rows: int) -> None:
        """One GPT step of `rows` sequences finished."""
        now = time.perf_counter()
        with self._lock:
            self._step_times.append((now, rows))
            window = [(t, n) for t, n in self._step_times if now - t <= 1.5]
            rate = 0.0
            if len(window) >= 2:
                span = window[-1][0] - window[0][0]
                rate = sum(n for _, n in window[1:]) / span if span > 0 else 0.0
            self._snap = replace(
                self._snap, steps_done=self._snap.steps_done + rows, steps_per_second=rate
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
