"""Follow words in the Segments tab: while a project's takes play, the word being spoken is
marked in its segment's text. Each take is timed once on the task pool, with Follow words
ticked (the Result panel's box); a take that reads an older text (stale) is not followed."""

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PySide6.QtCore import QObject, QTimer, Signal

from chattts_studio.core import SAMPLE_RATE
from chattts_studio.core.align import spans as word_times
from chattts_studio.core.align.spans import WordSpan, spoken_at
from chattts_studio.core.audio.stream_writer import pause_samples
from chattts_studio.core.project.model import Project, Take
from chattts_studio.core.project.take_files import take_frames
from chattts_studio.gui.common.tasks import in_background
from chattts_studio.gui.i18n import core_text, translate
from chattts_studio.gui.result.panel import ResultPanel

FOLLOW_MS = 100


@dataclass(frozen=True)
class Piece:
    """A take in what plays: its segment, where it starts (a sample) and its file."""

    number: int
    start: int
    take: Take
    file: Path


def pieces(folder: Path, project: Project, first: int, last: int | None) -> list[Piece]:
    """The chosen takes of segments `first`..`last` as reading.joined lays them out (each after
    its pause, none before the first); only those whose segment still reads the take's text."""
    out, at = [], 0
    for n, segment in enumerate(project.segments[first - 1 : last]):
        take = segment.chosen_take
        if take is None:
            break
        if n:
            at += pause_samples(segment.pause_before)
        if segment.text == take.text:
            out.append(Piece(first + n, at, take, folder / take.audio))
        at += take_frames(take)
    return out


class TakeWords(QObject):
    spoken = Signal(int, int, int, bool)  # segment number (0: none), first, last, estimated

    def __init__(self, result: ResultPanel, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.result = result
        self.timed: dict[Path, list[WordSpan]] = {}  # each take's words, by its file
        self._timing: set[Path] = set()
        self.playing: list[Piece] = []
        self._audio: np.ndarray | None = None
        self._marked: tuple[int, int, int, bool] = (0, 0, 0, False)
        self.timer = QTimer(self)
        self.timer.setInterval(FOLLOW_MS)
        self.timer.timeout.connect(self._tick)
        result.stream_opened.connect(self.stop)  # the result plays: not the takes any more
        result.words_box.toggled.connect(lambda on: self._time() if on else self._mark(None))

    def follow(self, playing: Sequence[Piece], audio: np.ndarray) -> None:
        """`audio` (made of `playing`'s takes) has just started on the window's player."""
        self.playing, self._audio = list(playing), audio
        self._time()
        self.timer.start()

    def stop(self) -> None:
        self.playing, self._audio = [], None
        self.timer.stop()
        self._mark(None)

    def _time(self) -> None:
        audio = self._audio
        if audio is None or not self.result.words_box.isChecked():
            return
        for piece in self.playing:
            if piece.file in self.timed or piece.file in self._timing:
                continue
            clip = audio[piece.start : piece.start + take_frames(piece.take)]
            self._time_take(piece.file, piece.take.text, clip)

    def _time_take(self, file: Path, said: str, clip: np.ndarray) -> None:
        self._timing.add(file)

        def timed(found: list[WordSpan]) -> None:
            self._timed(file, found)

        def failed(exc: Exception) -> None:
            self._failed(file, exc)

        work = word_times.result_spans
        in_background(lambda: work(said, [(said, clip, 0)], SAMPLE_RATE), timed, failed, self)

    def _timed(self, file: Path, found: list[WordSpan]) -> None:
        self._timing.discard(file)
        self.timed[file] = found

    def _failed(self, file: Path, exc: Exception) -> None:
        self._timing.discard(file)
        self.timed[file] = []
        self.result.message.emit(
            translate("WordFollow", "The words could not be timed: {reason}").format(
                reason=core_text(exc)
            )
        )

    def _tick(self) -> None:
        player = self.result.player
        if not player.playing:
            self.stop()
            return
        self._mark(self.word_at(player.position))

    def word_at(self, sample: int) -> tuple[int, WordSpan] | None:
        """The segment number and the word spoken at `sample` of what plays, or None."""
        if not self.result.words_box.isChecked():
            return None
        for piece in reversed(self.playing):
            if piece.start <= sample:
                found = self.timed.get(piece.file) or []
                at = spoken_at(found, (sample - piece.start) / SAMPLE_RATE)
                return (piece.number, found[at]) if at is not None else None
        return None

    def _mark(self, word: tuple[int, WordSpan] | None) -> None:
        mark = (0, 0, 0, False)
        if word is not None:
            number, span = word
            mark = (number, span.first, span.last, span.estimated)
        if mark != self._marked:
            self._marked = mark
            self.spoken.emit(*mark)
