"""How the main window is put together: its panels, the banner and alert strips, the run row
and the menus. A part of MainWindow kept in its own module."""

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QGridLayout,
    QProgressBar,
    QPushButton,
    QSplitter,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from . import desktop_entry
from .audition_dialog import AuditionDialog
from .controls_panel import ControlsPanel
from .editor_panel import EditorPanel
from .live_panel import LivePanel
from .model_dialog import ModelDialog
from .notices import MessageLabel, Notice
from .resources import app_icon, sample_text
from .result_panel import ResultPanel
from .speaker_panel import SpeakerPanel


class WindowLayout:
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

        self.banner = Notice("banner", "background: #fdebd0; border: 1px solid #e59866;", 2)
        self.banner_text = self.banner.text
        self.banner_text.setText(
            "The official ChatTTS weights are not downloaded yet. Download "
            "them (about 1 GB), or try the demo weights: random weights "
            "that produce noise, not speech."
        )
        self.banner_download = QPushButton("Download official weights…")
        self.banner_demo = QPushButton("Use demo weights")
        self.banner.add_button(self.banner_download)
        self.banner.add_button(self.banner_demo)
        self.banner_close = self.banner.close_button
        # Problems found at start (damaged settings, a newer speaker library, a draft that
        # could not be read) stay in view until dismissed; the notice line changes too often.
        self.alert = Notice("alert", "background: #fadbd8; border: 1px solid #c0392b;", 2)
        self.alert_text = self.alert.text
        self.alert_close = self.alert.close_button
        self.alert.setVisible(False)

        # The run row: what is loaded, the load's progress, and every outcome the user must
        # see, beside the Synthesize button (the status bar may be below the screen's edge).
        # Fixed heights and elided text: a model name or a message never moves the splitter.
        self.model_label = MessageLabel("No model loaded")
        self.model_label.setObjectName("modelLabel")
        self.notice = MessageLabel(lines=2)
        self.notice.setObjectName("notice")
        self.load_progress = QProgressBar()
        self.load_progress.setRange(0, 100)
        self.load_progress.setMaximumWidth(160)
        self.load_progress.setVisible(False)
        self.synth_button = QPushButton("Synthesize  (Ctrl+Enter)")
        self.synth_button.setMinimumHeight(34)
        run_row = QGridLayout()
        run_row.setVerticalSpacing(0)
        run_row.addWidget(self.model_label, 0, 0)
        run_row.addWidget(self.load_progress, 0, 1)
        run_row.addWidget(self.notice, 1, 0, 1, 2)
        run_row.addWidget(self.synth_button, 0, 2, 2, 1)
        run_row.setColumnStretch(0, 1)

        settings_tabs = QTabWidget()
        settings_tabs.addTab(self.controls, "Engine")
        settings_tabs.addTab(self.speakers, "Speaker")
        settings_tabs.addTab(self.controls.advanced, "Advanced")
        left = QWidget()
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(0, 0, 0, 0)
        left_layout.addWidget(self.editor, 1)
        left_layout.addLayout(run_row)
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
        file_menu = self.menuBar().addMenu("&File")
        self.open_action = self._action(
            file_menu, "&Open text…", QKeySequence.StandardKey.Open, self.open_text
        )
        self.save_action = self._action(
            file_menu, "&Save audio…", QKeySequence.StandardKey.Save, self.result.save_dialog
        )
        file_menu.addSeparator()
        self._action(file_menu, "&Quit", QKeySequence.StandardKey.Quit, self.close)
        edit_menu = self.menuBar().addMenu("&Edit")
        edit_menu.addMenu(self.editor.token_menu())
        self._action(
            edit_menu, "Insert sample text", None, lambda: self.editor.set_text(sample_text())
        )
        run_menu = self.menuBar().addMenu("&Run")
        self.synth_action = self._action(
            run_menu, "&Synthesize", QKeySequence("Ctrl+Return"), self.synthesize_or_cancel
        )
        self.synth_action.setShortcuts([QKeySequence("Ctrl+Return"), QKeySequence("Ctrl+Enter")])
        self.cancel_action = self._action(run_menu, "&Cancel", QKeySequence("Esc"), self.cancel)
        self._action(run_menu, "&Play result", QKeySequence("Ctrl+P"), self.result.play)
        self._action(run_menu, "S&top playback", QKeySequence("Ctrl+."), self.result.user_stop)
        model_menu = self.menuBar().addMenu("&Models")
        self._action(model_menu, "&Models…", QKeySequence("Ctrl+M"), self.show_models)
        speaker_menu = self.menuBar().addMenu("&Speakers")
        self._action(speaker_menu, "&Audition…", QKeySequence("Ctrl+U"), self.show_audition)
        self._action(speaker_menu, "&Random speaker", QKeySequence("Ctrl+R"), self.speakers.roll)
        help_menu = self.menuBar().addMenu("&Help")
        self.desktop_entry_action = self._action(
            help_menu,
            "Add to &applications menu",
            None,
            lambda: self.show_message(desktop_entry.install_sentence()),
        )

    def _action(self, menu, text, shortcut, slot) -> QAction:  # type: ignore[no-untyped-def]
        action = QAction(text, self)
        if shortcut is not None:
            action.setShortcut(shortcut)
        action.triggered.connect(lambda _=False: slot())
        menu.addAction(action)
        self.addAction(action)  # shortcuts work wherever the focus is
        return action
