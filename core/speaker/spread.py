"""The voice check's two rules: with MIN_TAKES takes of a voice, a take is judged by its distance
from their medoid against their median distance and MAD; with fewer, by the fixed threshold. See
docs/voice-check.md.
"""

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from chattts_studio.core.speaker.encoder import THRESHOLD

RULE_FIXED = "fixed"  # similarity to the reference at or above the threshold
RULE_SPREAD = "spread"  # distance from the medoid within the voice's own takes' spread
RULES = (RULE_FIXED, RULE_SPREAD)
# Chosen on the calibration voices (devtools/voicesplit.py): the fewest takes at which
# the spread did no worse than the fixed threshold, and the settings with the least worst error.
MIN_TAKES = 3  # takes of a voice (the medoid one included)
SPREAD_MADS = 2.0  # how many normal-scaled MADs past the median distance a take may be
MAD_SCALE = 1.4826  # makes a MAD comparable to a standard deviation for normal data
MIN_MAD = 0.05  # scaled MAD at least this: a few near-identical takes give a MAD near 0
# The spread never accepts below this similarity nor asks for more than this: outside that
# band the voice's own takes would have to be another voice, or all one clip.
LOWEST_LIMIT = 0.65
HIGHEST_LIMIT = 0.85


@dataclass(frozen=True)
class SpreadRule:
    """The spread rule's settings (the devtool tries others on its calibration voices)."""

    min_takes: int = MIN_TAKES
    mads: float = SPREAD_MADS
    min_mad: float = MIN_MAD
    lowest: float = LOWEST_LIMIT
    highest: float = HIGHEST_LIMIT

    def limit(self, similarities: Sequence[float]) -> float | None:
        """The lowest similarity to the medoid a take of this voice may have, from the other
        takes' similarities to it (the medoid's own left out); None: too few to judge."""
        if len(similarities) + 1 < self.min_takes:
            return None
        median, mad = spread_of(similarities)
        return float(self.bound(np.asarray(median), np.asarray(mad)))

    def bound(self, median: np.ndarray, mad: np.ndarray) -> np.ndarray:
        """The limit for a pool's median distance and scaled MAD (arrays: many pools)."""
        limit = 1.0 - (median + self.mads * np.maximum(mad, self.min_mad))
        return np.clip(limit, self.lowest, self.highest)


def spread_of(similarities: Sequence[float]) -> tuple[float, float]:
    """The median distance (1 - similarity) of a voice's takes from its medoid, and their
    normal-scaled median absolute deviation from it."""
    distances = 1.0 - np.asarray(similarities, dtype=np.float64)
    median = float(np.median(distances))
    return median, float(np.median(np.abs(distances - median))) * MAD_SCALE


SPREAD = SpreadRule()


@dataclass(frozen=True)
class Verdict:
    """One take judged: its similarity to the reference, the rule that judged it and the
    lowest similarity that rule passes."""

    similarity: float
    rule: str
    limit: float

    @property
    def same(self) -> bool:
        return self.similarity >= self.limit


def medoid(embeddings: np.ndarray) -> int:
    """The index of the embedding most like the others (summed cosine; rows unit length)."""
    return int(np.argmax((embeddings @ embeddings.T).sum(axis=1)))


def judge_takes(
    embeddings: Sequence[np.ndarray],
    threshold: float = THRESHOLD,
    rule: SpreadRule = SPREAD,
) -> list[Verdict]:
    """Every take of one voice judged against the voice's medoid take: by the spread rule
    when there are enough takes, else by the fixed threshold."""
    vectors = np.stack([np.asarray(e, dtype=np.float64) for e in embeddings])
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    centre = medoid(vectors)
    scores = [float(s) for s in vectors @ vectors[centre]]
    others = [s for i, s in enumerate(scores) if i != centre]
    return judge_scores(scores, others, threshold, rule)


def judge_scores(
    scores: Sequence[float],
    pool: Sequence[float],
    threshold: float = THRESHOLD,
    rule: SpreadRule = SPREAD,
) -> list[Verdict]:
    """Each of `scores` (similarities to a voice's reference) judged by the spread of `pool`
    (the voice's takes' similarities to the same reference, the reference's own left out)
    when it is large enough, else by the fixed threshold."""
    limit = rule.limit(pool)
    if limit is None:
        return [Verdict(s, RULE_FIXED, threshold) for s in scores]
    return [Verdict(s, RULE_SPREAD, limit) for s in scores]
