"""The segment editor's take list, the flags' names and what a check shows, on projects made from
synthetic audio (no model): the current segment's takes listed with their seeds and lengths,
picked and played from the list; one name per flag in the window and in `project list`; a check
by the demo recogniser said as such, a rate past 100% not shown as it is, and a transcript's
unprintable characters not shown raw; the buttons showing their keys."""

from dataclasses import replace
from pathlib import Path

import pytest
from project_fakes import clipped, saved_project, speech
from PySide6.QtCore import Qt
from window_steps import collect

from chattts_studio.core.asr.score import DEMO_RECOGNIZER, check, percent
from chattts_studio.core.cli.main import main
from chattts_studio.core.project import edits, store
from chattts_studio.core.project.flags import FLAG_NAMES
from chattts_studio.core.services.project_job import HearJob, RerollJob
from chattts_studio.gui.project import said
from chattts_studio.gui.project.panel import ProjectPanel
from chattts_studio.gui.project.segment_model import Column
from chattts_studio.gui.project.take_list import TakeColumn

TEXTS = ["The first sentence.", "A second, clipped one.", "短。"]
TOOLTIP = Qt.ItemDataRole.ToolTipRole


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """Segment 1: two clean takes (the second chosen); 2: a clean take and a clipped one (the
    clipped one chosen); 3: one take."""
    return saved_project(
        tmp_path / "book",
        TEXTS,
        [[speech(2.0, 1), speech(2.5, 2)], [speech(3.0, 3), clipped(3.0, 4)], [speech(1.0, 5)]],
    )


@pytest.fixture
def panel(qtbot, folder: Path) -> ProjectPanel:  # type: ignore[no-untyped-def]
    panel = ProjectPanel()
    qtbot.addWidget(panel)
    panel.resize(1000, 600)
    panel.show()
    qtbot.waitExposed(panel)
    panel.show_project(store.load(folder), folder)
    return panel


