"""What ResultPanel's parts (playback.py, history.py, saving.py) share, declared once so mypy checks
every use: signals, state, widgets and the methods one part calls on another.
"""

from typing import TYPE_CHECKING

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QCheckBox, QComboBox, QListWidget, QPushButton, QWidget

from chattts_studio.core.audio.player import Player
from chattts_studio.core.engine.request import SegmentResult
from chattts_studio.core.results.history import HistoryStore
from chattts_studio.core.results.result_store import ResultStore
from chattts_studio.gui.common.notices import MessageLabel


class ResultBase(QWidget):
    message = Signal(str)
    folder_used = Signal(str)
    history_limit_changed = Signal(object)  # bytes (more than an int of Qt's holds)
    played_at = Signal(int)  # the sample heard now (or the seek's place when nothing plays)
    stream_opened = Signal()  # the result starts playing (the player is the panel's again)
    shown_changed = Signal()  # another result is shown (a history entry, a run's start or end)

    # -- the result shown, made by panel.py ----------------------------------------------------
    player: Player
    store: ResultStore | None  # the result shown: the one running, or chosen
    results: list[SegmentResult]
    pause_seconds: float
    history_store: HistoryStore
    last_folder: str
    running: bool
    shown_text: str  # the text the result shown was made from; "" while it runs, or none
    output_problem: str | None  # why nothing can play (no output device), None when it can
    _running_store: ResultStore | None  # the store the running job writes
    _silenced: bool  # Stop pressed during this run: nothing more streams until Play
    lent: bool  # someone else plays on the shared player (playback.py)

    # -- its widgets, made by panel.py -----------------------------------------------------
    stream_box: QCheckBox
    stop_button: QPushButton
    save_button: QPushButton
    per_segment: QCheckBox
    subtitles_box: QCheckBox
    subtitle_format: QComboBox
    output_note: MessageLabel
    save_note: MessageLabel
    history_list: QListWidget

    if TYPE_CHECKING:
        # -- panel.py ------------------------------------------------------------------------
        @property
        def length(self) -> int: ...
        def _show_audio(self, only_if_changed: bool = False) -> None: ...

        # -- playback.py ---------------------------------------------------------------------
        def stop(self) -> None: ...
