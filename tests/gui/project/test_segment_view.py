"""The segment editor's model, view and panel, offscreen, on projects whose takes are made
from synthetic audio (no model): each segment's length, take, flags and lock as shown; the
review keys' signals (and none while the text is edited or a job runs); an edit asked for and
the project left alone; one row's change repainting one row; a 1,000-segment project asking
only for the rows on screen; the panel's actions naming the current segment."""

from dataclasses import replace
from pathlib import Path

import pytest
from project_fakes import big_project, clipped, saved_project, speech, stalled
from PySide6.QtCore import QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtWidgets import QComboBox
from window_steps import collect

from chattts_studio.core.project import store
from chattts_studio.core.project.model import Project, edited
from chattts_studio.gui.project import panel as panel_module
from chattts_studio.gui.project.panel import ProjectPanel
from chattts_studio.gui.project.segment_model import Column, SegmentModel
from chattts_studio.gui.project.segment_view import SegmentView

TEXTS = ["The first sentence.", "A second, clipped one.", "A third that stalls.", "No take yet."]
DISPLAY = Qt.ItemDataRole.DisplayRole
TOOLTIP = Qt.ItemDataRole.ToolTipRole


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """Four segments on disk: two clean takes (the second chosen), a clean and a clipped take
    (the clipped one chosen), one take with a long silence inside, and no take."""
    return saved_project(
        tmp_path / "book",
        TEXTS,
        [
            [speech(2.0, 1), speech(2.5, 2)],
            [speech(3.0, 3), clipped(3.0, 4)],
            [stalled(4.0, 5)],
            [],
        ],
    )


@pytest.fixture
def project(folder: Path) -> Project:
    return store.load(folder)


def cell(model: SegmentModel, row: int, column: Column, role: Qt.ItemDataRole = DISPLAY) -> object:
    return model.data(model.index(row, column), role)


@pytest.fixture
def view(qtbot, project: Project) -> SegmentView:  # type: ignore[no-untyped-def]
    view = SegmentView()
    model = SegmentModel(view)
    view.setModel(model)
    model.set_project(project)
    qtbot.addWidget(view)
    view.resize(700, 400)
    view.show()
    qtbot.waitExposed(view)
    view.setFocus()
    return view


def test_the_model_shows_length_take_flags_and_lock(project: Project) -> None:
    project.segments[2].locked = True
    model = SegmentModel()
    model.set_project(project)
    assert model.rowCount() == 4 and model.columnCount() == len(Column)
    rows = [
        [cell(model, r, c) for c in (Column.NUMBER, Column.TEXT, Column.DURATION, Column.TAKE)]
        for r in range(4)
    ]
    assert rows == [
        ["1", TEXTS[0], "2.5 s", "2/2"],
        ["2", TEXTS[1], "3.0 s", "2/2"],
        ["3", TEXTS[2], "6.0 s", "1/1"],
        ["4", TEXTS[3], "-", "-"],
    ]
    # Segment 3 reads its 16 letters far slower than the project's usual rate, and stalls.
    badges = [cell(model, r, Column.FLAGS) for r in range(4)]
    assert badges == ["", "clipped", "slow · silence", ""]
    assert cell(model, 1, Column.FLAGS, TOOLTIP) == (
        "10 samples of the take are clipped: it may sound distorted."
    )
    slow, silent = str(cell(model, 2, Column.FLAGS, TOOLTIP)).split("\n")  # one flag a line
    assert "much slower than this project's usual" in slow
    assert silent.startswith("The take falls silent for 2.0 s in the middle")
    checks = [cell(model, r, Column.LOCK, Qt.ItemDataRole.CheckStateRole) for r in range(4)]
    assert checks == [Qt.CheckState.Unchecked] * 2 + [
        Qt.CheckState.Checked,
        Qt.CheckState.Unchecked,
    ]
    assert model.flagged_count() == 1  # the locked one is left out, as "re-roll flagged" does
    assert model.take_ids(0) == [1, 2] and model.segment_at(3).text == TEXTS[3]
    # A locked segment's text cannot be edited; the others' can.
    editable = Qt.ItemFlag.ItemIsEditable
    assert model.flags(model.index(0, Column.TEXT)) & editable
    assert not model.flags(model.index(2, Column.TEXT)) & editable


