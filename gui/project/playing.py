"""Playing a project from the segment editor: its chosen takes from a segment on (with their
pauses), or one take, read off the UI thread and played on the window's player; the words
spoken are followed (take_words.py)."""

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import numpy as np
from PySide6.QtCore import QObject

from chattts_studio.core.errors import AudioError
from chattts_studio.core.project import reading, take_files
from chattts_studio.core.project.model import Project
from chattts_studio.gui.common.tasks import in_background
from chattts_studio.gui.i18n import core_text
from chattts_studio.gui.project.take_words import Piece, TakeWords, pieces
from chattts_studio.gui.result.panel import ResultPanel


class TakePlayer(QObject):
    def __init__(
        self,
        result: ResultPanel,
        show: Callable[[str], object],
        problem: Callable[[Exception], None],
        parent: QObject,
    ) -> None:
        super().__init__(parent)
        self.result, self.show, self.problem = result, show, problem
        self.words = TakeWords(result, self)

    def toggle(self, folder: Path | None, project: Project | None, number: int) -> None:
        """Segment `number`, or stop what plays (Space)."""
        if self.result.player.playing:
            self.result.player.stop()
            return
        self.play(folder, project, number, number)

    def play(
        self, folder: Path | None, project: Project | None, first: int, last: int | None
    ) -> None:
        """Segments `first`..`last` (to the end when None): their chosen takes and pauses."""
        if project is None or folder is None:
            return
        if last is not None:
            project = replace(project, segments=project.segments[:last])
        shown = project
        playing = pieces(folder, shown, first, last)
        in_background(
            lambda: reading.joined(folder, shown, first),
            lambda audio: self._hear(audio, playing),
            self.problem,
            self,
        )

    def take(self, folder: Path | None, project: Project | None, number: int, take_id: int) -> None:
        """One take of segment `number`, chosen or not (the take list's Play take)."""
        segment = project.at(number) if project is not None else None
        take = segment.take(take_id) if segment is not None else None
        if take is None or folder is None or segment is None:
            return
        fresh = segment.text == take.text  # a stale take reads another text: not followed
        playing = [Piece(number, 0, take, folder / take.audio)] if fresh else []
        in_background(
            lambda: take_files.take_audio(folder, take),
            lambda audio: self._hear(audio, playing),
            self.problem,
            self,
        )

    def _hear(self, audio: np.ndarray, playing: list[Piece]) -> None:
        """Play `audio` on the window's player, its words followed; no sound device is one
        sentence, as the Result panel says it."""
        self.result.forget_playback()
        self.words.stop()
        try:
            self.result.player.play(audio)
        except AudioError as exc:
            self.show(core_text(exc))
            return
        self.words.follow(playing, audio)
