"""Audio stand-ins several test modules use: noise, a speech-like clip, an output device that
keeps time."""

import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np
import pytest

if TYPE_CHECKING:
    from chattts_studio.core.engine.engine import Engine
    from chattts_studio.core.voices.voice import Voice


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


class VanishingStream:
    """PortAudio's stream when the device is unplugged: a block plays, then it ends (stands in
    for sounddevice.OutputStream)."""

    def __init__(self, *, samplerate, channels, dtype, callback, finished_callback):  # type: ignore[no-untyped-def]
        self.callback, self.finished = callback, finished_callback

    def start(self) -> None:
        self.callback(np.zeros((512, 1), np.float32), 512, None, None)
        threading.Timer(0.05, self.finished).start()

    def abort(self) -> None:
        import sounddevice

        raise sounddevice.PortAudioError("Device unavailable")

    def close(self) -> None:
        pass


def speech_like(seconds: float, rate: int, channels: int = 1, seed: int = 0) -> np.ndarray:
    """Noise under a syllable-rate envelope: not speech, but a clip with level and pauses."""
    rng = np.random.default_rng(seed)
    t = np.arange(int(seconds * rate)) / rate
    envelope = 0.2 + 0.3 * np.abs(np.sin(2 * np.pi * 2.5 * t))
    audio = rng.standard_normal((t.size, channels)) * envelope[:, None] * 0.3
    return np.clip(audio, -0.95, 0.95).astype(np.float32)


# A number in the transcript: synthesis reads it out ("二零二四"), so a server that put the
# transcript into the prompt as stored would make other audio than synth's.
CLONE_TRANSCRIPT = "今天是2024年，这是我的声音。"


def add_clone(engine: "Engine", name: str, seed: int = 0) -> "Voice":
    """A library voice cloned from a clip through the real DVAE encoder (as test_voices)."""
    from chattts_studio.core.voices.clone import check_clip
    from chattts_studio.core.voices.speakers import SpeakerLibrary

    clip = check_clip(speech_like(3.5, 24000, seed=seed)[:, 0], 24000)
    voice = engine.clone_voice(clip, CLONE_TRANSCRIPT)
    SpeakerLibrary().add(name, "", sample=voice.sample, transcript=voice.transcript)
    return voice
