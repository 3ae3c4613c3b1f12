"""A long render's optional voice check: a segment whose voice drifts from the render's reference is
made again with other seeds, up to `tries` times, keeping the closest take. See
docs/voice-check.md.
"""

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from chattts_studio.core import SAMPLE_RATE
from chattts_studio.core.speaker.encoder import (
    MIN_SECONDS,
    THRESHOLD,
    SpeakerEncoder,
    VoiceCheckError,
    similarity,
)
from chattts_studio.core.speaker.spread import RULE_FIXED, RULE_SPREAD, SpreadRule

MAX_TRIES = 20


@dataclass(frozen=True)
class VoiceGuard:
    """What the check is asked to do: its encoder, threshold and tries, and the reference
    clip (None: the render's first segment long enough to judge)."""

    encoder: SpeakerEncoder
    threshold: float = THRESHOLD
    tries: int = 3
    reference_clip: Path | None = None
    # Judge by the kept segments' spread once there are enough (None: the fixed threshold).
    # A resumed render must `remember` its kept segments' similarities first, or it would
    # choose otherwise than an uninterrupted one: nothing turns it on until one does.
    spread: SpreadRule | None = None

    def record(self) -> dict[str, object]:
        """What of it shapes the kept audio (a render's settings record holds it)."""
        clip = None
        if self.reference_clip is not None:
            clip = hashlib.sha256(self.reference_clip.read_bytes()).hexdigest()[:16]
        found: dict[str, object] = {
            "model": self.encoder.model_file.name,
            "threshold": self.threshold,
            "tries": self.tries,
            "reference": clip,
        }
        if self.spread is not None:  # the record of a render without it stays as it was
            found["spread"] = {
                "min_takes": self.spread.min_takes,
                "mads": self.spread.mads,
                "min_mad": self.spread.min_mad,
                "lowest": self.spread.lowest,
                "highest": self.spread.highest,
            }
        return found


@dataclass(frozen=True)
class Judged:
    """The audio kept for a segment: its similarity to the reference (None: too short to
    judge, or no reference yet), how many times it was made again, and the rule that judged
    it with the lowest similarity that rule passed."""

    audio: np.ndarray
    similarity: float | None
    tries: int
    rule: str = RULE_FIXED
    limit: float = THRESHOLD


class VoiceWatch:
    """One render's guard at work: the reference (found once) and each segment judged."""

    def __init__(self, guard: VoiceGuard) -> None:
        self.guard = guard
        self.reference: np.ndarray | None = None
        self.source = ""  # what the reference is, as the render says it
        self.kept: list[float] = []  # the kept segments' similarities (the spread's pool)
        if guard.reference_clip is not None:
            from chattts_studio.core.speaker.compare import embed_file

            self.reference = embed_file(guard.encoder, guard.reference_clip)
            self.source = guard.reference_clip.name

    def offer(self, audio: np.ndarray, name: str) -> bool:
        """Take `audio` as the reference when none is set and it is long enough; whether the
        reference is set now."""
        if self.reference is None and len(audio) >= MIN_SECONDS * SAMPLE_RATE:
            embedding = self._embedding(audio)
            if embedding is not None:
                self.reference, self.source = embedding, name
        return self.reference is not None

    def judge(self, audio: np.ndarray, remake: Callable[[int], np.ndarray]) -> Judged:
        """`audio` kept when its voice is the reference's (or cannot be judged); else
        `remake(try)` made up to `tries` times, stopping at the first that passes, and the
        one most like the reference kept."""
        rule, limit = self.rule()
        score = self.score(audio)
        if score is None or score >= limit:
            self.remember(score)
            return Judged(audio, score, 0, rule, limit)
        best, best_score, made = audio, score, 0
        for attempt in range(1, self.guard.tries + 1):
            other = remake(attempt)
            made = attempt
            other_score = self.score(other)
            if other_score is not None and other_score > best_score:
                best, best_score = other, other_score
            if best_score >= limit:
                break
        self.remember(best_score)
        return Judged(best, best_score, made, rule, limit)

    def rule(self) -> tuple[str, float]:
        """The rule that judges the next segment and the lowest similarity it passes."""
        limit = None if self.guard.spread is None else self.guard.spread.limit(self.kept)
        return (RULE_FIXED, self.guard.threshold) if limit is None else (RULE_SPREAD, limit)

    def remember(self, score: float | None) -> None:
        """A kept segment's similarity, in book order: the judged ones, and a resumed render's
        earlier ones (else the spread would differ from an uninterrupted render's)."""
        if score is not None and score < 1.0 - 1e-6:  # the reference segment itself is not one
            self.kept.append(score)

    def score(self, audio: np.ndarray) -> float | None:
        if self.reference is None:
            return None
        embedding = self._embedding(audio)
        return None if embedding is None else similarity(self.reference, embedding)

    def _embedding(self, audio: np.ndarray) -> np.ndarray | None:
        try:
            return self.guard.encoder.embed(audio, SAMPLE_RATE)
        except VoiceCheckError:  # too short or silent: not judged, kept as made
            return None


def segment_name(chapter: int, index: int) -> str:
    """A segment as a render's messages name it (both 0-based here, 1-based there)."""
    return f"segment {index + 1} of chapter {chapter + 1}"


def voice_note(chapter: int, index: int, judged: Judged | None) -> str:
    """What the voice check did to a segment, for the render's warnings."""
    assert judged is not None and judged.similarity is not None
    return (
        f"{segment_name(chapter, index)}: its voice drifted; made again {judged.tries} "
        f"time(s), the most alike kept (similarity {judged.similarity:.2f}; {judged.rule} "
        f"rule, limit {judged.limit:.2f})"
    )
