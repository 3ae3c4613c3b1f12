"""AAC in MP4 (.m4b audiobooks, .m4a chapters) written while audio comes, through PyAV (whose
wheels ship FFmpeg): atomically (a temp file beside the target, renamed at the end), with
chapter marks and tags."""

import contextlib
from fractions import Fraction
from pathlib import Path
from types import TracebackType
from typing import Any, Self

import numpy as np

from chattts_studio.core import SAMPLE_RATE
from chattts_studio.core.atomic import target_problem
from chattts_studio.core.audio.stream_writer import SegmentSink
from chattts_studio.core.errors import AudioError

BIT_RATE = 64_000  # mono speech at 24 kHz: transparent enough, about 29 MB an hour


class AacWriter(SegmentSink):
    """Use as a context manager; `mark(title)` starts a chapter at the current position (the
    marks are written when the file is finished, each ending where the next starts)."""

    def __init__(
        self,
        path: Path,
        pause_seconds: float = 0.25,
        gain: float = 1.0,
        tags: dict[str, str] | None = None,
        bit_rate: int = BIT_RATE,
    ) -> None:
        problem = target_problem(Path(path), example="book.m4b")
        if problem:
            raise AudioError(problem)
        super().__init__(path, pause_seconds, gain, tags)
        self.bit_rate = bit_rate
        self.marks: list[tuple[int, str]] = []  # (first sample, title)
        self._container: Any = None
        self._stream: Any = None

    def __enter__(self) -> Self:
        import av

        try:
            tmp = self._temp_file()
            self._container = av.open(str(tmp), "w", format="ipod")
            stream = self._container.add_stream("aac", rate=SAMPLE_RATE, layout="mono")
            stream.bit_rate = self.bit_rate
            self._stream = stream
            for key, value in self.tags.items():
                self._container.metadata[key] = value
        except BaseException as exc:
            self._abandon()
            raise self._error(exc) from None
        return self

    def mark(self, title: str) -> None:
        self.marks.append((self.frames, title))
        self.segments = 0

    def write(self, audio: np.ndarray, scale: bool = True) -> None:
        import av

        data = self._samples(audio, scale)
        if not data.size:
            return
        try:
            frame = av.AudioFrame.from_ndarray(data.reshape(1, -1), format="flt", layout="mono")
            frame.sample_rate = SAMPLE_RATE
            frame.pts = self.frames
            frame.time_base = Fraction(1, SAMPLE_RATE)
            for packet in self._stream.encode(frame):
                self._container.mux(packet)
        except BaseException as exc:
            raise self._error(exc) from None
        self.frames += len(data)

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if exc_type is not None:
            self._abandon(exc_type, exc, tb)
            return
        try:
            self._check_written()
            for packet in self._stream.encode(None):
                self._container.mux(packet)
            if self.marks:
                self._container.set_chapters(self._chapters())
            container, self._container = self._container, None
            container.close()
        except BaseException as problem:
            error = self._error(problem)
            self._abandon(type(error), error, error.__traceback__)
            raise error from None
        self._put_in_place()

    def _chapters(self) -> list[Any]:
        ends = [start for start, _ in self.marks[1:]] + [self.frames]
        return [
            {
                "id": n + 1,
                "start": start,
                "end": end,
                "time_base": Fraction(1, SAMPLE_RATE),
                "metadata": {"title": title},
            }
            for n, ((start, title), end) in enumerate(zip(self.marks, ends, strict=True))
        ]

    def _abandon(
        self,
        exc_type: type[BaseException] | None = None,
        exc: BaseException | None = None,
        tb: TracebackType | None = None,
    ) -> None:
        container, self._container = self._container, None
        if container is not None:
            with contextlib.suppress(Exception):
                container.close()
        if exc_type is None:
            exc_type, exc = AudioError, AudioError("abandoned")
        self._stack.__exit__(exc_type, exc, tb)  # removes the temp file


def read_chapters(path: Path) -> list[tuple[float, float, str]]:
    """(start seconds, end seconds, title) of each chapter mark in an MP4 file."""
    import av

    with av.open(str(path)) as container:
        marks = []
        for chapter in container.chapters():
            base = chapter["time_base"] or Fraction(1, 1)
            marks.append(
                (
                    float(chapter["start"] * base),
                    float(chapter["end"] * base),
                    chapter["metadata"].get("title", ""),
                )
            )
        return marks