def test_a_take_of_an_old_text_shows_stale(project: Project) -> None:
    project.segments[0] = edited(project.segments[0], "The first sentence, edited.")
    model = SegmentModel()
    model.set_project(project)
    font = cell(model, 0, Column.TEXT, Qt.ItemDataRole.FontRole)
    assert font is not None and font.italic()  # type: ignore[attr-defined]
    assert "old text" in str(cell(model, 0, Column.DURATION, TOOLTIP))
    assert cell(model, 1, Column.TEXT, Qt.ItemDataRole.FontRole) is None
    # A dictionary entry that changes how the text is read makes its take stale too.
    model.set_project(project, lexicon=(("second", "2nd"),))
    assert cell(model, 1, Column.TEXT, Qt.ItemDataRole.FontRole) is not None
    assert cell(model, 2, Column.TEXT, Qt.ItemDataRole.FontRole) is None


def test_review_keys_ask_for_play_reroll_pick_and_lock(qtbot, view: SegmentView) -> None:  # type: ignore[no-untyped-def]
    played, rerolls = collect(view.play_toggled), collect(view.reroll_wanted)
    picks, locks = collect(view.pick_wanted), collect(view.lock_wanted)
    assert view.current_number() == 1
    qtbot.keyClick(view, Qt.Key.Key_Down)
    assert view.current_number() == 2
    assert view.selected_numbers() == [2]  # whole rows, one at a time
    qtbot.keyClick(view, Qt.Key.Key_Space)
    assert played == [(2,)]
    qtbot.keyClick(view, Qt.Key.Key_R)
    assert rerolls == [([2],)]
    qtbot.keyClick(view, Qt.Key.Key_1)
    qtbot.keyClick(view, Qt.Key.Key_2)
    assert picks == [(2, 1), (2, 2)]
    qtbot.keyClick(view, Qt.Key.Key_9)  # segment 2 has two takes
    qtbot.keyClick(view, Qt.Key.Key_3)
    assert picks == [(2, 1), (2, 2)]
    assert view.current_number() == 2  # no keyboard search jumped elsewhere
    qtbot.keyClick(view, Qt.Key.Key_L)
    assert locks == [([2], True)]
    # A locked segment: L unlocks; R and the take keys ask nothing (core refuses them).
    model = view.segment_model()
    assert model is not None and model.project is not None
    model.project.segments[1].locked = True
    model.update_segments(model.project, [2])
    qtbot.keyClick(view, Qt.Key.Key_L)
    qtbot.keyClick(view, Qt.Key.Key_R)
    qtbot.keyClick(view, Qt.Key.Key_1)
    assert locks[-1] == ([2], False) and len(rerolls) == 1 and len(picks) == 2


def test_keys_go_to_the_open_text_editor_and_an_edit_changes_no_project(
    qtbot, view: SegmentView, project: Project
) -> None:  # type: ignore[no-untyped-def]
    model = view.segment_model()
    assert model is not None
    asked = [
        *map(collect, (view.play_toggled, view.reroll_wanted, view.pick_wanted, view.lock_wanted))
    ]
    edits = collect(model.text_edited)
    qtbot.keyClick(view, Qt.Key.Key_F2)
    editor = view.text_delegate.editor
    assert view.editing() and editor is not None and editor.text() == TEXTS[0]
    editor.selectAll()
    qtbot.keyClicks(editor, "Say r 2 l then")
    qtbot.keyClick(editor, Qt.Key.Key_Space)
    for key in (Qt.Key.Key_R, Qt.Key.Key_2, Qt.Key.Key_L, Qt.Key.Key_Space):
        qtbot.keyClick(view, key)  # reaching the view while the editor is open: ignored
    assert asked == [[], [], [], []]
    assert editor.text() == "Say r 2 l then "
    qtbot.keyClick(editor, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: not view.editing())  # the delegate closes its editor queued
    assert edits == [(1, "Say r 2 l then")]
    assert project.segments[0].text == TEXTS[0]  # asked for, not done: the window does it
    assert cell(model, 0, Column.TEXT) == TEXTS[0]
    qtbot.keyClick(view, Qt.Key.Key_Return)  # Enter edits too
    assert view.editing()
    qtbot.keyClick(view.text_delegate.editor, Qt.Key.Key_Escape)
    qtbot.waitUntil(lambda: not view.editing())
    assert len(edits) == 1


