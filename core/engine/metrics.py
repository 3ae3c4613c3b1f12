"""Speed and memory figures, and the live snapshot another thread reads while a job runs."""

import os
import threading
import time
from collections import deque
from dataclasses import dataclass, field, replace
from typing import Any

import psutil

from chattts_studio.core.engine.progress import RowSteps, StepCosts, WorkCosts, batched_seconds

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
    in_flight: int = 0  # segments whose rows are decoding now (batched together)
    steps_done: int = 0  # GPT steps of this job's finished and running segments (all rows)
    steps_left: int = 0  # expected steps still to come (corrected as rows run and end)
    steps_per_second: float = 0.0  # over the last few seconds (shown)
    average_rate: float = 0.0  # steps per second since the job started
    audio_seconds: float = 0.0  # audio made so far (finished segments and streamed chunks)
    compute_seconds: float = 0.0  # wall time since the job started
    first_audio_seconds: float | None = None
    batch_size: int = 0
    refined: int = 0  # segments through ChatTTS's refine pass so far (refine on)
    refine_rows: int = 0  # texts in the refine pass running now (0: none runs)
    refine_steps: int = 0  # its steps so far
    refine_limit: int = 0  # the most steps it may take
    memory: MemorySnapshot | None = None
    note: str = ""  # e.g. "out of memory: batch halved to 4"
    job: int = 0  # which engine job this is (counts up): the window tells its own from stale
    work_left: float | None = None  # seconds of measured work still to come; None: unknown
    shown_fraction: float = 0.0  # the fraction reached so far (the bar never goes back)

    @property
    def steps_planned(self) -> int:
        """The job's expected total steps as known now."""
        return self.steps_done + self.steps_left

    @property
    def rtf(self) -> float | None:
        return self.compute_seconds / self.audio_seconds if self.audio_seconds > 0 else None

    @property
    def finished(self) -> bool:
        return bool(self.segments) and self.segments_done >= self.segments

    @property
    def fraction(self) -> float:
        """0..1 of the job's time: the wall time so far over itself plus the work still to
        come (GPT steps, refine, vocoder, at their measured costs). Exactly 1 once every
        segment has ended and only then; it never goes back within a job."""
        if self.finished:
            return 1.0
        return min(0.999, max(self.shown_fraction, self._time_fraction()))

    def _time_fraction(self) -> float:
        if self.work_left is None or self.compute_seconds <= 0:
            return 0.0
        return self.compute_seconds / (self.compute_seconds + self.work_left)

    @property
    def seconds_left(self) -> float | None:
        """The work still to come at its measured costs; None while a cost is unknown. Never
        0 while work remains (a tenth of a second at least)."""
        if self.finished or self.work_left is None:
            return None
        return max(0.1, self.work_left)


