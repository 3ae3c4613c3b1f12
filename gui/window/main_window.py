"""The main window: makes the panels and the parts that drive them, places them (layout.py)
and wires them; each part owns its state and is handed what it needs.

Parts: the job slot (the one job the window waits on, and where each kind's failure goes),
messages, the model, synthesis, auditions, voices, the segment editor's projects, the render
queue, serving, persistence.
They talk through signals and a few named calls, never through one another's state.

It imports neither torch nor ChatTTS: the worker does, in the background, so the window is on
screen first."""

from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QTimer
from PySide6.QtGui import QCloseEvent, QShowEvent
from PySide6.QtWidgets import QApplication, QMainWindow

from chattts_studio.gui.common import dialogs
from chattts_studio.gui.control.context import Panels, WindowContext
from chattts_studio.gui.control.job_slot import LIVE_KINDS, JobSlot
from chattts_studio.gui.control.messages import Messages
from chattts_studio.gui.control.model_control import ModelControl
from chattts_studio.gui.i18n import core_text, translate
from chattts_studio.gui.panels.controls import ControlsPanel
from chattts_studio.gui.panels.editor import EditorPanel
from chattts_studio.gui.panels.live import LivePanel
from chattts_studio.gui.panels.speakers import SpeakerPanel
from chattts_studio.gui.project.project_control import ProjectControl
from chattts_studio.gui.render.render_control import RenderControl
from chattts_studio.gui.resources import app_icon
from chattts_studio.gui.result.history import save_history_limit, saved_history_limit
from chattts_studio.gui.result.panel import ResultPanel
from chattts_studio.gui.result.word_follow import WordFollow
from chattts_studio.gui.serve.serve_control import ServeControl
from chattts_studio.gui.settings import Key, Settings
from chattts_studio.gui.voices.voice_control import VoiceControl
from chattts_studio.gui.window import layout
from chattts_studio.gui.window.audition_control import AuditionControl
from chattts_studio.gui.window.persistence import Persistence
from chattts_studio.gui.window.synthesis_control import SynthesisControl
from chattts_studio.gui.worker.host import WorkerHost
from chattts_studio.gui.worker.jobs import Job

CLOSE_WAIT_MS = 30_000  # how long closing waits for the worker before it lets the window go

if TYPE_CHECKING:
    from chattts_studio.gui.single_instance import InstanceServer
    from chattts_studio.gui.worker.worker import EngineFactory


