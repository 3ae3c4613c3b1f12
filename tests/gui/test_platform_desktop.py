"""The window's place in each desktop, on simulated platforms: Help > Add to applications menu
only where a freedesktop.org menu exists (Linux, the BSDs), never on Windows or macOS where it
could only decline; and on Windows the process's own AppUserModelID, set before any window
shows, so the taskbar shows ChatTTS Studio's icon and not Python's."""

import ctypes
from types import SimpleNamespace

import pytest

from chattts_studio.core import platforms
from chattts_studio.gui import app
from chattts_studio.gui.window.layout import can_add_to_applications_menu

pytestmark = pytest.mark.window(ready="shown")


@pytest.mark.parametrize("platform", ["win32", "darwin", "linux"])
def test_add_to_applications_menu_only_where_it_works(
    make_window, monkeypatch: pytest.MonkeyPatch, platform: str
) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(platforms, "PLATFORM", platform)
    window = make_window(model=None, wait=False)
    titles = [action.text() for action in window.menuBar().actions()]
    entries = [a for a in window.actions() if "applications menu" in a.text()]
    if platform == "linux":
        assert titles[-1] == "&Help" and len(entries) == 1
        assert window.menu_actions.desktop_entry is entries[0]
    else:  # Help would hold nothing else: no Help menu at all
        assert "&Help" not in titles and entries == []
        assert window.menu_actions.desktop_entry is None
        assert "Re&nder" in titles and "&Project" in titles  # the others are all there
    assert can_add_to_applications_menu("freebsd14") and not can_add_to_applications_menu("cygwin")


class Shell32:
    """Windows' shell32 as ctypes shows it: records the ids it is given; `answer` is the
    HRESULT (0: S_OK), or an exception to raise."""

    def __init__(self, answer: int | Exception = 0) -> None:
        self.answer = answer
        self.ids: list[str] = []

    def SetCurrentProcessExplicitAppUserModelID(self, app_id: str) -> int:
        self.ids.append(app_id)
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer


def test_windows_gets_the_apps_taskbar_identity_before_a_window(
    qapp, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    shell32 = Shell32()
    monkeypatch.setattr(ctypes, "windll", SimpleNamespace(shell32=shell32), raising=False)
    monkeypatch.setattr(platforms, "OS_NAME", "nt")
    app.application()  # what main() and build_window() call before making the window
    assert shell32.ids == ["ChatTTSStudio.ChatTTSStudio"] == [app.APP_USER_MODEL_ID]
    # Refused or failing, it costs nothing: the start goes on.
    monkeypatch.setattr(shell32, "answer", -2147024809)  # E_INVALIDARG
    assert app.set_taskbar_identity() is False
    monkeypatch.setattr(shell32, "answer", OSError("shell32 is not there"))
    assert app.set_taskbar_identity() is False
    monkeypatch.delattr(ctypes, "windll")
    assert app.set_taskbar_identity() is False
    # Elsewhere Windows is not asked.
    monkeypatch.setattr(ctypes, "windll", SimpleNamespace(shell32=shell32), raising=False)
    monkeypatch.setattr(platforms, "OS_NAME", "posix")
    calls = len(shell32.ids)
    app.application()
    assert len(shell32.ids) == calls
