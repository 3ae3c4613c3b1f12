"""How the main window is put together: its panels, the banner and alert strips, the run row
and the menus. A part of MainWindow kept in its own module."""

from PySide6.QtCore import QT_TRANSLATE_NOOP, Qt
from PySide6.QtGui import QAction, QActionGroup, QKeySequence
from PySide6.QtWidgets import (
    QFrame,
    QGridLayout,
    QMenu,
    QProgressBar,
    QPushButton,
    QScrollArea,
    QSplitter,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from chattts_studio.gui import desktop_entry, i18n
from chattts_studio.gui.common.notices import MessageLabel, Notice
from chattts_studio.gui.i18n import translate
from chattts_studio.gui.panels.blend import BlendDialog
from chattts_studio.gui.panels.controls import ControlsPanel
from chattts_studio.gui.panels.editor import EditorPanel
from chattts_studio.gui.panels.live import LivePanel
from chattts_studio.gui.panels.speakers import SpeakerPanel
from chattts_studio.gui.resources import app_icon, sample_text
from chattts_studio.gui.result.panel import ResultPanel
from chattts_studio.gui.settings import Key
from chattts_studio.gui.voices.audition_dialog import AuditionDialog
from chattts_studio.gui.window.base import Slot, WindowBase
from chattts_studio.gui.window.model_dialog import ModelDialog

SYSTEM_LANGUAGE: str = QT_TRANSLATE_NOOP("Window", "System language ({language})")  # type: ignore[assignment]  # stub says object; it returns the text


def scrolling(page: QWidget) -> QScrollArea:
    area = QScrollArea()
    area.setWidget(page)
    area.setWidgetResizable(True)
    area.setFrameShape(QFrame.Shape.NoFrame)
    area.setFocusPolicy(Qt.FocusPolicy.NoFocus)  # Tab goes to the page's controls
    area.setMinimumHeight(90)
    return area


class WindowLayout(WindowBase):
    """Mixed into MainWindow: builds its widgets and menus (connections are MainWindow's)."""

    def _build(self) -> None:
        self.setWindowTitle("ChatTTS Studio")
        self.setWindowIcon(app_icon())
        self.editor = EditorPanel()
        self.controls = ControlsPanel()
        self.live = LivePanel(self.host.live)
        self.speakers = SpeakerPanel()
        self.result = ResultPanel()
        self.model_dialog = ModelDialog(self)
        self.audition_dialog = AuditionDialog(self.result.player, self)
        self.blend_dialog = BlendDialog(self.speakers, self.result.player, self)
        self._build_voices()

        self.banner = Notice("banner", 2)
        self.banner_text = self.banner.text
        self.banner_text.setText(
            translate(
                "Window",
                "The official ChatTTS weights are not downloaded yet. Download them (about "
                "1 GB), or try the demo weights: random weights that produce noise, not speech.",
            )
        )
        self.banner_download = QPushButton(translate("Window", "Download official weights…"))
        self.banner_demo = QPushButton(translate("Window", "Use demo weights"))
        self.banner.add_button(self.banner_download)
        self.banner.add_button(self.banner_demo)
        self.banner_close = self.banner.close_button
        # Problems found at start (damaged settings, a newer speaker library, a draft that
        # could not be read) stay in view until dismissed; the notice line changes too often.
        self.alert = Notice("alert", 2)
        self.alert_text = self.alert.text
        self.alert_close = self.alert.close_button
        self.alert.setVisible(False)

        # The run row: what is loaded, the load's progress, and every outcome the user must
        # see, beside the Synthesize button (the status bar may be below the screen's edge).
        # Fixed heights and elided text: a model name or a message never moves the splitter.
        self.model_label = MessageLabel(translate("Window", "No model loaded"))
        self.model_label.setObjectName("modelLabel")
        self.notice = MessageLabel(lines=2)
        self.notice.setObjectName("notice")
        self.load_progress = QProgressBar()
        self.load_progress.setRange(0, 100)
        self.load_progress.setMaximumWidth(160)
        self.load_progress.setVisible(False)
        self.synth_button = QPushButton(translate("Window", "Synthesize  (Ctrl+Enter)"))
        self.synth_button.setMinimumHeight(34)
        run_row = QGridLayout()
        run_row.setVerticalSpacing(0)
        run_row.addWidget(self.model_label, 0, 0)
        run_row.addWidget(self.load_progress, 0, 1)
        run_row.addWidget(self.notice, 1, 0, 1, 2)
        run_row.addWidget(self.synth_button, 0, 2, 2, 1)
        run_row.setColumnStretch(0, 1)

        self.settings_tabs = settings_tabs = QTabWidget()
        # Each page scrolls when the window is short (a 1280x800 screen), instead of setting
        # the window's minimum height; at the default size the pages show whole.
        for page, title in (
            (self.controls, translate("Window", "Engine")),
            (self.speakers, translate("Window", "Speaker")),
            (self.controls.advanced, translate("Window", "Advanced")),
            (self.lexicon, translate("Window", "Dictionary")),
        ):
            settings_tabs.addTab(scrolling(page), title)
        settings_tabs.tabBar().setAccessibleName(translate("Window", "Settings pages"))
        left = QWidget()
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(0, 0, 0, 0)
        left_layout.addWidget(self.editor, 1)
        # Script mode: the pause between speakers' turns (hidden outside script mode), and why
        # the script cannot be spoken (a line's unknown speaker), in view.
        left_layout.addWidget(self.turn_pause)  # made by gui/voices/jobs.py
        self.script_label = MessageLabel(lines=1)
        self.script_label.setObjectName("scriptProblem")
        self.script_label.setAccessibleName(translate("Window", "Script problem"))
        self.script_label.setVisible(False)
        left_layout.addWidget(self.script_label)
        left_layout.addLayout(run_row)
        left_layout.addWidget(self._build_serving())
        left_layout.addWidget(settings_tabs)
        self.top_splitter = QSplitter(Qt.Orientation.Horizontal)
        self.top_splitter.addWidget(left)
        self.top_splitter.addWidget(self.live)
        self.top_splitter.setStretchFactor(0, 3)
        self.top_splitter.setStretchFactor(1, 2)
        # A vertical splitter lets a small screen trade waveform height for the live panel.
        body = QSplitter(Qt.Orientation.Vertical)
        body.addWidget(self.top_splitter)
        body.addWidget(self.result)
        body.setStretchFactor(0, 3)
        body.setStretchFactor(1, 1)

        central = QWidget()
        layout = QVBoxLayout(central)
        layout.addWidget(self.banner)
        layout.addWidget(self.alert)
        layout.addWidget(body, 1)
        self.setCentralWidget(central)

    def _menus(self) -> None:
        file_menu = self.menuBar().addMenu(translate("Window", "&File"))
        self.open_action = self._action(
            file_menu,
            translate("Window", "&Open text…"),
            QKeySequence.StandardKey.Open,
            self.open_text,
        )
        self.save_action = self._action(
            file_menu,
            translate("Window", "&Save audio…"),
            QKeySequence.StandardKey.Save,
            self.result.save_dialog,
        )
        file_menu.addSeparator()
        self._action(
            file_menu, translate("Window", "&Quit"), QKeySequence.StandardKey.Quit, self.close
        )
        edit_menu = self.menuBar().addMenu(translate("Window", "&Edit"))
        edit_menu.addMenu(self.editor.token_menu())
        edit_menu.addAction(self.script_action)
        self._action(
            edit_menu,
            translate("Window", "Insert &sample text"),
            None,
            lambda: self.editor.set_text(sample_text()),
        )
        run_menu = self.menuBar().addMenu(translate("Window", "&Run"))
        self.synth_action = self._action(
            run_menu,
            translate("Window", "&Synthesize"),
            QKeySequence("Ctrl+Return"),
            self.synthesize_or_cancel,
        )
        self.synth_action.setShortcuts([QKeySequence("Ctrl+Return"), QKeySequence("Ctrl+Enter")])
        self.cancel_action = self._action(
            run_menu, translate("Window", "&Cancel"), QKeySequence("Esc"), self.cancel
        )
        self._action(
            run_menu, translate("Window", "&Play result"), QKeySequence("Ctrl+P"), self.result.play
        )
        self._action(
            run_menu,
            translate("Window", "S&top playback"),
            QKeySequence("Ctrl+."),
            self.result.user_stop,
        )
        self._serve_menu(run_menu)
        model_menu = self.menuBar().addMenu(translate("Window", "&Models"))
        self._action(
            model_menu, translate("Window", "&Models…"), QKeySequence("Ctrl+M"), self.show_models
        )
        speaker_menu = self.menuBar().addMenu(translate("Window", "&Speakers"))
        self._action(
            speaker_menu,
            translate("Window", "&Audition…"),
            QKeySequence("Ctrl+U"),
            self.show_audition,
        )
        self._action(
            speaker_menu,
            translate("Window", "&Random speaker"),
            QKeySequence("Ctrl+R"),
            self.speakers.roll,
        )
        self._action(
            speaker_menu,
            translate("Window", "&New voice from a recording…"),
            None,
            self.show_voice_dialog,
        )
        self._language_menu(self.menuBar().addMenu(translate("Window", "Se&ttings")))
        help_menu = self.menuBar().addMenu(translate("Window", "&Help"))
        self.desktop_entry_action = self._action(
            help_menu,
            translate("Window", "Add to &applications menu"),
            None,
            lambda: self.show_message(desktop_entry.install_sentence()),
        )

    def _language_menu(self, settings_menu: QMenu) -> None:
        """Settings > Language: the system's, or one chosen; it applies at the next start
        (every widget takes its texts when it is made), and the menu and the message say so."""
        menu = settings_menu.addMenu(translate("Window", "&Language (applies at next start)"))
        self.language_menu = menu
        self.language_actions: dict[str, QAction] = {}
        group = QActionGroup(self)
        saved = self.settings.text(Key.LANGUAGE)
        system_name = i18n.LANGUAGES[i18n.system_language()]
        choices = {i18n.SYSTEM: translate("Window", SYSTEM_LANGUAGE).format(language=system_name)}
        choices.update(i18n.LANGUAGES)  # each language in its own words
        for code, label in choices.items():
            action = QAction(label, self, checkable=True)
            action.setChecked(code == (saved if saved in choices else i18n.SYSTEM))
            action.triggered.connect(lambda _=False, c=code: self.choose_language(c))
            group.addAction(action)
            menu.addAction(action)
            self.language_actions[code] = action

    def choose_language(self, code: str) -> None:
        self.settings.set(Key.LANGUAGE, code)
        self.settings.sync()
        wanted = i18n.resolve(code)
        if wanted == i18n.active():
            said = translate("Window", "The interface already speaks {language}.")
        else:
            said = translate(
                "Window", "The interface will speak {language} when ChatTTS Studio starts again."
            )
        self.show_message(said.format(language=i18n.LANGUAGES[wanted]))

    def _action(
        self,
        menu: QMenu,
        text: str,
        shortcut: QKeySequence | QKeySequence.StandardKey | None,
        slot: Slot,
    ) -> QAction:
        action = QAction(text, self)
        if shortcut is not None:
            action.setShortcut(shortcut)
        action.triggered.connect(lambda _=False: slot())
        menu.addAction(action)
        self.addAction(action)  # shortcuts work wherever the focus is
        return action
