"""How stable a speaker's voice is across lines: one candidate speaks K short lines, and the mean
cosine similarity of every pair of clips (1: the same voice) says whether ChatTTS keeps the voice
or lets it wander.
"""

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from chattts_studio.core.speaker.encoder import THRESHOLD, similarity

# What candidates read when asked for stability: short lines of different shapes (a statement,
# a question, numbers, an exclamation), in each of ChatTTS's two languages.
LINES = {
    "en": (
        "The morning train was late again today.",
        "Would you like a cup of tea before we start?",
        "We counted forty two boats in the harbour.",
        "What a wonderful surprise this is!",
    ),
    "zh": (
        "今天早上的火车又晚点了。",
        "开始之前，你想喝杯茶吗？",
        "我们在港口数了四十二条船。",
        "这真是一个美好的惊喜！",
    ),
}


@dataclass(frozen=True)
class Stability:
    """A speaker's spread over its lines: the mean and lowest pairwise similarity, and how
    many pairs fall below the threshold."""

    mean: float
    lowest: float
    below: int
    pairs: int

    def to_json(self) -> dict[str, float | int]:
        return {"mean": self.mean, "lowest": self.lowest, "below": self.below, "pairs": self.pairs}


def stability(embeddings: Sequence[np.ndarray], threshold: float = THRESHOLD) -> Stability:
    """The spread of one speaker's clips (two or more embeddings)."""
    if len(embeddings) < 2:
        raise ValueError("stability needs two clips or more")
    scores = [similarity(a, b) for a, b in itertools.combinations(embeddings, 2)]
    below = sum(score < threshold for score in scores)
    return Stability(float(np.mean(scores)), float(min(scores)), below, len(scores))
