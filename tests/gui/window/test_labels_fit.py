"""Every label and button of the real window shows its whole text: at 1280x800 and 1200x760, in
English and Simplified Chinese, light and dark, after a synthesis on the demo weights with the
texts a new user meets at their longest (the model line, a saved file, no sound output).

A text counts as cut off when the width (or, wrapped, the height) its font needs is more than
the widget's room. A label made to elide (MessageLabel) may shorten its text only where the
whole text is its tooltip, and the texts put in here for a new user (the model line, the status
line, the notice, the live figures) may not shorten at all: they fit these screens."""

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import window_maker
from PySide6 import QtGui
from PySide6.QtCore import QRect, Qt
from PySide6.QtGui import QFontMetrics, QTextDocument
from PySide6.QtWidgets import (
    QAbstractButton,
    QApplication,
    QCheckBox,
    QLabel,
    QPushButton,
    QRadioButton,
    QStyle,
    QStyleOptionButton,
    QTabWidget,
    QWidget,
)

from chattts_studio.gui.common.theme import apply_scheme

SIZES = ((1280, 800), (1200, 760))
SCHEMES = (Qt.ColorScheme.Light, Qt.ColorScheme.Dark)
# What a machine without libportaudio2 says (core/audio/player.py), the longest of the notices.
NO_PORTAUDIO = (
    "Audio playback needs the PortAudio library (libportaudio2); the audio can still be saved."
)
MNEMONIC = re.compile(r"&(.)")


def plain(text: str, widget: QLabel | None = None) -> str:
    """The text as drawn: rich text stripped, a mnemonic's '&' removed ('&&' is one '&')."""
    if widget is not None and (
        widget.textFormat() == Qt.TextFormat.RichText
        or (widget.textFormat() == Qt.TextFormat.AutoText and QtGui.Qt.mightBeRichText(text))
    ):
        document = QTextDocument()
        document.setHtml(text)
        return document.toPlainText()
    return MNEMONIC.sub(r"\1", text)


def button_room(button: QAbstractButton) -> int:
    """The width a button has for its text: its contents less the indicator, icon and margins
    its style draws there."""
    style = button.style()
    option = QStyleOptionButton()
    option.initFrom(button)
    if isinstance(button, QCheckBox | QRadioButton):
        element = (
            QStyle.SubElement.SE_CheckBoxContents
            if isinstance(button, QCheckBox)
            else QStyle.SubElement.SE_RadioButtonContents
        )
        # After the indicator and its spacing: what the button's size hint gives its text.
        room = style.subElementRect(element, option, button).width()
    elif isinstance(button, QPushButton):
        button.initStyleOption(option)  # its features (a default button has a wider frame)
        room = style.subElementRect(QStyle.SubElement.SE_PushButtonContents, option, button).width()
        if button.menu() is not None:
            room -= style.pixelMetric(QStyle.PixelMetric.PM_MenuButtonIndicator, option, button)
    else:
        room = button.contentsRect().width() - 6
    if not button.icon().isNull() and button.text():
        room -= button.iconSize().width() + 4
    return room


def _label_problem(label: QLabel, whole_only: bool) -> str | None:
    shown = plain(
        QLabel.text(label), label
    )  # what Qt draws (MessageLabel keeps the whole in text())
    whole = plain(label.text(), label)
    if not shown.strip():
        return None
    margin = label.margin()
    rect = label.contentsRect().adjusted(margin, margin, -margin, -margin)
    if label.indent() > 0:
        rect.setWidth(rect.width() - label.indent())
    metrics = QFontMetrics(label.font())
    if label.wordWrap():
        needed = metrics.boundingRect(
            QRect(0, 0, max(rect.width(), 1), 100_000),
            int(Qt.TextFlag.TextWordWrap) | int(label.alignment()),
            shown,
        )
        if needed.width() > rect.width() or needed.height() > rect.height():
            return (
                f"needs {needed.width():.0f}x{needed.height():.0f} px, "
                f"has {rect.width()}x{rect.height()}"
            )
    else:
        lines = shown.split("\n")
        widest = max(metrics.horizontalAdvance(line) for line in lines)
        tall = len(lines) * metrics.lineSpacing() - metrics.leading()
        if widest > rect.width() or tall > rect.height():
            return f"needs {widest:.0f}x{tall:.0f} px, has {rect.width()}x{rect.height()}"
    if "".join(shown.split()) != "".join(whole.split()):  # wrapped lines are not elided
        if whole_only:
            return f"elided to {shown!r} in {rect.width()} px"
        if label.toolTip() != label.text():
            return f"elided to {shown!r} with no tooltip of the whole text"
    return None


