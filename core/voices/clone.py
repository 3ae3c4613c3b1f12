"""Reference recordings for cloning a voice: read (WAV, FLAC, OGG, MP3), checked, mixed to mono and
resampled to 24 kHz. A clip must be 3-30 seconds; a longer one is refused, not trimmed, since its
transcript must match.
"""

from pathlib import Path

import numpy as np

from chattts_studio.core import SAMPLE_RATE
from chattts_studio.core.errors import BadTextError, SpeakerError
from chattts_studio.core.messages import QT_TRANSLATE_NOOP, Sentence, said
from chattts_studio.core.text.prepare import check_text

MIN_SECONDS = 3.0
MAX_SECONDS = 30.0
# Below this RMS (about -60 dBFS) a clip is taken as silence: there is no voice to encode.
SILENCE_RMS = 1e-3
FORMATS = ("WAV", "FLAC", "OGG", "MP3")
# What a clip from the microphone is called in a sentence about it.
RECORDING = Sentence(QT_TRANSLATE_NOOP("core", "The recording"))


class ClipError(SpeakerError):
    """A reference recording cannot be used; the sentence says why."""


def _length(seconds: float) -> str:
    if seconds >= 3600:
        return f"{int(seconds // 3600)} h {int(seconds % 3600 // 60)} min"
    if seconds >= 60:
        return f"{int(seconds // 60)} min {int(seconds % 60)} s"
    return f"{seconds:.1f} s"


def _too_long(name: str, seconds: float) -> ClipError:
    return ClipError(
        Sentence(
            QT_TRANSLATE_NOOP(
                "core",
                "{name} is {length} long; a reference recording must be {low}-{high} seconds: "
                "cut the part whose words you give as the transcript.",
            ),
            name=name,
            length=_length(seconds),
            low=f"{MIN_SECONDS:g}",
            high=f"{MAX_SECONDS:g}",
        )
    )


def read_clip(path: Path) -> np.ndarray:
    """The recording at `path` as 24 kHz mono float32, checked (see check_clip)."""
    import soundfile as sf

    path = Path(path)
    name = path.name or str(path)
    if not path.is_file():
        raise ClipError(
            Sentence(QT_TRANSLATE_NOOP("core", "There is no audio file {path}."), path=str(path))
        )
    try:
        with sf.SoundFile(str(path)) as clip:
            rate, frames = clip.samplerate, clip.frames
            if clip.format not in FORMATS:
                raise ClipError(
                    Sentence(
                        QT_TRANSLATE_NOOP(
                            "core", "{name} is {format}; use a WAV, FLAC, OGG or MP3 file."
                        ),
                        name=name,
                        format=clip.format,
                    )
                )
            if rate <= 0:
                raise ClipError(
                    Sentence(
                        QT_TRANSLATE_NOOP("core", "{name} has no valid sample rate."), name=name
                    )
                )
            # The header's length first; then at most the longest allowed clip is decoded
            # (MP3 headers may only estimate the length).
            if frames > 0 and frames / rate > MAX_SECONDS + 0.05:
                raise _too_long(name, frames / rate)
            limit = int(MAX_SECONDS * rate) + rate // 10 + 1
            audio = clip.read(frames=limit, dtype="float32", always_2d=True)
    except ClipError:
        raise
    except (sf.LibsndfileError, RuntimeError, OSError, ValueError) as exc:
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ClipError(
            Sentence(
                QT_TRANSLATE_NOOP("core", "{name} cannot be read as audio ({reason})."),
                name=name,
                reason=reason,
            )
        ) from None
    if len(audio) >= limit:
        raise _too_long(name, max(frames, len(audio)) / rate)
    return check_clip(audio.mean(axis=1), rate, name)


def check_clip(audio: np.ndarray, rate: int, name: str = RECORDING) -> np.ndarray:
    """A mono clip at `rate`, checked (not empty, 3-30 s, not silent, finite) and resampled to
    24 kHz mono float32. Recordings from the microphone come through here too."""
    audio = np.asarray(audio, dtype=np.float32).reshape(-1)
    if audio.size == 0:
        raise ClipError(
            Sentence(QT_TRANSLATE_NOOP("core", "{name} has no audio in it."), name=name)
        )
    seconds = audio.size / rate
    if seconds < MIN_SECONDS:
        raise ClipError(
            Sentence(
                QT_TRANSLATE_NOOP(
                    "core",
                    "{name} is only {length} long; a reference recording must be {low}-{high} "
                    "seconds of one person speaking.",
                ),
                name=name,
                length=_length(seconds),
                low=f"{MIN_SECONDS:g}",
                high=f"{MAX_SECONDS:g}",
            )
        )
    if seconds > MAX_SECONDS + 0.05:
        raise _too_long(name, seconds)
    if not np.isfinite(audio).all():
        raise ClipError(
            Sentence(
                QT_TRANSLATE_NOOP("core", "{name} has invalid samples (NaN or infinity)."),
                name=name,
            )
        )
    if float(np.sqrt(np.mean(np.square(audio, dtype=np.float64)))) < SILENCE_RMS:
        raise ClipError(
            Sentence(
                QT_TRANSLATE_NOOP(
                    "core", "{name} is silent; record or choose a clip of someone speaking."
                ),
                name=name,
            )
        )
    return resample(audio, rate)


def resample(audio: np.ndarray, rate: int) -> np.ndarray:
    """Mono float32 at `rate` to the model's 24 kHz (torchaudio's band-limited sinc
    interpolation, the resampler ChatTTS's own examples use)."""
    audio = np.ascontiguousarray(audio, dtype=np.float32)
    if rate == SAMPLE_RATE:
        return audio
    import torch
    import torchaudio.functional as AF

    out = AF.resample(torch.from_numpy(audio), rate, SAMPLE_RATE)
    return np.ascontiguousarray(out.numpy(), dtype=np.float32)


def check_transcript(transcript: str) -> str:
    """What a clip's speaker says, as the model will read it; SpeakerError with one sentence
    when it cannot be used (empty, or text ChatTTS cannot read)."""
    try:
        return check_text(transcript).strip()
    except BadTextError as exc:
        raise SpeakerError(
            Sentence(
                QT_TRANSLATE_NOOP("core", "The transcript cannot be used: {problem}"),
                problem=said(exc),
            )
        ) from None