def test_the_take_picker_lists_takes_and_asks_for_the_pick(qtbot, view: SegmentView) -> None:  # type: ignore[no-untyped-def]
    picks = collect(view.pick_wanted)
    model = view.segment_model()
    assert model is not None
    view.edit(model.index(0, Column.TAKE))
    box = view.findChild(QComboBox)
    assert box is not None
    assert [box.itemText(i) for i in range(box.count())] == [
        "1 (seed 101, 2.0 s)",
        "2 (seed 102, 2.5 s)",
    ]
    assert box.currentIndex() == 1  # the chosen take
    box.activated.emit(0)
    assert picks == [(1, 1)]


def test_update_segments_repaints_only_its_rows(project: Project) -> None:
    model = SegmentModel()
    model.set_project(project)
    changed: list[tuple[int, int]] = []
    model.dataChanged.connect(lambda top, bottom, *_: changed.append((top.row(), bottom.row())))
    resets = collect(model.modelReset)
    project.segments[1].chosen = 1  # as a pick of segment 2's first take leaves it
    model.update_segments(project, [2])
    assert changed == [(1, 1)] and resets == []
    assert cell(model, 1, Column.TAKE) == "1/2" and cell(model, 1, Column.FLAGS) == ""
    # A split adds a row: the later rows all move, so the model starts again.
    project.segments.insert(1, replace(project.segments[0], id=99, takes=[], chosen=None))
    model.update_segments(project, [1, 2])
    assert len(resets) == 1 and model.rowCount() == 5 and cell(model, 1, Column.TAKE) == "-"


def test_the_speaker_column_shows_for_a_dialogue(view: SegmentView, project: Project) -> None:
    model = view.segment_model()
    assert model is not None and view.isColumnHidden(Column.SPEAKER)
    project.segments[1].speaker = "Ann"
    model.update_segments(project, [2])
    assert not view.isColumnHidden(Column.SPEAKER) and cell(model, 1, Column.SPEAKER) == "Ann"


def test_the_lock_box_asks_for_the_lock_and_changes_nothing(project: Project) -> None:
    model = SegmentModel()
    model.set_project(project)
    locks = collect(model.lock_edited)
    index = model.index(0, Column.LOCK)
    assert model.flags(index) & Qt.ItemFlag.ItemIsUserCheckable
    assert not model.setData(index, Qt.CheckState.Checked.value, Qt.ItemDataRole.CheckStateRole)
    assert locks == [(1, True)] and not project.segments[0].locked
    assert cell(model, 0, Column.LOCK, Qt.ItemDataRole.CheckStateRole) == Qt.CheckState.Unchecked


class CountingModel(SegmentModel):
    """Counts the rows a view asks about."""

    def __init__(self) -> None:
        super().__init__()
        self.asked: set[int] = set()
        self.calls = 0

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = DISPLAY) -> object:
        self.calls += 1
        self.asked.add(index.row())
        return super().data(index, role)


def test_a_thousand_segments_cost_the_rows_on_screen(qtbot) -> None:  # type: ignore[no-untyped-def]
    view = SegmentView()
    model = CountingModel()
    view.setModel(model)
    qtbot.addWidget(view)
    view.resize(800, 600)
    view.show()
    qtbot.waitExposed(view)
    model.set_project(big_project(1000, takes=3))
    view.viewport().repaint()
    view.grab()
    assert model.rowCount() == 1000 and model.row_at(999).take == "1/3"
    shown = view.rowAt(view.viewport().height() - 1) + 1
    assert 0 < shown < 40
    assert model.asked and max(model.asked) <= shown + 1  # never the rows below the screen
    assert model.calls < 1000 * len(Column) // 5


