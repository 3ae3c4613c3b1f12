"""A speaker encoder: mono audio in, a unit-length voice embedding out (CAM++ through sherpa-onnx,
at 16 kHz), and the cosine similarity of two embeddings with its verdict. Too little of a voice is
refused (VoiceCheckError).
"""

from pathlib import Path
from typing import Any

import numpy as np

from chattts_studio.core.asr.recognizer import MODEL_RATE, at_model_rate
from chattts_studio.core.errors import StudioError
from chattts_studio.core.messages import QT_TRANSLATE_NOOP, Sentence

# Cosine similarity at or above which two clips are said to share a voice: the equal-error
# point on the suite's real-speech set (docs/voice-check.md says how it was measured and how
# a user moves it).
THRESHOLD = 0.73
MIN_SECONDS = 1.0  # of audio: a shorter clip holds too little of the voice to judge
MIN_RATE = MODEL_RATE  # Hz: the model listens at 16 kHz; lower rates lack its upper band
SILENT_PEAK = 1e-3  # a clip whose loudest sample is below this holds no voice


class VoiceCheckError(StudioError):
    """A clip the voice check cannot judge (too short, silent, unreadable)."""


class SpeakerEncoder:
    """One speaker-embedding model, loaded on first use and called off the UI thread."""

    def __init__(self, model_file: Path, threads: int = 1, demo: bool = False) -> None:
        self.model_file, self.threads = model_file, max(1, threads)
        self.demo = demo  # random weights: its scores judge noise, and say so
        self._extractor: Any = None

    def embed(self, audio: np.ndarray, sample_rate: int, what: str = "") -> np.ndarray:
        """The unit-length embedding of mono (or channels-last) float audio; `what` names the
        clip in the sentence that refuses it."""
        clip = usable(audio, sample_rate, what)
        extractor = self._loaded()
        stream = extractor.create_stream()
        stream.accept_waveform(MODEL_RATE, at_model_rate(clip, sample_rate))
        stream.input_finished()
        vector = np.asarray(extractor.compute(stream), dtype=np.float32)
        norm = float(np.linalg.norm(vector))
        if not np.isfinite(norm) or norm == 0.0:
            raise VoiceCheckError(
                Sentence(
                    QT_TRANSLATE_NOOP("core", "{what} gave the voice check no usable voice."),
                    what=_named(what),
                )
            )
        return vector / norm

    def unload(self) -> None:
        self._extractor = None

    def _loaded(self) -> Any:
        if self._extractor is None:
            import sherpa_onnx

            from chattts_studio.core.errors import ModelError

            if not self.model_file.is_file():
                raise ModelError(
                    Sentence(
                        QT_TRANSLATE_NOOP("core", "There is no speaker model at {path}."),
                        path=str(self.model_file),
                    )
                )
            config = sherpa_onnx.SpeakerEmbeddingExtractorConfig(
                model=str(self.model_file), num_threads=self.threads
            )
            try:
                self._extractor = sherpa_onnx.SpeakerEmbeddingExtractor(config)
            except (RuntimeError, ValueError, OSError):
                raise ModelError(
                    Sentence(
                        QT_TRANSLATE_NOOP(
                            "core", "{path} is not a speaker model the voice check can load."
                        ),
                        path=str(self.model_file),
                    )
                ) from None
        return self._extractor


def usable(audio: np.ndarray, sample_rate: int, what: str = "") -> np.ndarray:
    """`audio` as mono float32 the model can judge, or one sentence saying why not."""
    clip = np.asarray(audio, dtype=np.float32)
    if clip.ndim == 2:
        clip = clip.mean(axis=1)
    clip = np.ascontiguousarray(clip.reshape(-1))
    if sample_rate < MIN_RATE:
        raise VoiceCheckError(
            Sentence(
                QT_TRANSLATE_NOOP(
                    "core",
                    "{what} is {rate} Hz audio; the voice check needs at least {minimum} Hz.",
                ),
                what=_named(what),
                rate=f"{sample_rate:,}",
                minimum=f"{MIN_RATE:,}",
            )
        )
    if not np.isfinite(clip).all():
        raise VoiceCheckError(
            Sentence(
                QT_TRANSLATE_NOOP("core", "{what} holds samples that are not numbers."),
                what=_named(what),
            )
        )
    seconds = len(clip) / sample_rate
    if seconds < MIN_SECONDS:
        raise VoiceCheckError(
            Sentence(
                QT_TRANSLATE_NOOP(
                    "core",
                    "{what} is {seconds} s long; the voice check needs at least {minimum} s.",
                ),
                what=_named(what),
                seconds=f"{seconds:.2f}",
                minimum=f"{MIN_SECONDS:g}",
            )
        )
    if float(np.abs(clip).max()) < SILENT_PEAK:
        raise VoiceCheckError(
            Sentence(
                QT_TRANSLATE_NOOP("core", "{what} is silent: there is no voice to compare."),
                what=_named(what),
            )
        )
    return clip


def similarity(a: np.ndarray, b: np.ndarray) -> float:
    """Cosine similarity of two embeddings (1: the same direction)."""
    denominator = float(np.linalg.norm(a) * np.linalg.norm(b))
    return float(np.dot(a, b) / denominator) if denominator else 0.0


def same_voice(score: float, threshold: float = THRESHOLD) -> bool:
    return score >= threshold


def _named(what: str) -> str | Sentence:
    """The clip as a refusal names it: its file, or "The clip"."""
    return what or Sentence(QT_TRANSLATE_NOOP("core", "The clip"))
