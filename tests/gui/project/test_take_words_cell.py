"""Follow words in the Segments tab: the takes that play are laid out as "play from here" joins
them, each is timed on the task pool (never the UI thread), the word spoken at the player's
position is said with its segment, a stale take is not followed, and the Text cell paints the
word's place, only that cell changing."""

import threading
from pathlib import Path

import numpy as np
import pytest
from project_fakes import saved_project
from PySide6.QtCore import QRect
from PySide6.QtWidgets import QStyleOptionViewItem
from window_steps import collect

from chattts_studio.core import SAMPLE_RATE
from chattts_studio.core.align.timeline import WordTimeline
from chattts_studio.core.devtools.alignacc import sentence
from chattts_studio.core.project import reading, store, take_files
from chattts_studio.core.project.model import Project
from chattts_studio.core.results.history import HistoryStore
from chattts_studio.gui.project.segment_model import SPOKEN_ROLE, Column, SegmentModel
from chattts_studio.gui.project.segment_view import SegmentView
from chattts_studio.gui.project.take_words import TakeWords, pieces
from chattts_studio.gui.result.panel import ResultPanel

TEXTS = ["The weather is very nice today.", "Please bring the blue folder."]


class PositionedPlayer:
    def __init__(self) -> None:
        self.position, self.playing = 0, False

    def stop(self) -> None:
        self.playing = False


@pytest.fixture
def project(tmp_path: Path) -> tuple[Path, Project, list]:  # type: ignore[type-arg]
    said = [sentence("en-us+f2", text) for text in TEXTS]
    assert all(s is not None for s in said)
    folder = saved_project(tmp_path / "book", TEXTS, [[s.audio] for s in said])  # type: ignore[union-attr]
    return folder, store.load(folder), said


def test_the_takes_are_laid_out_as_play_from_here_joins_them(project) -> None:  # type: ignore[no-untyped-def]
    folder, loaded, _said = project
    joined = reading.joined(folder, loaded, 1)
    laid = pieces(folder, loaded, 1, None)
    assert [p.number for p in laid] == [1, 2]
    for piece in laid:
        take = take_files.take_audio(folder, piece.take)
        assert np.array_equal(joined[piece.start : piece.start + len(take)], take)
    assert [p.number for p in pieces(folder, loaded, 2, 2)] == [2]
    assert pieces(folder, loaded, 2, 2)[0].start == 0


def test_the_word_spoken_is_said_with_its_segment(  # type: ignore[no-untyped-def]
    qtbot, project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder, loaded, said = project
    threads: list[int] = []
    add = WordTimeline.add

    def recorded(self: WordTimeline, audio: np.ndarray, text: str, first: int) -> None:
        threads.append(threading.get_ident())
        add(self, audio, text, first)

    monkeypatch.setattr(WordTimeline, "add", recorded)
    player = PositionedPlayer()
    result = ResultPanel(player, history=HistoryStore(tmp_path / "h"))  # type: ignore[arg-type]
    qtbot.addWidget(result)
    words = TakeWords(result)
    marks = collect(words.spoken)
    laid = pieces(folder, loaded, 1, None)
    audio = reading.joined(folder, loaded, 1)
    player.playing = True
    words.follow(laid, audio)  # Follow words is not ticked: nothing is timed
    assert not words.timed and not threads
    result.words_box.setChecked(True)
    qtbot.waitUntil(lambda: len(words.timed) == 2, timeout=60_000)
    assert threads and threading.get_ident() not in threads
    second = said[1]
    folder_word = second.words.index("folder")
    player.position = laid[1].start + round((second.starts[folder_word] + 0.15) * SAMPLE_RATE)
    qtbot.waitUntil(lambda: bool(marks) and marks[-1][0] == 2, timeout=2000)
    _number, first, last, estimated = marks[-1]
    assert TEXTS[1][first:last] == "folder" and not estimated
    player.playing = False  # it ended: the mark goes
    qtbot.waitUntil(lambda: marks[-1] == (0, 0, 0, False), timeout=2000)
    assert not words.timer.isActive()


def test_a_stale_take_is_not_followed(project) -> None:  # type: ignore[no-untyped-def]
    folder, loaded, _said = project
    from dataclasses import replace

    edited = replace(
        loaded,
        segments=[replace(loaded.segments[0], text="Another text."), loaded.segments[1]],
    )
    assert [p.number for p in pieces(folder, edited, 1, None)] == [2]


def test_the_text_cell_paints_the_spoken_word(qtbot, project) -> None:  # type: ignore[no-untyped-def]
    _folder, loaded, _said = project
    view = SegmentView()
    model = SegmentModel(view)
    view.setModel(model)
    model.set_project(loaded)
    qtbot.addWidget(view)
    view.resize(900, 300)
    view.setColumnWidth(Column.TEXT, 400)
    view.show()
    qtbot.waitExposed(view)
    changed = collect(model.dataChanged)
    before = view.viewport().grab().toImage()
    first = TEXTS[1].index("blue")
    model.set_spoken(2, first, first + 4, False)
    assert len(changed) == 1 and changed[0][0].row() == 1 and changed[0][0].column() == Column.TEXT
    assert model.data(model.index(1, Column.TEXT), SPOKEN_ROLE) == (first, first + 4, False)
    assert model.data(model.index(0, Column.TEXT), SPOKEN_ROLE) is None
    assert model.data(model.index(1, Column.SPEAKER), SPOKEN_ROLE) is None
    view.viewport().repaint()
    after = view.viewport().grab().toImage()
    differ = [
        (x, y)
        for y in range(after.height())
        for x in range(0, after.width(), 1)
        if before.pixel(x, y) != after.pixel(x, y)
    ]
    assert differ
    cell = view.visualRect(model.index(1, Column.TEXT))
    option = QStyleOptionViewItem()
    option.initFrom(view)
    option.rect = cell  # type: ignore[attr-defined]
    place = view.text_delegate.spoken_rect(option, model.index(1, Column.TEXT), first, first + 4)
    assert place is not None and cell.contains(place)
    xs, ys = [x for x, _ in differ], [y for _, y in differ]
    ratio = after.width() / view.viewport().width()  # a high-DPI grab has more pixels
    painted = QRect(
        round(min(xs) / ratio),
        round(min(ys) / ratio),
        round((max(xs) - min(xs)) / ratio),
        round((max(ys) - min(ys)) / ratio),
    )
    assert place.adjusted(-1, -1, 1, 1).contains(painted), (place, painted)
    model.set_spoken(0, 0, 0, False)  # no word: the cell as it was
    view.viewport().repaint()
    assert view.viewport().grab().toImage() == before


@pytest.mark.window(ready="idle", engine="standin")
def test_the_window_follows_a_take_it_plays(  # type: ignore[no-untyped-def]
    qtbot, make_window, project, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder, loaded, _said = project
    window = make_window()
    played: list[np.ndarray] = []
    monkeypatch.setattr(window.result.player, "play", lambda audio, *a, **k: played.append(audio))
    takes = window.projects.player
    segment = loaded.at(2)
    assert segment.chosen is not None
    takes.take(folder, loaded, 2, segment.chosen)
    qtbot.waitUntil(lambda: bool(played), timeout=10_000)
    assert [p.number for p in takes.words.playing] == [2]
    assert np.array_equal(played[0], take_files.take_audio(folder, segment.chosen_take))
    takes.words.spoken.emit(2, 7, 12, True)  # the panel's model shows what it says
    assert window.projects.panel.model.spoken == (2, 7, 12, True)
