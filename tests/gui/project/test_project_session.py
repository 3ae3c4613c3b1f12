"""The segment editor in the real window with no model (projects of synthetic takes): a take
picked from the take list, a lock and an unlock each said on the status line; Space with no
sound device is one sentence, never a traceback; the project open at close opens again at the
next start."""

from pathlib import Path

import numpy as np
import pytest
from project_fakes import saved_project, speech
from PySide6.QtCore import Qt

from chattts_studio.core.errors import AudioError
from chattts_studio.core.messages import QT_TRANSLATE_NOOP
from chattts_studio.core.project import store, take_files
from chattts_studio.gui.project.take_list import TakeColumn

TEXTS = ["The first sentence.", "The second sentence.", "The third sentence."]
NO_DEVICE = QT_TRANSLATE_NOOP(
    "core", "No audio output device is available; the audio can still be saved."
)


pytestmark = pytest.mark.window(ready="shown")


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    return saved_project(
        tmp_path / "book.chattts",
        TEXTS,
        [[speech(1.0, 1), speech(1.2, 2)], [speech(1.1, 3), speech(1.3, 4)], [speech(0.9, 5)]],
    )


def _opened(qtbot, window, folder: Path) -> None:  # type: ignore[no-untyped-def]
    window.projects.show_folder(folder)
    qtbot.waitUntil(lambda: window.projects.project is not None)
    qtbot.waitUntil(lambda: window.projects.panel.model.rowCount() == len(TEXTS))


def test_pick_lock_and_unlock_each_say_what_they_did(qtbot, make_window, folder: Path) -> None:  # type: ignore[no-untyped-def]
    window = make_window(model=None)
    _opened(qtbot, window, folder)
    panel, notice = window.projects.panel, window.messages.notice
    panel.view.go_to(2)
    takes = panel.take_list
    assert takes.model.rowCount() == 2
    takes.view.setCurrentIndex(takes.model.index(0, 0))  # take 1; take 2 is chosen
    qtbot.mouseClick(takes.pick_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: notice.text() == "Segment 2: take 1 picked.")
    assert store.load(folder).at(2).chosen == 1 and store.load(folder).at(2).picked
    qtbot.waitUntil(lambda: takes.model.index(0, TakeColumn.NUMBER).data() == "✓ 1")

    view = panel.view
    view.setFocus()
    qtbot.keyClick(view, Qt.Key.Key_L)
    qtbot.waitUntil(lambda: notice.text() == "Segment 2 locked: its take will not be remade.")
    assert store.load(folder).at(2).locked
    qtbot.waitUntil(lambda: panel.lock_button.text() == "Unlock (L)")
    qtbot.mouseClick(panel.lock_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: notice.text().startswith("Segment 2 unlocked"))
    assert not store.load(folder).at(2).locked


def test_space_without_a_sound_device_is_one_sentence(
    qtbot, make_window, folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    window = make_window(model=None)
    _opened(qtbot, window, folder)
    tried: list[np.ndarray] = []

    def no_device(audio: np.ndarray, *_args: object, **_kwargs: object) -> None:
        tried.append(audio)
        raise AudioError(NO_DEVICE)

    monkeypatch.setattr(window.result.player, "play", no_device)
    view = window.projects.panel.view
    view.setFocus()
    view.go_to(1)
    qtbot.keyClick(view, Qt.Key.Key_Space)  # an exception escaping the slot fails the test
    qtbot.waitUntil(lambda: window.messages.notice.text() == NO_DEVICE)
    chosen = store.load(folder).at(1).chosen_take
    assert len(tried) == 1 and chosen is not None
    assert np.array_equal(tried[0], take_files.take_audio(folder, chosen))
    # Play take in the take list says the same.
    window.messages.show("")
    takes = window.projects.panel.take_list
    qtbot.mouseClick(takes.play_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.messages.notice.text() == NO_DEVICE)
    assert len(tried) == 2


def test_the_last_project_opens_again_at_the_next_start(
    qtbot, make_window, folder: Path, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    first = make_window(model=None)
    _opened(qtbot, first, folder)
    first.close()  # writes the settings

    second = make_window(model=None)
    qtbot.waitUntil(lambda: second.projects.folder == folder)
    assert second.projects.panel.model.rowCount() == len(TEXTS)
    assert second.editor_tabs.currentWidget() is not second.projects.panel  # the text in front
    second.projects.close_project()
    second.close()

    third = make_window(model=None)  # closed before: nothing opens
    qtbot.wait(200)
    assert third.projects.folder is None
    third.close()

    # A project removed since is forgotten without a word.
    fourth = make_window(model=None)
    _opened(qtbot, fourth, folder)
    fourth.close()
    folder.rename(tmp_path / "gone.chattts")
    fifth = make_window(model=None)
    qtbot.wait(200)
    assert fifth.projects.folder is None
    assert "book.chattts" not in fifth.messages.notice.text()
