"""A take's audio read back from its project: checked against its record (length, rate, a
file cut short, a file that leads out of the folder), one sentence when it does not hold."""

import os
from pathlib import Path

import numpy as np

from chattts_studio.core import SAMPLE_RATE
from chattts_studio.core.project import codec, store
from chattts_studio.core.project.checked import shown
from chattts_studio.core.project.model import Take
from chattts_studio.core.project.store import ProjectError


def take_frames(take: Take) -> int:
    """The samples a take's audio holds: its measures say its length exactly (`seconds` is
    the sample count over the rate, measured on the samples that were written)."""
    return round(take.measures.seconds * SAMPLE_RATE)


def wav_problem(path: Path) -> str | None:
    """Why the file is not a whole WAV file, or None: soundfile reads a file cut short (a
    copy that stopped, a full disk) as if it were whole, so the data chunk's length is checked
    against the bytes there."""
    with open(path, "rb") as file:
        size = os.fstat(file.fileno()).st_size
        head = file.read(12)
        if len(head) < 12 or head[:4] != b"RIFF" or head[8:] != b"WAVE":
            return "not a WAV file"
        offset = 12
        for _ in range(64):  # fmt, fact, PEAK, data: a handful of chunks
            chunk = file.read(8)
            if len(chunk) < 8:
                break
            length = int.from_bytes(chunk[4:], "little")
            if chunk[:4] == b"data":
                present = size - offset - 8
                if length > present:
                    return f"cut short: {present:,} of its {length:,} bytes of audio"
                return None
            offset += 8 + length + (length & 1)
            file.seek(offset)
    return "no audio data"


def take_audio(folder: Path, take: Take) -> np.ndarray:
    """A take's samples (float32, exactly as made); ProjectError (one sentence) when its file
    is gone, leads outside the project, is cut short or is not the length its record says."""
    import soundfile as sf

    try:
        codec.audio_name(take.audio, "a take's file")
    except ValueError:
        said = shown(take.audio)
        raise store.damaged(folder, f"a take names a file outside takes/ ({said})") from None
    path = folder / take.audio
    if not store.inside(folder, path):
        raise store.damaged(folder, f"the audio of a take leads outside the project ({take.audio})")

    def unreadable(why: str) -> ProjectError:
        return store.damaged(folder, f"the audio of a take cannot be read ({take.audio}: {why})")

    expected = take_frames(take)
    problem = store.regular(path, 64 + 4 * expected + (1 << 20))
    try:
        problem = problem or wav_problem(path)
        if problem is not None:
            raise unreadable(problem)
        with sf.SoundFile(str(path)) as file:
            if file.samplerate != SAMPLE_RATE or file.channels != 1:
                not_mono = f"the audio of a take is not 24 kHz mono ({take.audio})"
                raise store.damaged(folder, not_mono)
            if file.frames != expected:
                raise unreadable(f"{file.frames:,} samples where its record says {expected:,}")
            audio = file.read(dtype="float32", always_2d=False)
    except (OSError, RuntimeError) as exc:  # soundfile says RuntimeError for a bad file
        detail = exc.strerror if isinstance(exc, OSError) else None
        raise unreadable(detail or str(exc)) from None
    if len(audio) != expected:
        raise unreadable(f"{len(audio):,} samples where its record says {expected:,}")
    return np.ascontiguousarray(audio, dtype=np.float32)
