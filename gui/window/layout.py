"""How the main window is put together: where its panels and the parts' widgets go, and its menus.
MainWindow makes the panels and parts; this only places them.
"""

from dataclasses import dataclass

from PySide6.QtCore import QT_TRANSLATE_NOOP, Qt
from PySide6.QtGui import QAction, QActionGroup, QKeySequence
from PySide6.QtWidgets import (
    QFrame,
    QGridLayout,
    QMainWindow,
    QMenu,
    QScrollArea,
    QSplitter,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from chattts_studio.core import platforms
from chattts_studio.gui import desktop_entry, i18n
from chattts_studio.gui.common.actions import Slot, add_action
from chattts_studio.gui.control.context import Panels
from chattts_studio.gui.control.messages import Messages
from chattts_studio.gui.control.model_control import ModelControl
from chattts_studio.gui.i18n import translate
from chattts_studio.gui.resources import sample_text
from chattts_studio.gui.serve.serve_control import ServeControl
from chattts_studio.gui.settings import Key, Settings
from chattts_studio.gui.voices.voice_control import VoiceControl
from chattts_studio.gui.window.audition_control import AuditionControl
from chattts_studio.gui.window.synthesis_control import SynthesisControl

SYSTEM_LANGUAGE: str = QT_TRANSLATE_NOOP("Window", "System language ({language})")  # type: ignore[assignment]  # stub says object; it returns the text


def scrolling(page: QWidget) -> QScrollArea:
    area = QScrollArea()
    area.setWidget(page)
    area.setWidgetResizable(True)
    area.setFrameShape(QFrame.Shape.NoFrame)
    area.setFocusPolicy(Qt.FocusPolicy.NoFocus)  # Tab goes to the page's controls
    area.setMinimumHeight(90)
    return area


@dataclass
class Body:
    """The central widget and the containers tests and the settings reach."""

    widget: QWidget
    settings_tabs: QTabWidget
    top_splitter: QSplitter
    editor_tabs: QTabWidget


def central(
    panels: Panels,
    messages: Messages,
    model: ModelControl,
    synthesis: SynthesisControl,
    voices: VoiceControl,
    serve: ServeControl,
    segments: QWidget,
) -> Body:
    editor, controls, speakers = panels.editor, panels.controls, panels.speakers
    result, live = panels.result, panels.live
    # The run row: what is loaded, the load's progress, and every outcome the user must see,
    # beside the Synthesize button (the status bar may be below the screen's edge). Fixed
    # heights and elided text: a model name or a message never moves the splitter.
    run_row = QGridLayout()
    run_row.setVerticalSpacing(0)
    run_row.addWidget(model.label, 0, 0)
    run_row.addWidget(model.progress, 0, 1)
    run_row.addWidget(messages.notice, 1, 0, 1, 2)
    run_row.addWidget(synthesis.button, 0, 2, 2, 1)
    run_row.setColumnStretch(0, 1)

    # The right column: the live panel and the settings pages as tabs, so each gets the
    # column's whole height (the window shows Live while a job runs: main_window.py).
    settings_tabs = QTabWidget()
    settings_tabs.addTab(live, translate("Window", "Live"))
    # Each settings page scrolls when the window is short (a 1280x800 screen), instead of
    # setting the window's minimum height; at the default size the pages show whole.
    for page, title in (
        (controls, translate("Window", "Engine")),
        (speakers, translate("Window", "Speaker")),
        (controls.advanced, translate("Window", "Advanced")),
        (voices.lexicon, translate("Window", "Dictionary")),
    ):
        settings_tabs.addTab(scrolling(page), title)
    settings_tabs.setCurrentIndex(1)  # the engine's page until a job starts
    settings_tabs.tabBar().setAccessibleName(translate("Window", "Settings pages"))
    # The left column: the text (or the segments) with the room a writing app gives it, the
    # run row under it.
    left = QWidget()
    left_layout = QVBoxLayout(left)
    left_layout.setContentsMargins(0, 0, 0, 0)
    editor_tabs = QTabWidget()
    editor_tabs.setDocumentMode(True)
    editor_tabs.addTab(editor, translate("Window", "Text"))
    editor_tabs.addTab(segments, translate("Window", "Segments"))
    editor_tabs.tabBar().setAccessibleName(translate("Window", "Text or segments"))
    left_layout.addWidget(editor_tabs, 1)
    left_layout.addWidget(voices.turn_pause)  # shown in script mode only
    left_layout.addWidget(voices.script_label)
    left_layout.addLayout(run_row)
    left_layout.addWidget(serve.panel)
    top_splitter = QSplitter(Qt.Orientation.Horizontal)
    top_splitter.addWidget(left)
    top_splitter.addWidget(settings_tabs)
    top_splitter.setStretchFactor(0, 3)
    top_splitter.setStretchFactor(1, 2)
    # A vertical splitter lets a small screen trade waveform height for the text.
    body = QSplitter(Qt.Orientation.Vertical)
    body.addWidget(top_splitter)
    body.addWidget(result)
    body.setStretchFactor(0, 3)
    body.setStretchFactor(1, 1)

    widget = QWidget()
    layout = QVBoxLayout(widget)
    layout.addWidget(model.banner)
    layout.addWidget(messages.alert)
    layout.addWidget(body, 1)
    return Body(widget, settings_tabs, top_splitter, editor_tabs)


@dataclass
class Actions:
    """The menu items other code triggers or checks (shortcuts included)."""

    open: QAction
    save: QAction
    synth: QAction
    cancel: QAction
    desktop_entry: QAction | None  # None where there is no freedesktop.org menu
    language_menu: QMenu
    languages: dict[str, QAction]


# The systems whose applications menu lists freedesktop.org desktop entries.
FREEDESKTOP_PLATFORMS = ("linux", "freebsd", "openbsd", "netbsd")


def can_add_to_applications_menu(platform: str | None = None) -> bool:
    """Whether Help > Add to applications menu can work here: where the menu is made from
    freedesktop.org desktop entries (Linux and the BSDs, what desktop_entry.install writes).
    Windows' Start menu and macOS's Applications folder are not, so it is not offered there."""
    platform = platforms.PLATFORM if platform is None else platform
    return platform.startswith(FREEDESKTOP_PLATFORMS)


def add_menus(
    window: QMainWindow,
    settings: Settings,
    messages: Messages,
    parts: tuple[ModelControl, SynthesisControl, AuditionControl, VoiceControl, ServeControl],
    panels: Panels,
    open_text: Slot,
) -> Actions:
    model, synthesis, auditions, voices, serve = parts
    editor, speakers, result = panels.editor, panels.speakers, panels.result
    bar = window.menuBar()

    def item(
        menu: QMenu,
        text: str,
        shortcut: QKeySequence | QKeySequence.StandardKey | None,
        slot: Slot,
    ) -> QAction:
        return add_action(window, menu, text, shortcut, slot)

    file_menu = bar.addMenu(translate("Window", "&File"))
    open_action = item(
        file_menu, translate("Window", "&Open text…"), QKeySequence.StandardKey.Open, open_text
    )
    save_action = item(
        file_menu,
        translate("Window", "&Save audio…"),
        QKeySequence.StandardKey.Save,
        result.save_dialog,
    )
    file_menu.addSeparator()
    item(file_menu, translate("Window", "&Quit"), QKeySequence.StandardKey.Quit, window.close)
    edit_menu = bar.addMenu(translate("Window", "&Edit"))
    edit_menu.addMenu(editor.token_menu())
    edit_menu.addAction(voices.script_action)
    item(
        edit_menu,
        translate("Window", "Insert &sample text"),
        None,
        lambda: editor.set_text(sample_text()),
    )
    run_menu = bar.addMenu(translate("Window", "&Run"))
    synth_action = item(
        run_menu,
        translate("Window", "&Synthesize"),
        QKeySequence("Ctrl+Return"),
        synthesis.synthesize_or_cancel,
    )
    synth_action.setShortcuts([QKeySequence("Ctrl+Return"), QKeySequence("Ctrl+Enter")])
    cancel_action = item(
        run_menu, translate("Window", "&Cancel"), QKeySequence("Esc"), synthesis.jobs.cancel
    )
    item(run_menu, translate("Window", "&Play result"), QKeySequence("Ctrl+P"), result.play)
    item(run_menu, translate("Window", "S&top playback"), QKeySequence("Ctrl+."), result.user_stop)
    serve.add_menu(run_menu)
    model_menu = bar.addMenu(translate("Window", "&Models"))
    item(model_menu, translate("Window", "&Models…"), QKeySequence("Ctrl+M"), model.show_dialog)
    speaker_menu = bar.addMenu(translate("Window", "&Speakers"))
    item(
        speaker_menu,
        translate("Window", "&Audition…"),
        QKeySequence("Ctrl+U"),
        auditions.show_audition,
    )
    item(
        speaker_menu, translate("Window", "&Random speaker"), QKeySequence("Ctrl+R"), speakers.roll
    )
    item(
        speaker_menu,
        translate("Window", "&New voice from a recording…"),
        None,
        voices.show_voice_dialog,
    )
    language_menu, languages = _language_menu(
        window, bar.addMenu(translate("Window", "Se&ttings")), settings, messages
    )
    entry_action = None
    if can_add_to_applications_menu():  # Help holds only this item: no Help menu without it
        help_menu = bar.addMenu(translate("Window", "&Help"))
        entry_action = item(
            help_menu,
            translate("Window", "Add to &applications menu"),
            None,
            lambda: messages.show(desktop_entry.install_sentence()),
        )
    return Actions(
        open_action,
        save_action,
        synth_action,
        cancel_action,
        entry_action,
        language_menu,
        languages,
    )


def _language_menu(
    window: QWidget, settings_menu: QMenu, settings: Settings, messages: Messages
) -> tuple[QMenu, dict[str, QAction]]:
    """Settings > Language: the system's, or one chosen; it applies at the next start (every
    widget takes its texts when it is made), and the menu and the message say so."""
    menu = settings_menu.addMenu(translate("Window", "&Language (applies at next start)"))
    actions: dict[str, QAction] = {}
    group = QActionGroup(window)
    saved = settings.text(Key.LANGUAGE)
    system_name = i18n.LANGUAGES[i18n.system_language()]
    choices = {i18n.SYSTEM: translate("Window", SYSTEM_LANGUAGE).format(language=system_name)}
    choices.update(i18n.LANGUAGES)  # each language in its own words
    for code, label in choices.items():
        action = QAction(label, window, checkable=True)
        action.setChecked(code == (saved if saved in choices else i18n.SYSTEM))
        action.triggered.connect(lambda _=False, c=code: choose_language(c, settings, messages))
        group.addAction(action)
        menu.addAction(action)
        actions[code] = action
    return menu, actions


def choose_language(code: str, settings: Settings, messages: Messages) -> None:
    settings.set(Key.LANGUAGE, code)
    settings.sync()
    wanted = i18n.resolve(code)
    if wanted == i18n.active():
        said = translate("Window", "The interface already speaks {language}.")
    else:
        said = translate(
            "Window", "The interface will speak {language} when ChatTTS Studio starts again."
        )
    messages.show(said.format(language=i18n.LANGUAGES[wanted]))
