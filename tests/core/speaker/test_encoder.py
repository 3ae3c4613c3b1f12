"""What the voice check refuses to judge, each in one sentence (too short, silent, too low a
rate, not numbers), what it accepts (stereo, any rate from 16 kHz), and a take's kept check:
its JSON, its flag below the threshold, and a damaged one dropped rather than the project."""

import numpy as np
import pytest

from chattts_studio.core.speaker.check import VoiceCheck, voice_flag
from chattts_studio.core.speaker.encoder import (
    MIN_RATE,
    MIN_SECONDS,
    SpeakerEncoder,
    VoiceCheckError,
    similarity,
    usable,
)

RATE = 24_000


def _tone(seconds: float, rate: int = RATE) -> np.ndarray:
    t = np.arange(int(seconds * rate)) / rate
    return (0.3 * np.sin(2 * np.pi * 220 * t)).astype(np.float32)


SHORT, SILENT = _tone(MIN_SECONDS * 0.5), np.zeros(RATE * 2, np.float32)
NOT_NUMBERS = np.full(RATE * 2, np.nan, np.float32)


@pytest.mark.parametrize(
    ("audio", "rate", "said"),
    [
        (SHORT, RATE, "take.wav is 0.50 s long; the voice check needs at least 1 s."),
        (SILENT, RATE, "take.wav is silent: there is no voice to compare."),
        (_tone(2, 8_000), 8_000, "take.wav is 8,000 Hz audio; the voice check needs at least "
         "16,000 Hz."),
        (NOT_NUMBERS, RATE, "take.wav holds samples that are not numbers."),
    ],
)  # fmt: skip
def test_a_clip_it_cannot_judge_is_one_sentence(audio: np.ndarray, rate: int, said: str) -> None:
    with pytest.raises(VoiceCheckError) as caught:
        usable(audio, rate, "take.wav")
    assert str(caught.value) == said


def test_a_clip_without_a_name_is_the_clip() -> None:
    with pytest.raises(VoiceCheckError, match=r"^The clip is silent"):
        usable(np.zeros(RATE * 2, np.float32), RATE)


def test_stereo_is_mixed_to_mono_and_the_lowest_rate_is_taken() -> None:
    left, right = _tone(1.5, MIN_RATE), np.zeros(int(1.5 * MIN_RATE), np.float32)
    mono = usable(np.stack([left, right], axis=1), MIN_RATE)
    assert mono.shape == (len(left),) and np.allclose(mono, left / 2)


def test_the_same_clip_at_another_rate_is_the_same_voice(speaker_encoder: SpeakerEncoder) -> None:
    """A reference of another sample rate is resampled, not refused: 24 kHz and 48 kHz copies
    of one tone embed alike."""
    from scipy.signal import resample_poly

    clip = _tone(2.0) + 0.01 * np.random.default_rng(1).standard_normal(RATE * 2).astype("f4")
    doubled = resample_poly(clip, 2, 1).astype(np.float32)
    score = similarity(speaker_encoder.embed(clip, RATE), speaker_encoder.embed(doubled, 2 * RATE))
    assert score > 0.99


def test_a_missing_or_broken_model_is_one_sentence(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from chattts_studio.core.errors import ModelError

    with pytest.raises(ModelError, match=r"^There is no speaker model at .*nothing\.onnx\.$"):
        SpeakerEncoder(tmp_path / "nothing.onnx").embed(_tone(2), RATE)
    broken = tmp_path / "broken.onnx"
    broken.write_bytes(b"not an onnx file")
    with pytest.raises(ModelError, match=r"is not a speaker model the voice check can load\.$"):
        SpeakerEncoder(broken).embed(_tone(2), RATE)


def test_a_kept_check_reads_back_and_flags_below_its_threshold() -> None:
    drift = VoiceCheck(0.61, 0.8, "typical", "3/1", "campplus.onnx")
    assert VoiceCheck.from_json(drift.to_json()) == drift
    assert str(voice_flag(drift)) == (
        "The voice drifts from its reference: similarity 0.61 is below 0.80."
    )
    assert voice_flag(VoiceCheck(0.8, 0.8, "take", "1/2")) is None  # at the threshold: same
    demo = VoiceCheck(0.1, 0.8, "take", "1/2", "campplus-demo.onnx", demo=True)
    assert "demo speaker model (random weights)" in str(voice_flag(demo))


@pytest.mark.parametrize(
    "damaged",
    [
        None,
        "0.9",
        {"similarity": "high", "threshold": 0.8, "reference": "take"},
        {"similarity": 0.9, "threshold": 0.8, "reference": "somewhere"},
        {"similarity": 7.0, "threshold": 0.8, "reference": "take"},
        {"similarity": float("nan"), "threshold": 0.8, "reference": "take"},
        {"similarity": 0.9, "threshold": 0.8},
    ],
)
def test_a_damaged_check_reads_as_none(damaged: object) -> None:
    assert VoiceCheck.from_json(damaged) is None