def _button_problem(button: QAbstractButton) -> str | None:
    text = plain(button.text())
    if not text.strip():
        return None
    metrics = QFontMetrics(button.font())
    widest = max(metrics.horizontalAdvance(line) for line in text.split("\n"))
    room = button_room(button)
    if widest > room:
        return f"needs {widest:.0f} px, has {room}"
    return None


def cut_off(window: QWidget, whole: dict[QWidget, str]) -> dict[str, str]:
    """'class: text' -> why, for each visible label or button of `window` whose text does not
    fit; the labels of `whole` (label -> what it is) may not even elide."""
    found = {}
    for widget in window.findChildren(QWidget):
        if not widget.isVisible() or widget.window() is not window:
            continue
        if isinstance(widget, QLabel):
            problem = _label_problem(widget, widget in whole)
        elif isinstance(widget, QAbstractButton):
            problem = _button_problem(widget)
        else:
            continue
        if problem is not None:
            name = whole.get(widget) or widget.objectName() or widget.accessibleName()
            what = f"{type(widget).__name__}{f' {name}' if name else ''}: {widget.text()!r}"
            found[what] = problem
    return found


def every_page(window: QWidget) -> Iterator[str]:
    """Each page of each tab widget brought to the front in turn (a hidden page's widgets are
    not visible); the pages shown before come back at the end."""
    tabs = [t for t in window.findChildren(QTabWidget) if t.isVisible()]
    before = [t.currentIndex() for t in tabs]
    yield "as it is"
    try:
        for tab in tabs:
            for index in range(tab.count()):
                tab.setCurrentIndex(index)
                settle()
                yield tab.tabText(index)
    finally:
        for tab, index in zip(tabs, before, strict=True):
            tab.setCurrentIndex(index)


def settle() -> None:
    for _ in range(3):
        QApplication.processEvents()


@pytest.fixture(params=["en", "zh_CN"])
def language(request: pytest.FixtureRequest, private_home: Path) -> Iterator[str]:
    """The interface language, saved as Settings > Language would; English again after."""
    from chattts_studio.gui import i18n
    from chattts_studio.gui.settings import Key, Settings

    settings = Settings()
    settings.set(Key.LANGUAGE, request.param)
    settings.sync()
    yield request.param
    i18n.install("en")


def _met_by_a_new_user(window, qtbot, folder: Path) -> None:  # type: ignore[no-untyped-def]
    """A synthesis on the demo weights (the model line with its noise label, the live panel's
    figures, a history entry), then the result saved."""
    window.editor.set_text("你好，世界。Hello there. 今天天气很好。" * 3)
    window.controls.segment_slider.setValue(10)
    window.controls.batch_box.setValue(1)
    window.controls.refine_box.setChecked(False)
    window.menu_actions.synth.trigger()
    assert window.jobs.current is not None, window.messages.notice.text()
    qtbot.waitUntil(lambda: window.jobs.current is None, timeout=120_000)
    assert window.result.length and window.result.history_list.count() == 1
    assert window.result.save_to(folder / "out_gui.wav")


def _new_user_texts(window) -> dict[QWidget, str]:  # type: ignore[no-untyped-def]
    """The labels holding the texts a new user meets: they show whole, never elided."""
    return {
        window.model.label: "model line",
        window.messages.notice: "status line",
        window.result.output_note: "no-output notice",
        window.result.save_note: "note beside Save",
        window.live.progress: "live Progress value",
        window.live.memory: "live Memory value",
        window.live.note: "live job note",
    }


