"""Recording a reference clip from a microphone (sounddevice), UI-free. The audio thread only copies
samples into a 30 s buffer and updates the level a window polls; `clip()` checks the take like any
reference file.
"""

import threading
from collections.abc import Callable
from typing import Any

import numpy as np

from chattts_studio.core.errors import AudioError
from chattts_studio.core.messages import QT_TRANSLATE_NOOP, Sentence
from chattts_studio.core.voices.clone import MAX_SECONDS, RECORDING, check_clip

LevelCallback = Callable[[float], None]  # the peak of the last block, 0..1


class Recorder:
    """One take from an input device: start(), then stop() or wait until `full`."""

    def __init__(
        self,
        device: int | str | None = None,
        rate: int | None = None,
        max_seconds: float = MAX_SECONDS,
        on_level: LevelCallback | None = None,
    ) -> None:
        self.device = device
        self.rate = rate  # None: the device's default rate (resampled to 24 kHz afterwards)
        self.max_seconds = max_seconds
        self.on_level = on_level
        self.level = 0.0
        self._buffer = np.zeros(0, dtype=np.float32)
        self._filled = 0
        self._stream: Any = None
        self._done = threading.Event()

    @property
    def seconds(self) -> float:
        return self._filled / self.rate if self.rate else 0.0

    @property
    def full(self) -> bool:
        return self._done.is_set()

    def start(self) -> None:
        """Open the input device and record; AudioError with a sentence when there is none."""
        try:
            import sounddevice as sd
        except OSError as exc:  # PortAudio itself is missing
            raise AudioError(
                Sentence(
                    QT_TRANSLATE_NOOP("core", "Recording is not available: {reason}."),
                    reason=str(exc),
                )
            ) from None
        try:
            if self.rate is None:
                info = sd.query_devices(self.device, "input")
                self.rate = int(info["default_samplerate"])
            self._buffer = np.zeros(int(self.max_seconds * self.rate), dtype=np.float32)
            self._filled = 0
            self._done.clear()
            self._stream = sd.InputStream(
                samplerate=self.rate,
                channels=1,
                dtype="float32",
                device=self.device,
                callback=self._take,
            )
            self._stream.start()
        except (sd.PortAudioError, ValueError) as exc:
            self._stream = None
            raise AudioError(
                Sentence(
                    QT_TRANSLATE_NOOP("core", "No microphone could be opened: {reason}."),
                    reason=str(exc),
                )
            ) from None

    def _take(self, block: np.ndarray, frames: int, _time: Any, _status: Any) -> None:
        """PortAudio's thread: copy, measure, never allocate much or block."""
        room = self._buffer.size - self._filled
        n = min(frames, room)
        if n > 0:
            self._buffer[self._filled : self._filled + n] = block[:n, 0]
            self._filled += n
            self.level = float(np.abs(block[:n, 0]).max())
            if self.on_level is not None:
                self.on_level(self.level)
        if n < frames or self._filled >= self._buffer.size:
            self._done.set()

    def wait(self, timeout: float | None = None) -> bool:
        """Until the buffer is full (the longest take); False on timeout."""
        return self._done.wait(timeout)

    def stop(self) -> np.ndarray:
        """Close the device; the take as mono float32 at `rate`."""
        stream, self._stream = self._stream, None
        if stream is not None:
            stream.stop()
            stream.close()
        return self._buffer[: self._filled].copy()

    def clip(self) -> np.ndarray:
        """Stop, and the take checked and resampled for cloning (ClipError when unusable)."""
        audio = self.stop()
        return check_clip(audio, self.rate or 1, RECORDING)
