"""The README's steps done in the real window as written: every control it names in bold is
in the window under that name, and its "first sound" clicks (Use demo weights, type,
Synthesize) load the demo weights with the warning it quotes and make audio. The real window,
offscreen, with the tiny demo weights in a data folder of its own."""

import re
from pathlib import Path

import pytest
from PySide6.QtWidgets import QAbstractButton, QGroupBox, QLabel, QMenu, QTabWidget

README = Path(__file__).resolve().parents[3] / "README.md"
RUN_MS = 120_000
FIRST_SOUND = "## A first sound, with no GPU and no weights"
# Bold in the README that is emphasis, not the name of a control.
NOT_CONTROLS = {
    "Demo weights make noise, not speech.",
    "random weights",
    "noise, not speech",
    "Where data lives",
    "A voice from a recording",
    "Dialogue scripts",
    "Pronunciation dictionary",
}


pytestmark = pytest.mark.window(home="own_home")


def section(title: str) -> str:
    text = README.read_text(encoding="utf-8")
    start = text.index(title + "\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end > 0 else None]


def bold(text: str) -> list[str]:
    """The README's bold phrases, a phrase wrapped over two lines read as one."""
    return [" ".join(found.split()) for found in re.findall(r"\*\*([^*]+)\*\*", text)]


def clean(text: str) -> str:
    """A control's text as a person reads it: no mnemonic '&', no shortcut after a tab."""
    return text.split("\t")[0].replace("&&", "\0").replace("&", "").replace("\0", "&").strip()


def names_in(window) -> set[str]:  # type: ignore[no-untyped-def]
    """Every name the window shows: buttons, labels, group boxes, tabs, and menus as
    'Menu > Item' paths (dialogs the window owns included)."""
    names = {clean(b.text()) for b in window.findChildren(QAbstractButton)}
    names |= {clean(label.text()) for label in window.findChildren(QLabel)}
    names |= {clean(box.title()) for box in window.findChildren(QGroupBox)}
    for tabs in window.findChildren(QTabWidget):
        names |= {clean(tabs.tabText(i)) for i in range(tabs.count())}

    def walk(actions, path: str) -> None:  # type: ignore[no-untyped-def]
        for action in actions:
            text = clean(action.text())
            full = f"{path} > {text}" if path else text
            names.update((text, full))
            if isinstance(action.menu(), QMenu):
                walk(action.menu().actions(), full)

    walk(window.menuBar().actions(), "")
    return names


def named(label: str, names: set[str]) -> bool:
    """The README's label is the control's text, or its start before a note in brackets
    ('Synthesize  (Ctrl+Enter)', 'Script mode (Name: text lines)')."""
    return any(n == label or re.match(re.escape(label) + r"\s+\(", n) for n in names)


def visible_button(window, label: str) -> QAbstractButton:  # type: ignore[no-untyped-def]
    found = [
        b
        for b in window.findChildren(QAbstractButton)
        if b.isVisible() and named(label, {clean(b.text())})
    ]
    assert len(found) == 1, (label, [b.text() for b in found])
    return found[0]


def test_every_control_the_readme_names_is_in_the_window(make_window) -> None:  # type: ignore[no-untyped-def]
    window = make_window(model=None, wait=False)
    names = names_in(window)
    labels = set(bold(README.read_text(encoding="utf-8"))) - NOT_CONTROLS
    assert {"Use demo weights", "Synthesize", "Random", "Save…"} <= labels
    missing = sorted(label for label in labels if not named(label, names))
    assert not missing, missing


def test_the_readme_first_sound_steps_make_audio(qtbot, make_window) -> None:  # type: ignore[no-untyped-def]
    steps = section(FIRST_SOUND)
    listed = steps[steps.index("\n1. ") : steps.index("\n\n", steps.index("\n1. "))]
    window = make_window(model=None, wait=False)  # step 1: `make run` on a new data folder
    assert window.model.banner.isVisible()

    # Step 2: the banner's button, under the README's name; the red line it quotes.
    visible_button(window, bold(listed)[0]).click()
    qtbot.waitUntil(
        lambda: window.model.loaded is not None and window.jobs.current is None, timeout=RUN_MS
    )
    quoted = re.search(r'"([^"]+)"', listed).group(1)  # type: ignore[union-attr]
    assert quoted in window.model.label.text()
    assert "color" in window.model.label.styleSheet()

    # Step 3: the example text; step 4: Synthesize, then the audio and Save… are there.
    example = re.search(r"for example `([^`]+)`", listed).group(1)  # type: ignore[union-attr]
    window.editor.set_text(example)
    window.result.stream_box.setChecked(False)  # not listened to here: the audio is checked
    visible_button(window, "Synthesize").click()
    assert window.jobs.current is not None, window.messages.notice.text()
    qtbot.waitUntil(lambda: window.jobs.current is None, timeout=RUN_MS)
    assert window.messages.notice.text().startswith("Done"), window.messages.notice.text()
    assert len(window.result.audio) > 0
    assert visible_button(window, "Save…").isEnabled()
