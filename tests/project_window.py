"""For the window tests of the segment editor: a project made from the editor's text through
the real window (New project from text, its folder chosen without a dialog)."""

from pathlib import Path

import pytest

from chattts_studio.gui.common import dialogs

PROJECT_MS = 120_000


def prepare_project(window, folder: Path, monkeypatch: pytest.MonkeyPatch, text: str) -> None:  # type: ignore[no-untyped-def]
    """The text in the editor at the smallest segment size, the project's folder answered."""
    monkeypatch.setattr(dialogs, "new_project_path", lambda *_args: folder)
    window.editor.set_text(text)
    window.controls.segment_slider.setValue(window.controls.segment_slider.minimum())


def make_project(qtbot, window) -> Path:  # type: ignore[no-untyped-def]
    """New project from the text, waited for until its takes are made and it is shown."""
    window.projects.new_from_text()
    qtbot.waitUntil(
        lambda: window.jobs.current is None and window.projects.project is not None,
        timeout=PROJECT_MS,
    )
    return window.projects.folder
