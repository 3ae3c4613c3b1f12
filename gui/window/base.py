"""What MainWindow's parts share, declared once so mypy checks every use across them.

MainWindow is a QMainWindow made of parts, each in its own module (layout.py, job_requests.py,
job_outcomes.py, persistence.py, gui/render/jobs.py, gui/voices/jobs.py, gui/serve/control.py).
Each part derives from WindowBase: the state and widgets one part makes and another reads are
annotated here, and the methods one part calls on another are declared here (for the type
checker only: at run time each exists once, in the part that defines it)."""

from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import QTimer
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QMainWindow, QMenu, QProgressBar, QPushButton

from chattts_studio.core.engine.request import SynthesisRequest
from chattts_studio.gui.common.notices import MessageLabel, Notice
from chattts_studio.gui.draft import DraftKeeper
from chattts_studio.gui.panels.blend import BlendDialog
from chattts_studio.gui.panels.controls import ControlsPanel
from chattts_studio.gui.panels.editor import EditorPanel
from chattts_studio.gui.panels.lexicon import LexiconPanel
from chattts_studio.gui.panels.live import LivePanel
from chattts_studio.gui.panels.speakers import SpeakerPanel
from chattts_studio.gui.render.queue import RenderQueue
from chattts_studio.gui.result.panel import ResultPanel
from chattts_studio.gui.serve.panel import ServePanel
from chattts_studio.gui.settings import Settings
from chattts_studio.gui.voices.audition_dialog import AuditionDialog
from chattts_studio.gui.window.model_dialog import ModelDialog
from chattts_studio.gui.window.script_mode import TurnPause
from chattts_studio.gui.worker.host import WorkerHost
from chattts_studio.gui.worker.jobs import Job, SynthesisJob

if TYPE_CHECKING:
    from chattts_studio.core.engine.loading import LoadedModel
    from chattts_studio.gui.serve.serving import ServeSession

# What a menu item runs when chosen.
Slot = Callable[[], object]


class WindowBase(QMainWindow):
    # -- made by MainWindow.__init__: the worker, the job state, the settings --------------
    settings: Settings
    host: WorkerHost
    loaded: "LoadedModel | None"
    model_name: str
    current_job: Job | None  # the one job the window waits on
    waiting: Slot | None  # a request run as soon as the worker is free
    _cancelling: Job | None  # the job cancelled and not ended yet
    last_error: Exception | None
    _saved_draft: str
    _draft_problem: str | None
    drafts: DraftKeeper
    persist_timer: QTimer

    # -- made by layout.py ------------------------------------------------------------------
    editor: EditorPanel
    controls: ControlsPanel
    live: LivePanel
    speakers: SpeakerPanel
    result: ResultPanel
    model_dialog: ModelDialog
    audition_dialog: AuditionDialog
    blend_dialog: BlendDialog
    banner: Notice
    banner_download: QPushButton
    banner_demo: QPushButton
    alert: Notice
    alert_text: MessageLabel
    model_label: MessageLabel
    notice: MessageLabel
    load_progress: QProgressBar
    synth_button: QPushButton
    script_label: MessageLabel

    # -- made by gui/voices/jobs.py, gui/render/jobs.py and gui/serve/control.py -------------
    lexicon: LexiconPanel
    script_action: QAction
    turn_pause: TurnPause
    render_queue: RenderQueue
    serving: "ServeSession | None"
    serve_timer: QTimer

    if TYPE_CHECKING:
        # -- main_window.py ------------------------------------------------------------------
        def show_message(self, text: str) -> None: ...
        def warn(self, text: str) -> None: ...
        @staticmethod
        def error_sentence(error: Exception) -> str: ...
        def _show_error(self, error: Exception) -> None: ...
        def load_model(self, name: str) -> None: ...
        def _set_loaded(self, loaded: "LoadedModel") -> None: ...
        def _update_banner(self) -> None: ...
        def show_models(self) -> None: ...
        def open_text(self) -> None: ...

        # -- layout.py -----------------------------------------------------------------------
        def _action(
            self,
            menu: QMenu,
            text: str,
            shortcut: QKeySequence | QKeySequence.StandardKey | None,
            slot: Slot,
        ) -> QAction: ...

        # -- job_requests.py -----------------------------------------------------------------
        def settings_request(self, text: str) -> SynthesisRequest: ...
        def synthesize_or_cancel(self) -> None: ...
        def cancel(self) -> None: ...
        def show_audition(self) -> None: ...
        def _set_busy(self, busy: bool) -> None: ...
        def _run_waiting(self) -> None: ...
        def _drop_waiting(self, reason: str) -> None: ...

        # -- job_outcomes.py -----------------------------------------------------------------
        def _job_done(self, job: Job) -> None: ...

        # -- gui/render/jobs.py --------------------------------------------------------------
        def render_next(self) -> Job | None: ...
        def _render_cancelled(self, job: Job) -> None: ...

        # -- gui/voices/jobs.py --------------------------------------------------------------
        def _build_voices(self) -> None: ...
        def lexicon_entries(self) -> tuple[tuple[str, str], ...]: ...
        def synthesis_job(self, request: SynthesisRequest) -> SynthesisJob: ...
        def show_speaking(self, name: str) -> None: ...
        def show_voice_dialog(self) -> None: ...
        def voice_failed(self, sentence: str) -> None: ...

        # -- gui/serve/control.py ------------------------------------------------------------
        def _build_serving(self) -> ServePanel: ...
        def _serve_menu(self, run_menu: QMenu) -> None: ...
        def serving_refusal(self) -> str | None: ...
        def _serving_not_started(self, job: Job) -> None: ...
