"""Saving audio (WAV, FLAC, OGG, MP3 through soundfile, atomically) and playing it."""

import shutil
import threading
from pathlib import Path

import numpy as np
import soundfile as sf

from . import SAMPLE_RATE
from .atomic import atomic_path, os_error_sentence, target_problem
from .errors import AudioError

# extension -> (soundfile format, default subtype)
FORMATS: dict[str, tuple[str, str]] = {
    ".wav": ("WAV", "PCM_16"),
    ".flac": ("FLAC", "PCM_16"),
    ".ogg": ("OGG", "VORBIS"),
    ".mp3": ("MP3", "MPEG_LAYER_III"),
}


def check_output_path(path: Path) -> tuple[str, str]:
    """Refuse a target we cannot write, before any work is done; return (format, subtype)."""
    path = Path(path)
    problem = target_problem(path, example="speech.wav")
    if problem:
        raise AudioError(problem)
    fmt = FORMATS.get(path.suffix.lower())
    if fmt is None:
        raise AudioError(
            f"Cannot save as '{path.suffix or path.name}': use .wav, .flac, .ogg or .mp3."
        )
    return fmt


def save(
    path: Path, audio: np.ndarray, sample_rate: int = SAMPLE_RATE, float_wav: bool = False
) -> Path:
    """Write audio to path atomically; the format follows the extension. WAV is 16-bit unless
    float_wav. A failure leaves any existing file as it was and no temp file behind."""
    path = Path(path)
    fmt, subtype = check_output_path(path)
    if float_wav and fmt == "WAV":
        subtype = "FLOAT"
    data = np.clip(np.asarray(audio, dtype=np.float32), -1.0, 1.0)
    if data.size == 0:
        raise AudioError("There is no audio to save.")
    try:
        with atomic_path(path) as tmp:
            sf.write(str(tmp), data, sample_rate, format=fmt, subtype=subtype)
    except (OSError, ValueError) as exc:
        raise AudioError(os_error_sentence("save", path, exc)) from None
    except (sf.LibsndfileError, RuntimeError) as exc:
        if _disk_nearly_full(path.parent):
            raise AudioError(
                f"Cannot save {path}: the disk is full. Nothing was changed."
            ) from None
        raise AudioError(f"Cannot save {path}: {str(exc).splitlines()[0]}.") from None
    return path


def _disk_nearly_full(folder: Path) -> bool:
    """libsndfile reports a full disk as a generic error: ask the file system instead."""
    try:
        return shutil.disk_usage(folder).free < 1 << 20
    except OSError:
        return False


def _sounddevice():  # type: ignore[no-untyped-def]
    try:
        import sounddevice as sd
    except OSError:
        raise AudioError(
            "Audio playback needs the PortAudio library (libportaudio2); the audio "
            "can still be saved."
        ) from None
    return sd


def output_available() -> str | None:
    """None when a default output device exists, else the sentence explaining why not."""
    try:
        sd = _sounddevice()
        sd.query_devices(kind="output")
    except AudioError as exc:
        return str(exc)
    except Exception:
        return "No audio output device is available; the audio can still be saved."
    return None


class Player:
    """Plays one buffer at a time on the default output device, from any start sample.
    `position` is the next sample to be played; stop() and play() may come from any thread."""

    def __init__(self) -> None:
        self._stream: object | None = None
        self._audio = np.zeros(0, dtype=np.float32)
        self._pos = 0
        self._lock = threading.Lock()
        self._done = threading.Event()
        self._done.set()

    @property
    def position(self) -> int:
        return self._pos

    @property
    def playing(self) -> bool:
        return not self._done.is_set()

    def play(self, audio: np.ndarray, sample_rate: int = SAMPLE_RATE, start: int = 0) -> None:
        self.stop()
        sd = _sounddevice()
        problem = output_available()
        if problem:
            raise AudioError(problem)
        with self._lock:
            self._audio = np.ascontiguousarray(audio, dtype=np.float32)
            self._pos = max(0, min(int(start), len(self._audio)))
            self._done.clear()

        def callback(outdata: np.ndarray, frames: int, _time: object, _status: object) -> None:
            with self._lock:
                chunk = self._audio[self._pos : self._pos + frames]
                outdata[: len(chunk), 0] = chunk
                outdata[len(chunk) :, 0] = 0.0
                self._pos += len(chunk)
                if len(chunk) < frames:
                    raise sd.CallbackStop()

        try:
            stream = sd.OutputStream(
                samplerate=sample_rate,
                channels=1,
                dtype="float32",
                callback=callback,
                finished_callback=self._done.set,
            )
            stream.start()
        except Exception as exc:
            self._done.set()
            raise AudioError(
                f"Cannot play audio: {str(exc).splitlines()[0]}. The audio can still be saved."
            ) from None
        self._stream = stream

    def wait(self, timeout: float | None = None) -> bool:
        finished = self._done.wait(timeout)
        if finished:
            self._close()
        return finished

    def stop(self) -> None:
        stream = self._stream
        if stream is not None:
            try:
                stream.abort()  # type: ignore[attr-defined]
            except Exception:
                pass  # a device that vanished cannot be stopped twice
        self._done.set()
        self._close()

    def _close(self) -> None:
        stream, self._stream = self._stream, None
        if stream is not None:
            try:
                stream.close()  # type: ignore[attr-defined]
            except Exception:
                pass
