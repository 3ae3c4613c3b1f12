"""Audio stand-ins several test modules use: noise, a speech-like clip, an output device that
keeps time."""

import time
from collections.abc import Callable

import numpy as np
import pytest


def noise(seconds: float = 0.5, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return (rng.uniform(-0.5, 0.5, int(24000 * seconds))).astype(np.float32)


def paced_output(monkeypatch: pytest.MonkeyPatch, silence_only: bool = False) -> list[object]:
    """The virtual device takes samples as fast as it can (millions a second). This makes its
    streams keep time: after each block the callback sleeps the block's duration (only for
    blocks of pure silence with silence_only, so waiting streams do not write gigabytes of
    zeros). Returns the list of streams opened."""
    import sounddevice as sd

    real = sd.OutputStream
    opened: list[object] = []

    def make(*, samplerate: float, callback: Callable[..., None], **kwargs: object) -> object:
        def paced(outdata: np.ndarray, frames: int, *args: object) -> None:
            try:
                callback(outdata, frames, *args)
            finally:
                if not silence_only or not outdata.any():
                    time.sleep(frames / samplerate)

        stream = real(samplerate=samplerate, callback=paced, **kwargs)
        opened.append(stream)
        return stream

    monkeypatch.setattr(sd, "OutputStream", make)
    return opened


def speech_like(seconds: float, rate: int, channels: int = 1, seed: int = 0) -> np.ndarray:
    """Noise under a syllable-rate envelope: not speech, but a clip with level and pauses."""
    rng = np.random.default_rng(seed)
    t = np.arange(int(seconds * rate)) / rate
    envelope = 0.2 + 0.3 * np.abs(np.sin(2 * np.pi * 2.5 * t))
    audio = rng.standard_normal((t.size, channels)) * envelope[:, None] * 0.3
    return np.clip(audio, -0.95, 0.95).astype(np.float32)
