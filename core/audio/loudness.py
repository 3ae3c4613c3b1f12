"""Streaming loudness normalisation: BS.1770-4 integrated loudness block by block, a true-peak
estimate, and the one gain that brings a chapter to its target under the peak ceiling. scipy is
imported late, as the window imports this.
"""

import math
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from chattts_studio.core import SAMPLE_RATE

DEFAULT_TARGET_LUFS = -16.0
DEFAULT_PEAK_DBTP = -1.0
BLOCK_SECONDS = 0.4  # BS.1770 gating block
OVERLAP = 0.75
ABSOLUTE_GATE = -70.0
RELATIVE_GATE = -10.0


class LoudnessMeter:
    """Feed the signal in pieces (any sizes) with add(); integrated() then gives what
    pyloudnorm.Meter(rate).integrated_loudness gives for the whole signal. Memory: two floats
    per 100 ms of audio (the running energy at each block edge)."""

    def __init__(self, rate: int = SAMPLE_RATE) -> None:
        import pyloudnorm

        self.rate = rate
        # pyloudnorm's own K-weighting stages (high shelf, then high pass), run with state.
        self._stages = [
            (f.b, f.a, f.passband_gain, np.zeros(max(len(f.a), len(f.b)) - 1))
            for f in pyloudnorm.Meter(rate)._filters.values()
        ]
        self.samples = 0
        self._energy = 0.0  # sum of squares of the filtered signal so far
        self._edges: dict[int, float] = {0: 0.0}  # sample position -> energy before it
        self._next = {False: 0, True: 0}  # the next block edge to record, lower/upper

    def _edge(self, j: int, upper: bool) -> int:
        # pyloudnorm's arithmetic exactly (int() of a float product), so edges match its own.
        step = 1.0 - OVERLAP
        return int(BLOCK_SECONDS * (j * step + (1 if upper else 0)) * self.rate)

    def add(self, audio: np.ndarray) -> None:
        data = np.asarray(audio, dtype=np.float64).reshape(-1)
        if not data.size:
            return
        from scipy.signal import lfilter

        for i, (b, a, gain, state) in enumerate(self._stages):
            data, final = lfilter(b, a, data, zi=state)
            self._stages[i] = (b, a, gain, final)
            data = gain * data
        cumulative = np.cumsum(np.square(data))
        start, end = self.samples, self.samples + len(data)
        # Record the energy at every block edge this piece reaches (blocks overlap: the
        # lower and the upper edges are followed separately).
        for upper in (False, True):
            j = self._next[upper]
            while (edge := self._edge(j, upper)) <= end:
                if edge > start:
                    self._edges[edge] = self._energy + float(cumulative[edge - start - 1])
                j += 1
            self._next[upper] = j
        self._energy += float(cumulative[-1])
        self.samples = end

    def integrated(self) -> float | None:
        """Integrated loudness in LUFS; None for audio shorter than one block; -inf for
        silence."""
        seconds = self.samples / self.rate
        if seconds <= BLOCK_SECONDS:
            return None
        step = 1.0 - OVERLAP
        blocks = int(np.round((seconds - BLOCK_SECONDS) / (BLOCK_SECONDS * step))) + 1
        scale = 1.0 / (BLOCK_SECONDS * self.rate)

        def energy_at(position: int) -> float:
            return self._edges[position] if position < self.samples else self._energy

        z = np.array(
            [
                scale * (energy_at(self._edge(j, True)) - energy_at(self._edge(j, False)))
                for j in range(blocks)
            ]
        )
        with np.errstate(divide="ignore"):
            levels = -0.691 + 10.0 * np.log10(z)
        gated = z[levels >= ABSOLUTE_GATE]
        if not gated.size:
            return -math.inf
        relative = -0.691 + 10.0 * math.log10(float(np.mean(gated))) + RELATIVE_GATE
        kept = z[(levels > relative) & (levels > ABSOLUTE_GATE)]
        if not kept.size:
            return -math.inf
        return -0.691 + 10.0 * math.log10(float(np.mean(kept)))


def true_peak(audio: np.ndarray) -> float:
    """The signal's true peak (linear), estimated by 4x oversampling as BS.1770-4 describes."""
    data = np.asarray(audio, dtype=np.float64).reshape(-1)
    if not data.size:
        return 0.0
    from scipy.signal import resample_poly

    return float(max(np.max(np.abs(data)), np.max(np.abs(resample_poly(data, 4, 1)))))


def db(linear: float) -> float:
    return 20.0 * math.log10(linear) if linear > 0 else -math.inf


@dataclass(frozen=True)
class LoudnessResult:
    """What normalisation did to one chapter, as it goes into the output's metadata."""

    target_lufs: float
    peak_ceiling_dbtp: float
    measured_lufs: float | None  # before; None: too short to measure
    measured_peak_dbtp: float
    gain_db: float
    result_lufs: float | None  # after
    result_peak_dbtp: float
    peak_limited: bool  # the gain was held back so the peak stays under the ceiling

    @property
    def gain(self) -> float:
        return float(10 ** (self.gain_db / 20))

    def describe(self) -> str:
        if self.result_lufs is None or not math.isfinite(self.result_lufs):
            return "loudness not changed (too short or silent to measure)"
        held = (
            f", held back by the {self.peak_ceiling_dbtp:g} dBTP peak ceiling"
            if self.peak_limited
            else ""
        )
        return (
            f"normalised to {self.result_lufs:.1f} LUFS (target {self.target_lufs:g} LUFS, "
            f"gain {self.gain_db:+.1f} dB, true peak {self.result_peak_dbtp:.1f} dBTP{held})"
        )

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        return {
            k: (None if isinstance(v, float) and not math.isfinite(v) else v)
            for k, v in data.items()
        }


def plan_gain(
    measured: float | None, peak: float, target: float, ceiling: float = DEFAULT_PEAK_DBTP
) -> LoudnessResult:
    """The gain that reaches `target` LUFS, lowered where the true peak would pass `ceiling`."""
    peak_db = db(peak)
    if measured is None or not math.isfinite(measured):
        return LoudnessResult(target, ceiling, measured, peak_db, 0.0, measured, peak_db, False)
    gain = target - measured
    limited = peak_db + gain > ceiling
    if limited:
        gain = ceiling - peak_db
    return LoudnessResult(
        target, ceiling, measured, peak_db, gain, measured + gain, peak_db + gain, limited
    )
