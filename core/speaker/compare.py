"""Clips compared with a reference: each one's similarity to it and the verdict same/different
(`chattts-studio-cli voice compare`, the project's voice flags). Files are read here, whole;
one that cannot be read or judged is one sentence naming it."""

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from chattts_studio.core.messages import QT_TRANSLATE_NOOP, Sentence
from chattts_studio.core.speaker.encoder import (
    THRESHOLD,
    SpeakerEncoder,
    VoiceCheckError,
    same_voice,
    similarity,
)


@dataclass(frozen=True)
class Comparison:
    """Each other clip's cosine similarity to the reference, and whether that says the same
    voice at `threshold`; `demo`: the model has random weights and judged noise."""

    threshold: float
    scores: list[float]
    same: list[bool]
    demo: bool


def read_clip(path: Path) -> tuple[np.ndarray, int]:
    """A file's audio (float32, channels last) and rate; one sentence when it is not audio."""
    import soundfile

    try:
        audio, rate = soundfile.read(str(path), dtype="float32", always_2d=False)
    except (OSError, RuntimeError, ValueError, soundfile.LibsndfileError) as exc:
        reason = str(exc).strip() or type(exc).__name__
        if isinstance(exc, FileNotFoundError) or not path.exists():
            reason = QT_TRANSLATE_NOOP("core", "there is no such file")
        raise VoiceCheckError(
            Sentence(
                QT_TRANSLATE_NOOP("core", "{path} cannot be read as audio: {reason}."),
                path=str(path),
                reason=reason,
            )
        ) from None
    return audio, int(rate)


def embed_file(encoder: SpeakerEncoder, path: Path) -> np.ndarray:
    audio, rate = read_clip(path)
    return encoder.embed(audio, rate, str(path))


def compare(
    encoder: SpeakerEncoder,
    reference: Path,
    others: Sequence[Path],
    threshold: float = THRESHOLD,
) -> Comparison:
    """Every file in `others` scored against `reference` (every file is judged before any
    score is given: one bad file is said, not half a table)."""
    anchor = embed_file(encoder, reference)
    scores = [similarity(anchor, embed_file(encoder, path)) for path in others]
    return Comparison(threshold, scores, [same_voice(s, threshold) for s in scores], encoder.demo)