class MainWindow(QMainWindow):
    instance_server: "InstanceServer"  # set by app.py: other launches hand it their file

    def __init__(
        self,
        model: str | None = None,
        settings: Settings | None = None,
        *,
        engine: "EngineFactory | None" = None,
    ) -> None:
        """`engine` (tests: a stand-in's factory): the worker runs each op on the UI thread
        with that engine instead of the real one on its own thread."""
        super().__init__()
        self.setWindowTitle("ChatTTS Studio")
        self.setWindowIcon(app_icon())
        self.settings = settings or Settings()
        self.host = WorkerHost(self, inline=engine is not None, engine_factory=engine)
        self._panels()
        self._parts()
        body = layout.central(
            self.panels,
            self.messages,
            self.model,
            self.synthesis,
            self.voices,
            self.serve,
            self.projects.panel,
        )
        self.settings_tabs, self.top_splitter = body.settings_tabs, body.top_splitter
        self.editor_tabs = body.editor_tabs
        self.setCentralWidget(body.widget)
        self.menu_actions = layout.add_menus(
            self,
            self.settings,
            self.messages,
            (self.model, self.synthesis, self.auditions, self.voices, self.serve),
            self.panels,
            self.open_text,
        )
        self.projects.add_menu()  # after Run, Models and Speakers; before Help
        # After the menus (Render comes after Help, as before) and before restore: the dock's
        # saved place applies to it.
        self.render_jobs = RenderControl(
            self.context,
            model=self.model,
            serve=self.serve,
            settings_request=self.synthesis.settings_request,
        )
        self._connect()
        self.persistence.restore()
        self.result.set_history_limit(saved_history_limit(self.settings))
        self.model.start(model)

    def _panels(self) -> None:
        self.editor = EditorPanel()
        self.controls = ControlsPanel()
        self.live = LivePanel(self.host.live)
        self.speakers = SpeakerPanel()
        self.result = ResultPanel()
        self.words = WordFollow(self.result, self.editor)  # the spoken word marked in the text
        self.panels = Panels(self.editor, self.controls, self.speakers, self.result, self.live)

    def _parts(self) -> None:
        host, panels = self.host, self.panels
        self.messages = messages = Messages()
        self.jobs = JobSlot(self, host, messages, self.live)
        context = self.context = WindowContext(
            self, self.settings, host, self.jobs, messages, panels
        )
        self.model = model = ModelControl(context)
        self.serve = serve = ServeControl(context, model)
        self.voices = voices = VoiceControl(context, model)
        self.synthesis = SynthesisControl(context, model=model, voices=voices, serve=serve)
        self.auditions = AuditionControl(
            context, model=model, voices=voices, serve=serve, wait=self.synthesis.wait_for_worker
        )
        self.projects = ProjectControl(
            context,
            model=model,
            voices=voices,
            serve=serve,
            settings_request=self.synthesis.settings_request,
        )
        self.persistence = Persistence(context, self.voices.turn_pause)

    def showEvent(self, event: QShowEvent) -> None:  # Qt's name
        """Shown: the worker starts (torch, the devices, then the jobs asked for) as soon as
        the event loop has painted the window."""
        super().showEvent(event)
        QTimer.singleShot(0, self.host.start)

    def _connect(self) -> None:
        messages = self.messages
        self.editor.error.connect(messages.show)
        self.editor.editor.file_dropped.connect(self._remember_text_folder)
        self.controls.segment_size_changed.connect(self.editor.set_segment_size)
        self.speakers.message.connect(messages.show)
        if self.speakers.library.problem:  # damaged, newer or unreadable: say so at start
            problem = core_text(self.speakers.library.problem)
            messages.warn(problem)
            QTimer.singleShot(0, lambda: messages.show(problem))
        self.persistence.watch(
            self.editor.editor.textChanged,
            self.controls.engine_changed,
            self.controls.segment_slider.valueChanged,
            self.controls.batch_box.valueChanged,
            self.result.stream_box.toggled,
            self.speakers.seed_box.valueChanged,
            self.speakers.library_mode.toggled,
            self.voices.turn_pause.box.valueChanged,
        )
        self.result.message.connect(messages.show)
        self.result.folder_used.connect(self._folder_used)
        self.result.history_limit_changed.connect(self._history_limit_changed)
        self.projects.opened.connect(lambda: self.editor_tabs.setCurrentWidget(self.projects.panel))
        self.projects.queue_wanted.connect(
            lambda folder, title: self.render_jobs.queue.add(folder, "", title)
        )
        self.jobs.started.connect(self._job_started)

    def _job_started(self, job: Job) -> None:
        """A job the live panel follows: its tab comes to the front."""
        if job.kind in LIVE_KINDS:
            self.settings_tabs.setCurrentWidget(self.live)

    def show_message(self, text: str) -> None:
        """What another launch or a script says in the window (app.py)."""
        self.messages.show(text)

    def open_text(self) -> None:
        path = dialogs.open_text_file(self, self.settings.text(Key.LAST_FOLDER))
        if path and self.editor.open_file(path):
            self.messages.show(translate("MainWindow", "Opened {path}.").format(path=path))

    def _remember_text_folder(self, path: Path) -> None:
        self._folder_used(str(Path(path).parent))

    def _history_limit_changed(self, limit: int) -> None:
        save_history_limit(self.settings, limit)
        self.settings.sync()

    def _folder_used(self, folder: str) -> None:
        self.settings.set(Key.LAST_FOLDER, folder)
        self.settings.sync()

    # -- closing ---------------------------------------------------------------------------
    def closeEvent(self, event: QCloseEvent) -> None:  # Qt's name
        """Cancel what runs, wait for the worker thread to end, then close."""
        self.persistence.persist()
        self.live.timer.stop()
        self.result.timer.stop()
        self.serve.timer.stop()  # the API itself stops with the worker (WorkerHost.release)
        self.result.stop()
        self.result.cancel_export()  # it stops before its next file and leaves nothing
        self.auditions.dialog.close()
        self.auditions.blend_dialog.close()
        self.model.dialog.close()
        if self.host.stop(CLOSE_WAIT_MS):
            self.host.release()
        else:
            # A load inside ChatTTS cannot be interrupted. Destroying a running QThread
            # aborts the process, so the window goes and the app stays until the worker's
            # slot returns; then it releases the model and quits (main() waits too).
            app = QApplication.instance()
            if isinstance(app, QApplication):
                app.setQuitOnLastWindowClosed(False)
            self.host.worker_thread.finished.connect(self._finish_close)
        event.accept()

    def _finish_close(self) -> None:
        self.host.release()
        self.quit_application()

    quit_application = staticmethod(QApplication.quit)