def test_the_take_list_shows_every_take_and_picks_and_plays_one(
    qtbot, panel: ProjectPanel, folder: Path
) -> None:  # type: ignore[no-untyped-def]
    project = store.load(folder)
    takes = panel.take_list
    assert takes.isVisibleTo(panel)
    panel.view.go_to(2)
    model = takes.model
    assert takes.title.text() == "Takes of segment 2"
    assert model.rowCount() == 2
    for place, take in enumerate(project.at(2).takes):
        assert model.index(place, TakeColumn.SEED).data() == str(take.seed)
        assert model.index(place, TakeColumn.LENGTH).data() == f"{take.measures.seconds:.1f} s"
    # The chosen take (the clipped second) is marked and named by its flag.
    assert model.index(1, TakeColumn.NUMBER).data() == "✓ 2"
    assert model.index(0, TakeColumn.NUMBER).data() == "1"
    assert model.index(1, TakeColumn.FLAGS).data() == "clipped"
    assert model.index(0, TakeColumn.FLAGS).data() == ""
    assert not takes.pick_button.isEnabled()  # the chosen one is selected: nothing to pick

    picks, plays = collect(panel.pick_wanted), collect(panel.play_take_wanted)
    takes.view.setCurrentIndex(model.index(0, 0))
    assert takes.pick_button.isEnabled()
    qtbot.mouseClick(takes.play_button, Qt.MouseButton.LeftButton)
    qtbot.mouseClick(takes.pick_button, Qt.MouseButton.LeftButton)
    assert plays == [(2, project.at(2).takes[0].id)]
    assert picks == [(2, project.at(2).takes[0].id)]
    # A double-click on a take picks it too.
    rect = takes.view.visualRect(model.index(0, TakeColumn.SEED))
    assert takes.view.viewport().rect().contains(rect.center())  # on screen, below the segments
    qtbot.mouseClick(takes.view.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    qtbot.mouseDClick(takes.view.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert picks[-1] == (2, project.at(2).takes[0].id) and len(picks) == 2

    # The pick done (the window hands the changed project back): the list follows it.
    edits.pick(folder, 2, project.at(2).takes[0].id)
    panel.update_segments(store.load(folder), [2])
    assert model.index(0, TakeColumn.NUMBER).data() == "✓ 1"
    # Another segment: its takes; a locked one's takes cannot be picked.
    panel.view.go_to(1)
    assert takes.title.text() == "Takes of segment 1" and model.rowCount() == 2
    edits.set_locked(folder, "1", True)
    panel.update_segments(store.load(folder), [1])
    takes.view.setCurrentIndex(model.index(0, 0))
    assert not takes.pick_button.isEnabled() and takes.play_button.isEnabled()


def test_one_name_per_flag_in_the_window_and_the_command_line(
    panel: ProjectPanel, folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    clipped_name = FLAG_NAMES["clipping"]
    assert panel.model.index(1, Column.FLAGS).data() == clipped_name
    assert main(["project", "list", str(folder)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[1].endswith(f"[{clipped_name}]") and "[clipping]" not in lines[1]
    assert FLAG_NAMES["long"] == "slow" and FLAG_NAMES["short"] == "fast"


def test_a_demo_check_says_so_and_shows_no_raw_rate_or_garbage(
    panel: ProjectPanel, folder: Path
) -> None:
    # The demo heard babble with control characters in it against a two-character text.
    babble = "很多\x00很多\x07很多字\u200b" * 3
    demo = replace(check(TEXTS[2], babble), recognizer=DEMO_RECOGNIZER)
    assert demo.score > 1.0 and demo.demo
    edits.set_check(folder, 3, 1, demo)
    edits.set_check(folder, 1, 2, replace(check(TEXTS[0], TEXTS[0]), recognizer="sensevoice"))
    panel.show_project(store.load(folder), folder)
    heard = panel.model.index(2, Column.HEARD)
    assert heard.data() == ">100% (demo)" and percent(demo.score) == ">100%"
    tip = heard.data(TOOLTIP)
    assert tip.startswith("Demo recogniser (random weights): not a real hearing.")
    assert "over 100%" in tip and "%" not in tip.replace("over 100%", "")
    assert all(ch.isprintable() for line in tip.splitlines() for ch in line)
    assert "\ufffd" in tip  # the control characters shown as replacement marks
    why = panel.model.index(2, Column.FLAGS).data(TOOLTIP)
    assert "not a real hearing" in why and "100% of the text differs" in why
    assert f"{demo.score * 100:.0f}%" not in why
    # A real recogniser's check is shown as it is, with no demo words.
    clean = panel.model.index(0, Column.HEARD)
    assert clean.data() == "0%" and "demo" not in clean.data(TOOLTIP).lower()
    # The take list shows the same for the segment's takes.
    panel.view.go_to(3)
    assert panel.take_list.model.index(0, TakeColumn.HEARD).data() == ">100% (demo)"


def test_buttons_show_their_keys(panel: ProjectPanel) -> None:
    assert panel.play_button.text() == "Play segment (Space)"
    assert panel.reroll_button.text() == "Re-roll (R)"
    assert panel.edit_button.text() == "Edit text… (F2)"
    panel.view.go_to(1)
    assert panel.lock_button.text() == "Lock (L)"
    # Every button of a row fits the panel at its usual width (nothing is cut off).
    for button in (panel.play_button, panel.reroll_button, panel.lock_button):
        assert button.width() >= button.sizeHint().width()


def test_the_status_line_names_what_a_job_did() -> None:
    assert said.finished(HearJob(Path("p")), 7, 3.9, demo=False) == "7 takes checked in 3.9 s."
    assert said.finished(RerollJob(Path("p")), 2, 1.0, demo=True) == "2 takes made in 1.0 s."
    demo = said.finished(HearJob(Path("p")), 1, 0.5, demo=True)
    assert demo.startswith("1 take checked in 0.5 s.") and "demo recogniser" in demo
    assert said.picked(3, 2) == "Segment 3: take 2 picked."
    assert said.locked([3], True) == "Segment 3 locked: its take will not be remade."
    assert said.locked([3, 5], False).startswith("Segments 3, 5 unlocked")
