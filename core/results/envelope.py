"""A result's waveform outline: the min and max of each bucket of samples, kept as the audio
grows, so the window draws an hour of audio from a few thousand points."""

import math
from typing import Any

import numpy as np

from chattts_studio.core import SAMPLE_RATE

ENVELOPE_BUCKETS = 2048  # about 4,000 points drawn, whatever the length
FIRST_BUCKET = 64  # samples per bucket while the audio is short (2.7 ms)


def envelope_of(audio: np.ndarray, bucket: int) -> tuple[np.ndarray, np.ndarray]:
    """(mins, maxs) per bucket of `bucket` samples over a whole buffer, the last bucket
    possibly short: what Envelope keeps incrementally, computed at once (for checks)."""
    data = np.asarray(audio, dtype=np.float32).reshape(-1)
    count = math.ceil(len(data) / bucket)
    whole = len(data) // bucket
    mins = np.empty(count, dtype=np.float32)
    maxs = np.empty(count, dtype=np.float32)
    if whole:
        rows = data[: whole * bucket].reshape(whole, bucket)
        mins[:whole], maxs[:whole] = rows.min(axis=1), rows.max(axis=1)
    if count > whole:
        mins[-1], maxs[-1] = data[whole * bucket :].min(), data[whole * bucket :].max()
    return mins, maxs


class Envelope:
    """Min and max per bucket of `bucket` samples, bucket k covering [k*bucket, (k+1)*bucket).
    When the buckets run out, neighbours merge and the width doubles: min/max merge exactly,
    so the result always equals envelope_of(whole audio, bucket)."""

    def __init__(self, capacity: int = ENVELOPE_BUCKETS, bucket: int = FIRST_BUCKET) -> None:
        self.capacity = capacity
        self.bucket = bucket
        self._mins = np.zeros(capacity, dtype=np.float32)
        self._maxs = np.zeros(capacity, dtype=np.float32)
        self.count = 0  # buckets in use; the last may be partly filled
        self.samples = 0
        self.version = 0  # changes with every update, so a view redraws only when it did

    @property
    def mins(self) -> np.ndarray:
        return self._mins[: self.count]

    @property
    def maxs(self) -> np.ndarray:
        return self._maxs[: self.count]

    def add(self, audio: np.ndarray) -> None:
        data = np.asarray(audio, dtype=np.float32).reshape(-1)
        pos = 0
        while pos < len(data):
            filled = self.samples % self.bucket
            if filled:  # top up the last, partly filled bucket
                part = data[pos : pos + self.bucket - filled]
                i = self.count - 1
                self._mins[i] = min(self._mins[i], part.min())
                self._maxs[i] = max(self._maxs[i], part.max())
            elif self.count == self.capacity:
                self._merge()
                continue
            else:
                rest = len(data) - pos
                whole = min(rest // self.bucket, self.capacity - self.count)
                if whole:
                    part = data[pos : pos + whole * self.bucket]
                    rows = part.reshape(whole, self.bucket)
                    self._mins[self.count : self.count + whole] = rows.min(axis=1)
                    self._maxs[self.count : self.count + whole] = rows.max(axis=1)
                    self.count += whole
                else:  # less than a bucket left: it starts a new, partly filled one
                    part = data[pos:]
                    self._mins[self.count], self._maxs[self.count] = part.min(), part.max()
                    self.count += 1
            pos += len(part)
            self.samples += len(part)
        self.version += 1

    def _merge(self) -> None:
        pairs = self.count // 2
        odd = self.count % 2
        mins, maxs = self._mins, self._maxs
        merged_min = np.minimum(mins[0 : 2 * pairs : 2], mins[1 : 2 * pairs : 2])
        merged_max = np.maximum(maxs[0 : 2 * pairs : 2], maxs[1 : 2 * pairs : 2])
        if odd:
            mins[pairs], maxs[pairs] = mins[self.count - 1], maxs[self.count - 1]
        mins[:pairs], maxs[:pairs] = merged_min, merged_max
        self.count = pairs + odd
        self.bucket *= 2

    def cut(self, samples: int) -> int:
        """Forget everything from the bucket holding sample `samples` on; return where the
        kept buckets end (the caller adds the samples from there to `samples` again)."""
        keep = min(samples // self.bucket, self.count)
        self.count = keep
        self.samples = keep * self.bucket
        self.version += 1
        return self.samples

    def points(self) -> tuple[np.ndarray, np.ndarray]:
        """(times in seconds, values) to draw: each bucket's min then max."""
        times = np.repeat(np.arange(self.count) * (self.bucket / SAMPLE_RATE), 2)
        values = np.empty(2 * self.count, dtype=np.float32)
        values[0::2], values[1::2] = self.mins, self.maxs
        return times, values

    def peak(self) -> float:
        if not self.count:
            return 0.0
        return float(max(-self.mins.min(), self.maxs.max()))

    def state(self) -> dict[str, Any]:
        return {"bucket": self.bucket, "samples": self.samples}

    def restore(self, mins: np.ndarray, maxs: np.ndarray, bucket: int, samples: int) -> None:
        count = min(len(mins), len(maxs), self.capacity)
        self._mins[:count], self._maxs[:count] = mins[:count], maxs[:count]
        self.count, self.bucket, self.samples = count, bucket, samples
        self.version += 1
