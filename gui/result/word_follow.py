"""Follow words: while a result plays, the word being spoken is marked in the editor, and a click on
a word plays from it. Words are timed on the task pool (core/align/spans.py) while the box is
ticked.
"""

from collections.abc import Sequence
from weakref import WeakKeyDictionary, WeakSet

import numpy as np
from PySide6.QtCore import QObject

from chattts_studio.core import SAMPLE_RATE
from chattts_studio.core.align import spans as word_times
from chattts_studio.core.align.spans import WordSpan, spoken_at, word_at
from chattts_studio.core.results.result_store import ResultStore
from chattts_studio.gui.common.tasks import in_background
from chattts_studio.gui.i18n import core_text, translate
from chattts_studio.gui.panels.editor import EditorPanel
from chattts_studio.gui.result.panel import ResultPanel

Segments = list[tuple[str, np.ndarray, int]]


class WordFollow(QObject):
    """Joins the result panel (its position, its result, its box) and the editor."""

    def __init__(self, result: ResultPanel, editor: EditorPanel) -> None:
        super().__init__(result)
        self.result, self.editor = result, editor
        # Each result's words once timed; a result the history drops is forgotten with it.
        self.timed: WeakKeyDictionary[ResultStore, list[WordSpan]] = WeakKeyDictionary()
        self._timing: WeakSet[ResultStore] = WeakSet()  # on the pool now
        self._same_text: bool | None = None  # editor text == the result's; None: not compared
        self._marked: int | None = None  # the word marked now (-1: to be drawn again)
        self._tip = result.words_box.toolTip()  # the box's own, before a result's count
        result.words_box.toggled.connect(self._toggled)
        result.shown_changed.connect(self._shown_changed)
        result.played_at.connect(self.show_position)
        editor.editor.textChanged.connect(self._text_changed)
        editor.editor.clicked.connect(self.play_word)

    # -- the words' times ------------------------------------------------------------------------
    def _toggled(self, on: bool) -> None:
        if on:
            self._time_shown()
        self._refresh()

    def _shown_changed(self) -> None:
        self._same_text = None
        if self.result.words_box.isChecked():
            self._time_shown()
        self._refresh()

    def _time_shown(self) -> None:
        """Time the shown result's words on the pool, unless that is done or under way."""
        result, store = self.result, self.result.store
        text = result.shown_text
        if store is None or result.running or not text or store in self.timed:
            return
        if store in self._timing:
            return
        samples = store.samples()
        segments: Segments = [
            (r.text, samples[first:end], first)
            for r in sorted(result.results, key=lambda r: r.index)
            for first, end in [store.segments.get(r.index, (0, 0))]
            if end > first
        ]
        if not segments:
            return
        self._timing.add(store)
        in_background(
            lambda: word_times.result_spans(text, segments, SAMPLE_RATE),
            lambda found: self._timed(store, found),
            lambda exc: self._failed(store, exc),
            owner=self,
        )

    def _timed(self, store: ResultStore, found: list[WordSpan]) -> None:
        self._timing.discard(store)
        self.timed[store] = found
        self._refresh()

    def timed_sentence(self) -> str:
        """What the shown result's timings are, for the box's tooltip ("" when not timed): the
        window's line keeps the synthesis's outcome."""
        found = self.timed.get(self.result.store) if self.result.store is not None else None
        if not found:
            return ""
        estimated = sum(s.estimated for s in found)
        if not estimated:
            return translate("WordFollow", "{count} words timed.").format(count=len(found))
        return translate(
            "WordFollow",
            "{count} words timed, {estimated} of them estimated (not heard: marked faintly).",
        ).format(count=len(found), estimated=estimated)

    def _failed(self, store: ResultStore, exc: Exception) -> None:
        self._timing.discard(store)
        self.timed[store] = []  # not tried again for this result
        self.result.message.emit(
            translate("WordFollow", "The words could not be timed: {reason}").format(
                reason=core_text(exc)
            )
        )

    # -- what is shown ---------------------------------------------------------------------------
    def spans(self) -> Sequence[WordSpan]:
        """The shown result's words when they can be followed: the box ticked, the words timed
        and the editor holding the text they were timed in; else none."""
        result, store = self.result, self.result.store
        if not result.words_box.isChecked() or store is None or result.running:
            return ()
        found = self.timed.get(store)
        if not found:
            return ()
        if self._same_text is None:
            self._same_text = self.editor.text() == result.shown_text
        return found if self._same_text else ()

    def _text_changed(self) -> None:
        self._same_text = None  # compared when next needed (an undo may bring it back)
        self._refresh()

    def _refresh(self) -> None:
        timed = self.timed_sentence()
        self.result.words_box.setToolTip(f"{self._tip}\n{timed}" if timed else self._tip)
        self._marked = -1  # drawn again, whatever is marked now
        self.show_position(self.result.seek.value())

    def show_position(self, sample: int) -> None:
        """Mark the word spoken at `sample` of the result (none between words or when the
        words cannot be followed)."""
        found = self.spans()
        if self.result.lent and self.result.player.playing:
            found = ()  # the player plays something else (a project's take) at `sample`
        at = spoken_at(found, sample / SAMPLE_RATE) if found else None
        if at == self._marked:
            return
        self._marked = at
        if at is None:
            self.editor.clear_spoken()
            return
        span = found[at]
        self.editor.mark_spoken(span.first, span.last, span.estimated)

    def play_word(self, position: int) -> None:
        """A click at character `position`: on a timed word, play from its start."""
        found = self.spans()
        at = word_at(found, position) if found else None
        if at is not None:
            self.result.play(round(found[at].start * SAMPLE_RATE))