def test_every_label_and_button_shows_its_whole_text(
    qtbot, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, language: str
) -> None:  # type: ignore[no-untyped-def]
    import chattts_studio.gui.result.panel
    from chattts_studio.gui import i18n

    # No sound output, as on a machine without PortAudio (the virtual device is not asked).
    monkeypatch.setattr(chattts_studio.gui.result.panel, "output_available", lambda: NO_PORTAUDIO)
    maker = window_maker(
        qtbot, lambda w: w.model.loaded is not None and w.jobs.current is None and w.controls.ready
    )
    make = next(maker)
    try:
        window = make("demo")
        assert i18n.active() == language
        _met_by_a_new_user(window, qtbot, tmp_path)
        assert window.result.output_note.text()  # the no-output notice is on screen
        assert "noise" in window.model.label.text() or "噪声" in window.model.label.text()
        whole = _new_user_texts(window)
        app = QApplication.instance()
        assert isinstance(app, QApplication)
        found: dict[str, str] = {}
        seen = 0
        try:
            for scheme in SCHEMES:
                apply_scheme(app, scheme)
                for width, height in SIZES:
                    window.resize(width, height)
                    settle()
                    assert (window.width(), window.height()) == (width, height)
                    for page in every_page(window):
                        seen += 1
                        for what, why in cut_off(window, whole).items():
                            where = f"{width}x{height} {scheme.name.lower()}, {page}"
                            found.setdefault(what, f"{why} ({where})")
        finally:
            apply_scheme(app, Qt.ColorScheme.Light)
        assert seen >= 2 * 2 * 8  # every page of both tab widgets, in each scheme and size
        assert not found, f"cut off in {language}:\n" + "\n".join(
            f"  {what}: {why}" for what, why in sorted(found.items())
        )
        # The saved file is said on the window's status line, not squeezed in beside Save.
        assert "out_gui.wav" in window.messages.notice.text()
        assert not window.result.save_note.isVisible(), window.result.save_note.text()
    finally:
        next(maker, None)


def test_the_measure_finds_what_is_cut_and_passes_what_fits(qtbot) -> None:  # type: ignore[no-untyped-def]
    """The rule itself, on widgets sized by hand: each kind exactly as wide as its size hint
    fits; a few pixels less is cut off; an elided MessageLabel passes only with its tooltip and
    never where the whole text must show."""
    from chattts_studio.gui.common.notices import MessageLabel

    host = QWidget()
    qtbot.addWidget(host)
    text = "Play segments as soon as they are ready"
    widgets = [
        QLabel(text, host),
        QCheckBox(text, host),
        QRadioButton(text, host),
        QPushButton("&Save the audio of every segment…", host),
    ]
    wrapped = QLabel(text + " " + text, host)
    wrapped.setWordWrap(True)
    host.show()
    for widget in widgets:
        widget.resize(widget.sizeHint())
    wrapped.resize(wrapped.sizeHint())
    settle()
    assert cut_off(host, {}) == {}
    for widget in widgets:
        widget.resize(widget.width() // 2, widget.height())
    wrapped.resize(wrapped.width(), wrapped.height() - wrapped.fontMetrics().lineSpacing())
    settle()
    found = cut_off(host, {})
    assert len(found) == len(widgets) + 1, found
    for widget in [*widgets, wrapped]:
        widget.hide()
    note = MessageLabel(text, 1, host)
    note.resize(note.fontMetrics().horizontalAdvance(text) // 2, note.height())
    note.show()
    settle()
    assert QLabel.text(note).endswith("…") and note.toolTip() == text
    assert cut_off(host, {}) == {}  # elided, the whole text in its tooltip
    assert next(iter(cut_off(host, {note: "a note"}).values())).startswith("elided")
    note.setToolTip("")
    assert cut_off(host, {}) != {}