@dataclass
class LiveMetrics:
    """Written by the synthesis thread, read by anyone at any moment (under a lock)."""

    device: str = "cpu"
    _snap: LiveSnapshot = field(default_factory=LiveSnapshot)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _started: float = 0.0
    _step_times: deque[tuple[float, int]] = field(default_factory=lambda: deque(maxlen=256))
    _expected: RowSteps = field(default_factory=lambda: RowSteps([]))
    _costs: WorkCosts = field(default_factory=WorkCosts)
    _step_costs: StepCosts = field(default_factory=StepCosts)
    # When the last step ended, the aside seconds by then, and its rows.
    _last_step: tuple[float, float, int] | None = None
    _most_rows: int = 0  # the most rows a step has run (the batch, where none was said)
    _refine_last: float | None = None  # when the running pass's last step ended
    _refine_total: int = 0  # segments the job refines (0: refine off)
    _refine_group: int = 1  # texts a pass refines together (after a first one alone)
    # The running pass: when it began, the seconds spent in it, the stage to go back to.
    _refine_pass: tuple[float, float, str] | None = None

    def start(
        self,
        stage: str,
        expected_steps: list[int] | None = None,
        caps: list[int] | None = None,
        refine: int = 0,
        refine_group: int = 1,
    ) -> None:
        """A new job; `expected_steps[key]` is each segment's expected step count and
        `caps[key]` the most it may take; `refine`: how many texts go through refine, passes
        of `refine_group`."""
        with self._lock:
            self._started = time.perf_counter()
            self._step_times.clear()
            self._expected = RowSteps(expected_steps or [], caps)
            self._costs = WorkCosts()
            self._step_costs = StepCosts()
            self._last_step = None
            self._most_rows = 0
            self._refine_total = refine
            self._refine_group = max(1, refine_group)
            self._refine_pass = None
            self._snap = LiveSnapshot(
                stage=stage,
                segments=len(expected_steps or []),
                steps_left=self._expected.total,
                memory=self._snap.memory,
                job=self._snap.job + 1,
            )

    def update(self, **changes: Any) -> None:
        with self._lock:
            self._snap = replace(self._snap, **changes)

    def expect(self, key: int, expected: int, cap: int) -> None:
        """A segment's estimate and cap once its model text is final (after refine)."""
        with self._lock:
            self._expected.expect(key, expected, cap)
            self._snap = replace(self._snap, steps_left=self._expected.total)

    def add_steps(self, keys: list[int]) -> None:
        """One GPT step of the segments `keys` (one row each) finished."""
        now = time.perf_counter()
        with self._lock:
            self._step_times.append((now, len(keys)))
            costs = self._costs
            if costs.first_step is None:
                costs.first_step = now
            else:
                costs.step_calls += 1
                costs.row_steps += len(keys)
            if self._last_step is not None:  # this step's own seconds: not refine's, vocoder's
                at, aside, rows = self._last_step
                if len(keys) <= rows:  # rows that joined were prefilled: a one-off cost
                    self._step_costs.add(len(keys), now - at - (costs.aside - aside))
            self._last_step = (now, costs.aside, len(keys))
            self._most_rows = max(self._most_rows, len(keys))
            for key in keys:
                self._expected.step(key)
            done = self._snap.steps_done + len(keys)
            elapsed = now - self._started
            self._snap = replace(
                self._snap,
                steps_done=done,
                steps_left=self._expected.total,
                in_flight=self._expected.in_flight,
                steps_per_second=self._rate(now),
                average_rate=done / elapsed if elapsed > 0 else 0.0,
            )

    def row_ended(self, key: int) -> None:
        """The segment's row stopped decoding; its audio is made later (segment_done)."""
        with self._lock:
            self._expected.row_ended(key)
            self._snap = replace(
                self._snap, steps_left=self._expected.total, in_flight=self._expected.in_flight
            )

    def vocoded(self, steps: int, seconds: float) -> None:
        """The vocoder turned `steps` GPT steps into audio in `seconds` (its measured cost)."""
        with self._lock:
            costs = self._costs
            costs.vocoder_seconds += seconds
            costs.vocoder_steps += steps
            if costs.first_step is not None:
                costs.aside += seconds

    def refine_begin(self, rows: int, limit: int) -> None:
        """A refine pass over `rows` texts starts; it takes at most `limit` steps."""
        with self._lock:
            self._refine_pass = (time.perf_counter(), 0.0, self._snap.stage)
            self._refine_last = None
            self._snap = replace(
                self._snap, stage="refine", refine_rows=rows, refine_steps=0, refine_limit=limit
            )

    def refine_step(self) -> None:
        """A step of the running pass ended; its seconds (after the first, which prefills)
        tell how a row adds to a step's cost (StepCosts.row_share)."""
        now = time.perf_counter()
        with self._lock:
            self._costs.refine_steps += 1
            if self._snap.refine_steps and self._refine_last is not None:
                self._step_costs.refine(self._snap.refine_rows, now - self._refine_last)
            self._refine_last = now
            self._snap = replace(self._snap, refine_steps=self._snap.refine_steps + 1)

    def refine_time(self, seconds: float) -> None:
        """`seconds` spent in the running pass."""
        with self._lock:
            costs = self._costs
            costs.refine_seconds += seconds
            if costs.first_step is not None:
                costs.aside += seconds
            if self._refine_pass is not None:
                began, spent, stage = self._refine_pass
                self._refine_pass = (began, spent + seconds, stage)

    def refine_end(self, refined: int) -> None:
        """The pass ended: `refined` segments are refined in all."""
        with self._lock:
            costs = self._costs
            stage = self._snap.stage
            if self._refine_pass is not None:
                _began, spent, stage = self._refine_pass
                costs.pass_seconds += spent
                costs.passes += 1
            costs.refined += self._snap.refine_rows
            self._refine_pass = None
            self._snap = replace(self._snap, stage=stage, refined=refined, refine_rows=0)

    def _rate(self, now: float) -> float:
        """Steps per second over the last few seconds: smooth enough for a time left."""
        window = [(t, n) for t, n in self._step_times if now - t <= 4.0]
        if len(window) < 2:
            return self._snap.steps_per_second
        span = window[-1][0] - window[0][0]
        return sum(n for _, n in window[1:]) / span if span > 0 else 0.0

    def _work_left(self, now: float) -> float | None:
        """Seconds of work still to come at this job's measured costs, or None while a cost
        that matters is unknown: GPT steps (the rows to come batched as the decoder batches
        them, at the job's fitted step cost), refine of the segments still unrefined, and the
        vocoder."""
        costs, expected = self._costs, self._expected
        if not self._snap.segments:
            return None  # a load: no work of these kinds to price
        left = 0.0
        snap = self._snap
        if self._refine_pass is not None:  # the running pass: its steps to its limit
            if not snap.refine_steps:
                return None
            per_step = (now - self._refine_pass[0]) / snap.refine_steps
            left += max(0, snap.refine_limit - snap.refine_steps) * per_step
        if costs.passes:
            # A pass costs about the same whatever its rows (its steps run them together).
            per_pass = costs.pass_seconds / costs.passes
            unrefined = max(0, self._refine_total - snap.refined - snap.refine_rows)
            left += -(-unrefined // self._refine_group) * per_pass
        if expected.total:
            fit = self._step_costs.cost()
            if fit is None:
                return None
            running, waiting = expected.queue()
            slots = max(1, self._snap.batch_size, self._most_rows)
            left += batched_seconds(slots, running, waiting, fit)
        if costs.vocoder_steps:
            left += expected.unvocoded * costs.vocoder_seconds / costs.vocoder_steps
        return left

    def segment_done(self, key: int) -> None:
        with self._lock:
            self._expected.end(key)
            self._snap = replace(
                self._snap,
                segments_done=self._snap.segments_done + 1,
                steps_left=self._expected.total,
                in_flight=self._expected.in_flight,
            )

    def restarted(self) -> None:
        """Running segments start again (after out of memory): their steps are undone."""
        with self._lock:
            lost = self._expected.restart()
            self._snap = replace(
                self._snap,
                steps_done=self._snap.steps_done - lost,
                steps_left=self._expected.total,
                in_flight=self._expected.in_flight,
            )

    def elapsed(self) -> float:
        return time.perf_counter() - self._started if self._started else 0.0

    def snapshot(self) -> LiveSnapshot:
        """A consistent copy with fresh memory, wall-clock and time-left figures."""
        memory = memory_snapshot(self.device)
        with self._lock:
            running = self._snap.stage not in ("idle", "done", "cancelled", "error")
            compute = self.elapsed() if running else self._snap.compute_seconds
            left = self._work_left(time.perf_counter()) if running else self._snap.work_left
            snap = replace(self._snap, memory=memory, compute_seconds=compute, work_left=left)
            self._snap = replace(snap, shown_fraction=snap.fraction)
            return self._snap