@pytest.fixture
def panel(qtbot, project: Project, folder: Path) -> ProjectPanel:  # type: ignore[no-untyped-def]
    panel = ProjectPanel()
    qtbot.addWidget(panel)
    panel.resize(900, 500)
    panel.show()
    qtbot.waitExposed(panel)
    panel.show_project(project, folder)
    return panel


def test_a_panel_without_a_project_says_how_to_start(qtbot) -> None:  # type: ignore[no-untyped-def]
    panel = ProjectPanel()
    qtbot.addWidget(panel)
    assert panel.pages.currentWidget() is panel.empty
    assert "New from text" in panel.empty.text()
    assert panel.current_number() is None
    assert not panel.reroll_button.isEnabled() and not panel.play_button.isEnabled()


def test_panel_actions_name_the_current_segment(
    qtbot, panel: ProjectPanel, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    assert panel.pages.currentWidget() is panel.split and panel.view.isVisibleTo(panel)
    assert panel.title.text() == "Book: 4 segments, 2 flagged"
    panel.view.go_to(2)
    assert panel.current_number() == 2
    names = (
        "play_segment_wanted play_from_wanted reroll_wanted reroll_flagged_wanted "
        "reroll_unlocked_wanted lock_wanted merge_wanted speaker_wanted split_wanted "
        "export_wanted"
    ).split()
    got = {name: collect(getattr(panel, name)) for name in names}
    guesses: list[int] = []

    def ask(_parent: object, text: str, at: int) -> int:
        guesses.append(at)
        return 3

    monkeypatch.setattr(panel_module, "ask_split_at", ask)
    panel.takes_box.setValue(3)
    for button in (
        panel.play_button,
        panel.play_from_button,
        panel.reroll_button,
        panel.reroll_flagged_button,
        panel.reroll_unlocked_button,
        panel.lock_button,
        panel.merge_button,
        panel.speaker_button,
        panel.split_button,
        panel.export_button,
    ):
        qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    assert got == {
        "play_segment_wanted": [(2,)],
        "play_from_wanted": [(2,)],
        "reroll_wanted": [([2], 3)],
        "reroll_flagged_wanted": [(3,)],
        "reroll_unlocked_wanted": [(3,)],
        "lock_wanted": [([2], True)],
        "merge_wanted": [(2,)],
        "speaker_wanted": [([2],)],
        "split_wanted": [(2, 3)],
        "export_wanted": [()],
    }
    assert guesses == [len("A second,")]  # after the sentence break nearest the middle
    # With the text open in place, a split cuts where its cursor is (the click keeps it open).
    qtbot.mouseClick(panel.edit_button, Qt.MouseButton.LeftButton)
    editor = panel.view.text_delegate.editor
    assert panel.view.editing() and editor is not None
    editor.setCursorPosition(5)
    qtbot.mouseClick(panel.split_button, Qt.MouseButton.LeftButton)
    assert guesses[-1] == 5
    # The last segment has no next one to merge with.
    panel.view.go_to(4)
    assert not panel.merge_button.isEnabled() and not panel.play_button.isEnabled()


def test_busy_keeps_navigation_and_playback(qtbot, panel: ProjectPanel) -> None:  # type: ignore[no-untyped-def]
    played, rerolls = collect(panel.play_toggled), collect(panel.reroll_wanted)
    edits = collect(panel.text_edited)
    panel.set_busy(True)
    assert not panel.reroll_button.isEnabled() and not panel.split_button.isEnabled()
    assert not panel.reroll_flagged_button.isEnabled() and not panel.lock_button.isEnabled()
    assert panel.play_button.isEnabled() and panel.play_from_button.isEnabled()
    view = panel.view
    view.setFocus()
    qtbot.keyClick(view, Qt.Key.Key_Down)
    qtbot.keyClick(view, Qt.Key.Key_R)
    qtbot.keyClick(view, Qt.Key.Key_F2)
    qtbot.keyClick(view, Qt.Key.Key_Space)
    assert view.current_number() == 2 and played == [(2,)]
    assert rerolls == [] and not view.editing() and edits == []
    panel.set_busy(False)
    assert panel.reroll_button.isEnabled()
    qtbot.keyClick(view, Qt.Key.Key_R)
    assert rerolls == [([2], 1)]
