"""Saving audio (WAV, FLAC, OGG, MP3 through soundfile, atomically); playing it is player.py's."""

import contextlib
import errno
import os
import shutil
import tempfile
from pathlib import Path

import numpy as np
import soundfile as sf

from chattts_studio.core import SAMPLE_RATE
from chattts_studio.core.atomic import (
    atomic_path,
    os_error_reason,
    os_error_sentence,
    target_problem,
)
from chattts_studio.core.errors import AudioError
from chattts_studio.core.messages import QT_TRANSLATE_NOOP, Sentence

NO_AUDIO = QT_TRANSLATE_NOOP("core", "There is no audio to save.")  # every writer, when empty

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
            Sentence(
                QT_TRANSLATE_NOOP(
                    "core", "Cannot save as '{suffix}': use .wav, .flac, .ogg or .mp3."
                ),
                suffix=path.suffix or path.name,
            )
        )
    # Permissions say yes to root everywhere, and some folders take no new files whatever
    # they say (/proc, a read-only mount): try to make one, so the sentence names the cause.
    try:
        handle, probe = tempfile.mkstemp(prefix=".write-check-", dir=path.parent)
    except OSError as exc:
        # The folder exists (checked above): "No such file" here is the file system refusing.
        why = "" if exc.errno == errno.ENOENT else f" ({exc.strerror or exc})"
        raise AudioError(
            Sentence(
                QT_TRANSLATE_NOOP(
                    "core",
                    "Cannot save {path}: the folder {folder} is not writable{why}. "
                    "Choose another folder.",
                ),
                path=str(path),
                folder=str(path.parent),
                why=why,
            )
        ) from None
    os.close(handle)
    with contextlib.suppress(OSError):
        os.unlink(probe)
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
        raise AudioError(NO_AUDIO)
    try:
        with atomic_path(path) as tmp:
            sf.write(str(tmp), data, sample_rate, format=fmt, subtype=subtype)
    except Exception as exc:
        raise cannot_save(path, exc) from None
    return path


def cannot_save(path: Path, exc: BaseException) -> BaseException:
    """What a failed write of audio to `path` says, one sentence for every writer (save, the
    streaming writers, the AAC writer): the file system's refusal in its words; an encoder's
    error (libsndfile, FFmpeg) as a full disk when the disk is (libsndfile says "System
    error" for it), else in the encoder's own first line. An AudioError, a cancel or Ctrl+C
    comes back as it is."""
    if isinstance(exc, AudioError) or not isinstance(exc, Exception):
        return exc
    path = Path(path)
    if isinstance(exc, OSError | ValueError):
        return AudioError(os_error_sentence("save", path, exc))
    if disk_nearly_full(path.parent):
        return AudioError(
            Sentence(
                QT_TRANSLATE_NOOP(
                    "core", "Cannot save {path}: the disk is full. Nothing was changed."
                ),
                path=str(path),
            )
        )
    return AudioError(
        Sentence(
            QT_TRANSLATE_NOOP("core", "Cannot save {path}: {reason}."),
            path=str(path),
            reason=os_error_reason(exc).rstrip(". "),
        )
    )


def disk_nearly_full(folder: Path) -> bool:
    """libsndfile reports a full disk as a generic error: ask the file system instead."""
    try:
        return shutil.disk_usage(folder).free < 1 << 20
    except OSError:
        return False
