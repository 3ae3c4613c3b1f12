"""The real window, offscreen, on the stand-in engine (window logic: tests/standin_engine.py):
the Models dialog never offers Load for the model already loaded (its button says Loaded,
disabled, with the reason), and the menu bar ends with Help, the Render menu before it."""

from pathlib import Path

import pytest
from conftest import GUI_WAIT_MS

from chattts_studio.core import paths
from chattts_studio.gui.common import dialogs

LOADED_TIP = "This model is loaded already; load another one to switch."

pytestmark = pytest.mark.window(engine="standin")


def loaded_name(window) -> str:  # type: ignore[no-untyped-def]
    return window.model.loaded.info.name if window.model.loaded is not None else ""


def test_the_loaded_model_s_button_says_loaded_and_cannot_load_it_again(
    qtbot, make_window, monkeypatch, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    window = make_window()
    window.model.show_dialog()
    dialog = window.model.dialog
    qtbot.waitUntil(lambda: not dialog.checking, timeout=GUI_WAIT_MS)
    demo = dialog.rows["demo"].action
    assert demo.text() == "Loaded" and not demo.isEnabled()
    assert demo.toolTip() == LOADED_TIP
    assert demo.accessibleName() == "Loaded demo"
    assert not dialog.demo.isEnabled() and dialog.demo.toolTip() == LOADED_TIP
    assert dialog.rows["official"].action.text() == "Download"  # the others: what they need

    # Another model loaded (a folder of one's own): demo's row offers Load again.
    folder = tmp_path / "my-demo"
    folder.symlink_to(paths.models_dir() / "demo", target_is_directory=True)
    monkeypatch.setattr(dialogs, "choose_model_folder", lambda *_args: folder)
    dialog.folder.click()
    qtbot.waitUntil(
        lambda: loaded_name(window) == str(folder) and window.jobs.current is None,
        timeout=GUI_WAIT_MS,
    )
    qtbot.waitUntil(lambda: not dialog.checking, timeout=GUI_WAIT_MS)
    assert demo.text() == "Load" and demo.isEnabled() and demo.toolTip() == ""
    assert dialog.demo.isEnabled() and dialog.demo.toolTip() == ""

    # And loaded from its row, it is the loaded one again.
    demo.click()
    qtbot.waitUntil(
        lambda: loaded_name(window) == "demo" and window.jobs.current is None,
        timeout=GUI_WAIT_MS,
    )
    assert demo.text() == "Loaded" and not demo.isEnabled()


def test_the_menu_bar_ends_with_help_with_render_before_it(qtbot, make_window) -> None:  # type: ignore[no-untyped-def]
    window = make_window(model=None, wait=False)
    titles = [action.text() for action in window.menuBar().actions()]
    assert titles[-1] == "&Help", titles
    assert "Re&nder" in titles and "&Project" in titles
    assert titles.index("Re&nder") < titles.index("&Help")
