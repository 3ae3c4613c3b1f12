"""What a synthesis job still has to do, in GPT steps per segment and in seconds of each kind
of work at the job's measured costs: the live panel's bar and time left are made of it."""

import heapq
import statistics
from collections import deque
from dataclasses import dataclass, field


def remaining(expected: int, cap: int, made: int) -> int:
    """Steps a running segment still needs: what its estimate says, but once it runs past
    the estimate a quarter of what it made (a longer segment than thought is likely longer
    still), never past its cap, and at least one while it runs."""
    return max(1, min(cap - made, max(expected - made, -(-made // 4))))


class RowSteps:
    """Expected steps still to come, corrected as segments run and end (see `remaining`).
    A segment whose text is not final yet (refine runs a batch ahead) keeps its plan's
    estimate scaled by how much the final estimates of the segments before it grew: refine on
    random weights makes texts several times longer than planned. Kept incrementally: a
    100,000-character job has thousands of segments."""

    def __init__(self, expected: list[int], caps: list[int] | None = None) -> None:
        self.expected = dict(enumerate(expected))  # by key, until the segment's row ends
        self.caps = dict(enumerate(caps or [max(e, 1) * 4 for e in expected]))
        self.made: dict[int, int] = {}
        self.decoded: dict[int, int] = {}  # rows ended, audio not made yet: their steps
        self.pending = set(self.expected)  # estimates not final yet
        self.pending_raw = sum(max(e, 1) for e in expected)
        self.known = 0  # what the segments with final estimates still need
        self.planned, self.final = 0, 0  # plan's and final estimates of finalized segments

    @property
    def growth(self) -> float:
        return self.final / self.planned if self.planned else 1.0

    @property
    def total(self) -> int:
        return self.known + round(self.pending_raw * self.growth)

    def _need(self, key: int) -> int:
        made = self.made.get(key, 0)
        expected = self.expected[key]
        return (
            remaining(expected, max(self.caps.get(key, expected), 1), made)
            if made
            else max(expected, 1)
        )

    def _settle(self, key: int) -> None:
        """The key's estimate counts as it is from now on (a row took it)."""
        if key in self.pending:
            self.pending.discard(key)
            self.pending_raw -= max(self.expected[key], 1)
            self.known += self._need(key)

    @property
    def in_flight(self) -> int:
        return len(self.made)

    @property
    def unvocoded(self) -> int:
        """Steps whose audio is still to be made: rows ended or running, and rows to come."""
        return sum(self.decoded.values()) + sum(self.made.values()) + self.total

    def queue(self) -> tuple[list[int], list[int]]:
        """Steps each running row still needs, and each segment not started yet (key order;
        one whose text is not final counted as the final ones grew)."""
        growth = self.growth
        running = [self._need(key) for key in self.made]
        waiting = [
            max(1, round(max(self.expected[key], 1) * growth))
            if key in self.pending
            else self._need(key)
            for key in sorted(self.expected)
            if key not in self.made
        ]
        return running, waiting

    def longest(self) -> int:
        """The most steps one running row still needs (the decode's critical path)."""
        return max((self._need(k) for k in self.made), default=0)

    def expect(self, key: int, expected: int, cap: int) -> None:
        """The segment's estimate and cap as known once its text is final (refined)."""
        if key not in self.expected:
            return
        if key in self.pending:
            self.planned += max(self.expected[key], 1)
            self.final += max(expected, 1)
            self._settle(key)
        self.known -= self._need(key)
        self.expected[key], self.caps[key] = max(expected, 1), max(cap, 1)
        self.known += self._need(key)

    def step(self, key: int) -> None:
        if key in self.expected:
            self._settle(key)
            before = self._need(key)
            self.made[key] = self.made.get(key, 0) + 1
            self.known -= before - self._need(key)

    def _drop(self, key: int) -> int:
        """The key leaves the estimate: returns the steps it made."""
        if key in self.pending:
            self._settle(key)
        self.known -= self._need(key)
        del self.expected[key]
        return self.made.pop(key, 0)

    def row_ended(self, key: int) -> None:
        """Its row stopped decoding: no more steps, its audio still to come."""
        if key in self.expected:
            self.decoded[key] = self._drop(key)

    def end(self, key: int) -> int:
        """The segment ended (its audio exists): returns the steps it made."""
        if key in self.decoded:
            return self.decoded.pop(key)
        return self._drop(key) if key in self.expected else 0

    def restart(self) -> int:
        """Running segments start over: returns the steps they had made."""
        lost = 0
        for key in list(self.made):
            before = self._need(key)
            lost += self.made.pop(key)
            self.known += self._need(key) - before
        for key, made in list(self.decoded.items()):
            lost += made
            del self.decoded[key]
            self.expected[key] = max(made, 1)
            self.known += self._need(key)
        return lost


@dataclass
class WorkCosts:
    """Measured costs of one job's kinds of work: wall seconds spent in each and what they
    made, so the work still to come can be priced in seconds."""

    first_step: float | None = None  # when the first decode step ended
    step_calls: int = 0  # decode steps (all rows at once) since the first
    row_steps: int = 0  # row-steps since the first step
    vocoder_seconds: float = 0.0
    vocoder_steps: int = 0
    refine_seconds: float = 0.0
    refined: int = 0  # texts refined
    passes: int = 0  # refine passes ended
    pass_seconds: float = 0.0  # the seconds of those passes
    refine_steps: int = 0
    aside: float = 0.0  # vocoder and refine seconds since the first decode step

    def decode_seconds(self, now: float) -> float:
        return max(0.0, now - (self.first_step or now) - self.aside)


PRIOR_ROW_SHARE = 0.1  # a row's share of a one-row step, until measured (the CPU bench's)


@dataclass
class StepCosts:
    """A decode step's seconds as a + b x rows, fitted to the job's own steps: a step of
    eight rows costs far less than eight of one (the weights are read once a step), so a job
    whose first row ran alone must not price the full batch's steps at that row's cost."""

    # The recent steps: the machine's speed drifts, and the fit follows it.
    samples: deque[tuple[int, float]] = field(default_factory=lambda: deque(maxlen=512))
    # Refine steps by rows: the same GPT, run before the batch's rows join (a first text
    # alone, then a group), so they tell a row's share before any batched decode step.
    refine_steps: dict[int, list[float]] = field(default_factory=dict)

    def add(self, rows: int, seconds: float) -> None:
        if rows > 0 and seconds >= 0:
            self.samples.append((rows, seconds))

    def refine(self, rows: int, seconds: float) -> None:
        if rows > 0 and seconds >= 0:
            self.refine_steps.setdefault(rows, []).append(seconds)

    def row_share(self) -> float:
        """b / a of a step's a + b x rows: from refine passes of two sizes, else the prior."""
        if len(self.refine_steps) < 2:
            return PRIOR_ROW_SHARE
        few, many = min(self.refine_steps), max(self.refine_steps)
        low = statistics.median(self.refine_steps[few])
        high = statistics.median(self.refine_steps[many])
        b = max(0.0, (high - low) / (many - few))
        a = low - b * few
        return 1.0 if a <= 0 else min(1.0, b / a)

    def cost(self) -> tuple[float, float] | None:
        """(a, b), or None before any step was measured."""
        if not self.samples:
            return None
        n = len(self.samples)
        mean_x = sum(x for x, _ in self.samples) / n
        mean_y = sum(y for _, y in self.samples) / n
        var = sum((x - mean_x) ** 2 for x, _ in self.samples)
        if var > 0:
            cov = sum((x - mean_x) * (y - mean_y) for x, y in self.samples)
            b = max(0.0, cov / var)
            a = mean_y - b * mean_x
            if a >= 0:
                return a, b
            sxx = sum(x * x for x, _ in self.samples)
            return 0.0, sum(x * y for x, y in self.samples) / sxx
        # One batch size seen: its cost, and a row's share as the refine passes showed it.
        share = self.row_share()
        a = mean_y / (1 + share * mean_x)
        return a, a * share


def batched_seconds(
    slots: int, running: list[int], waiting: list[int], cost: tuple[float, float]
) -> float:
    """Seconds to decode with continuous batching: `running` rows' remaining steps, then
    `waiting` segments taking rows as they free, at most `slots` at once, each step costing
    a + b x rows."""
    a, b = cost
    ends = list(running)  # the step at which each busy row ends
    heapq.heapify(ends)
    queue = deque(waiting)
    while len(ends) < slots and queue:
        heapq.heappush(ends, queue.popleft())
    now, seconds = 0, 0.0
    while ends:
        first = ends[0]
        seconds += (first - now) * (a + b * len(ends))
        now = first
        while ends and ends[0] == now:
            heapq.heappop(ends)
        while len(ends) < slots and queue:
            heapq.heappush(ends, now + queue.popleft())
    return seconds
