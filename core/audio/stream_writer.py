"""Audio written while it is made: segments appended in text order, with the pause between
them, through soundfile's streaming encoders (WAV, FLAC, OGG, MP3) into a temp file beside the
target that is renamed into place only once the whole file is written.

Memory stays flat whatever the length: only the segment being written is held. A failure, a
cancel or Ctrl+C leaves any existing target as it was and no temp file behind (a SIGKILL can
leave a `.NAME.*.part.EXT` file in the folder; nothing else)."""

import contextlib
from pathlib import Path
from types import TracebackType
from typing import Self

import numpy as np
import soundfile as sf

from chattts_studio.core import SAMPLE_RATE
from chattts_studio.core.atomic import atomic_path
from chattts_studio.core.audio.output import NO_AUDIO, cannot_save, check_output_path
from chattts_studio.core.errors import AudioError


def pause_samples(pause_seconds: float) -> int:
    """The silence between segments, in samples (as join_clips makes it)."""
    return round(pause_seconds * SAMPLE_RATE)


class SegmentSink:
    """What every streaming writer shares: segments appended with the pause between them,
    counted in samples, `gain` applied and the samples clipped to [-1, 1] (as audio.save
    does), into a temp file beside `path` that is renamed into place only at the end; a
    failure said in the sentence audio.save gives for it (output.cannot_save). A subclass
    opens its encoder on `_temp_file()`, writes samples and finishes with `_put_in_place()`."""

    def __init__(
        self, path: Path, pause_seconds: float, gain: float, tags: dict[str, str] | None
    ) -> None:
        self.path = Path(path)
        self.pause = pause_samples(pause_seconds)
        self.gain = float(gain)  # may change between chapters
        self.tags = dict(tags or {})
        self.frames = 0  # samples written so far (pauses included)
        self.segments = 0  # since the last chapter mark: the pause goes between segments
        self._stack = contextlib.ExitStack()

    def write(self, audio: np.ndarray, scale: bool = True) -> None:
        raise NotImplementedError

    def add_segment(self, audio: np.ndarray) -> tuple[int, int]:
        """Append one segment (after the pause when it is not the first); return where it
        sits in the file, (first sample, end sample)."""
        if self.segments and self.pause:
            self.write_silence(self.pause)
        start = self.frames
        self.write(audio)
        self.segments += 1
        return start, self.frames

    def write_silence(self, samples: int) -> None:
        if samples > 0:
            self.write(np.zeros(samples, dtype=np.float32), scale=False)

    def _temp_file(self) -> Path:
        """The temp file the encoder writes, removed unless `_put_in_place` renames it."""
        return self._stack.enter_context(atomic_path(self.path))

    def _samples(self, audio: np.ndarray, scale: bool) -> np.ndarray:
        """`audio` as the file gets it: float32, one channel, `gain` applied when `scale`,
        clipped."""
        data = np.asarray(audio, dtype=np.float32).reshape(-1)
        if scale and self.gain != 1.0:
            data = data * np.float32(self.gain)
        return np.clip(data, -1.0, 1.0)

    def _check_written(self) -> None:
        if self.frames == 0:
            raise AudioError(NO_AUDIO)

    def _put_in_place(self) -> None:
        """The finished temp file flushed and renamed over the target."""
        try:
            self._stack.close()
        except OSError as problem:
            raise cannot_save(self.path, problem) from None

    def _error(self, exc: BaseException) -> BaseException:
        """The sentence audio.save gives for the same failure (a cancel or Ctrl+C as it is)."""
        return cannot_save(self.path, exc)


class AudioStreamWriter(SegmentSink):
    """Use as a context manager:

        with AudioStreamWriter(path, pause_seconds=0.25) as out:
            for result in engine.synthesize(plan):
                start, end = out.add_segment(result.audio)

    Leaving the block normally renames the file into place; leaving it with an exception
    removes the temp file and lets the exception through. Samples are clipped to [-1, 1] (as
    audio.save does) after `gain` is applied. WAV is 16-bit unless float_wav."""

    def __init__(
        self,
        path: Path,
        float_wav: bool = False,
        pause_seconds: float = 0.25,
        gain: float = 1.0,
        tags: dict[str, str] | None = None,
        subtype: str | None = None,
    ) -> None:
        self.format, default_subtype = check_output_path(Path(path))
        if subtype is None:
            subtype = "FLOAT" if float_wav and self.format == "WAV" else default_subtype
        self.subtype = subtype
        super().__init__(path, pause_seconds, gain, tags)
        self._file: sf.SoundFile | None = None

    # -- the context -----------------------------------------------------------------------
    def __enter__(self) -> Self:
        try:
            tmp = self._temp_file()
            self._file = sf.SoundFile(
                str(tmp), "w", SAMPLE_RATE, 1, self.subtype, format=self.format
            )
        except BaseException as exc:
            self._stack.close()
            raise self._error(exc) from None
        for key, value in self.tags.items():
            # Tags go in before the first sample; a format that takes none just has none.
            with contextlib.suppress(Exception):
                setattr(self._file, key, value)
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool:
        if exc_type is None:
            try:
                self._close()
                self._check_written()
            except BaseException as problem:
                self._stack.__exit__(type(problem), problem, problem.__traceback__)
                raise
            self._put_in_place()
            return False
        with contextlib.suppress(Exception):
            self._close()
        return bool(self._stack.__exit__(exc_type, exc, tb))

    # -- writing ---------------------------------------------------------------------------
    def write(self, audio: np.ndarray, scale: bool = True) -> None:
        """Append samples as they are (the gain applied, clipped), no pause."""
        if self._file is None:
            raise RuntimeError("the writer is not open")
        data = self._samples(audio, scale)
        if not data.size:
            return
        try:
            self._file.write(data)
        except BaseException as exc:
            raise self._error(exc) from None
        self.frames += len(data)

    def _close(self) -> None:
        handle, self._file = self._file, None
        if handle is not None:
            try:
                handle.close()
            except BaseException as exc:
                raise self._error(exc) from None
