"""The main window: composes the panels, turns clicks into worker requests, and shows every
worker outcome (results, progress, errors) without ever blocking the UI thread.

It imports neither torch nor ChatTTS: the worker does, in the background, so the window is on
screen first (issue 13)."""

import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QTimer
from PySide6.QtGui import QCloseEvent, QShowEvent
from PySide6.QtWidgets import QApplication

from chattts_studio.core.errors import StudioError
from chattts_studio.core.weights import models
from chattts_studio.gui.common import dialogs
from chattts_studio.gui.common.notices import banner_dismissed, set_banner_dismissed
from chattts_studio.gui.common.theme import notifier, warning_colour
from chattts_studio.gui.draft import DraftKeeper
from chattts_studio.gui.i18n import core_text, model_label, translate
from chattts_studio.gui.panels.engine_choice import engine_label
from chattts_studio.gui.render.jobs import RenderJobs
from chattts_studio.gui.result.history import save_history_limit, saved_history_limit
from chattts_studio.gui.serve.control import ServeControl
from chattts_studio.gui.settings import Key, Settings
from chattts_studio.gui.voices.jobs import VoiceJobs
from chattts_studio.gui.window.job_outcomes import JobOutcomes
from chattts_studio.gui.window.job_requests import JobRequests
from chattts_studio.gui.window.layout import WindowLayout
from chattts_studio.gui.window.persistence import Persistence
from chattts_studio.gui.worker.host import WorkerHost
from chattts_studio.gui.worker.jobs import Job, JobKind, LoadJob

# The text and the settings are written this long after the last change, so a crash loses at
# most that much typing and a keystroke never waits for the disk.
PERSIST_DELAY_MS = 1_500
CLOSE_WAIT_MS = 30_000  # how long closing waits for the worker before it lets the window go

if TYPE_CHECKING:
    from chattts_studio.core.engine.loading import LoadedModel
    from chattts_studio.gui.single_instance import InstanceServer


class MainWindow(
    WindowLayout,
    JobRequests,
    JobOutcomes,
    RenderJobs,
    VoiceJobs,
    ServeControl,
    Persistence,
):
    instance_server: "InstanceServer"  # set by app.py: other launches hand it their file

    def __init__(self, model: str | None = None, settings: Settings | None = None) -> None:
        super().__init__()
        self.settings = settings or Settings()
        self.host = WorkerHost(self)
        self.loaded: LoadedModel | None = None
        self.model_name = ""
        self.current_job: Job | None = None  # the one job the window waits on
        # A synthesis or audition asked for while the worker loads a model (or winds down a
        # cancelled job): it runs as soon as the worker is free; Esc drops it.
        self.waiting: Callable[[], object] | None = None
        self._cancelling: Job | None = None
        self.last_error: Exception | None = None
        self._saved_draft = ""  # the editor text as last written to the data folder
        self._draft_problem: str | None = None
        self.drafts = DraftKeeper(self)
        self.persist_timer = QTimer(self)
        self.persist_timer.setSingleShot(True)
        self.persist_timer.setInterval(PERSIST_DELAY_MS)
        self._build()
        self._menus()
        self._build_render_queue()  # before _restore: the dock's saved place applies to it
        self._connect()
        self._restore()
        self.result.set_history_limit(saved_history_limit(self.settings))
        self.result.history_limit_changed.connect(self._history_limit_changed)
        notifier().changed.connect(self._restyle_warnings)  # the scheme changed: new colours
        self._start(model)

    def showEvent(self, event: QShowEvent) -> None:  # Qt's name
        """Shown: the worker starts (torch, the devices, then the jobs asked for) as soon as
        the event loop has painted the window."""
        super().showEvent(event)
        QTimer.singleShot(0, self.host.start)

    def _connect(self) -> None:
        self._connect_worker()
        self._connect_render_queue()
        self._connect_voices()
        self._connect_serving()
        self.synth_button.clicked.connect(self.synthesize_or_cancel)
        self.editor.error.connect(self.show_message)
        self.editor.editor.file_dropped.connect(self._remember_text_folder)
        self.controls.engine_changed.connect(self.reload_model)
        self.controls.segment_size_changed.connect(self.editor.set_segment_size)
        self.speakers.message.connect(self.show_message)
        if self.speakers.library.problem:  # damaged, newer or unreadable: say so at start
            self.warn(core_text(self.speakers.library.problem))
            QTimer.singleShot(
                0, lambda: self.show_message(core_text(self.speakers.library.problem))
            )
        # Anything worth keeping changes: write it a moment later (see PERSIST_DELAY_MS).
        self.persist_timer.timeout.connect(self._persist_soon)
        for changed in (
            self.editor.editor.textChanged,
            self.controls.engine_changed,
            self.controls.segment_slider.valueChanged,
            self.controls.batch_box.valueChanged,
            self.result.stream_box.toggled,
            self.speakers.seed_box.valueChanged,
            self.speakers.library_mode.toggled,
        ):
            changed.connect(lambda *_args: self.persist_timer.start())
        self.speakers.embedding_wanted.connect(self._embedding_wanted)
        self.speakers.audition_wanted.connect(self.show_audition)
        self.speakers.blend_wanted.connect(self.show_blend)
        self.result.message.connect(self.show_message)
        self.result.folder_used.connect(self._folder_used)
        self.banner_download.clicked.connect(self._banner_download)
        self.banner_demo.clicked.connect(lambda: self.load_model("demo"))
        self.banner.closed.connect(self._banner_dismissed)
        self.model_dialog.model_chosen.connect(self.load_model)
        self.model_dialog.download_requested.connect(self._download)
        self.model_dialog.build_requested.connect(self._build_model)
        self.model_dialog.cancel_requested.connect(self.host.cancel)
        self.audition_dialog.generate_requested.connect(self._audition)
        self.audition_dialog.keep_requested.connect(self._keep_candidate)
        self.audition_dialog.cancel_requested.connect(self._cancel_audition)
        self.audition_dialog.playing.connect(self.result.forget_playback)
        self.blend_dialog.preview_requested.connect(self._preview_blend)
        self.blend_dialog.cancel_requested.connect(self._cancel_audition)
        self.blend_dialog.playing.connect(self.result.forget_playback)
        self.blend_dialog.message.connect(self.show_message)

    def _start(self, model: str | None) -> None:
        official = models.resolve("official").folder.is_dir()
        chosen = model or self.settings.text(Key.MODEL) or ("official" if official else "")
        if chosen:
            self.load_model(chosen)
            return
        self._update_banner()
        if self.banner.isHidden():
            said = self.tr(
                "No model is loaded yet: download the official weights or use the demo weights, "
                "in Models (Ctrl+M)."
            )
        else:
            said = self.tr(
                "No model is loaded yet: download the official weights or use the demo weights, "
                "in Models (Ctrl+M) or with the banner above."
            )
        self.show_message(said)

    # -- the first-run banner --------------------------------------------------------------
    # It is about one situation: the official weights are missing and no model is usable.
    # Dismissed, it stays dismissed (across starts) until that situation ends.
    BANNER_SITUATION = "official weights missing"

    def _update_banner(self) -> None:
        official = models.resolve("official").folder.is_dir()
        if official and banner_dismissed(self.settings):
            set_banner_dismissed(self.settings, "")  # the situation changed: forget it
        loading = self.current_job is not None and self.current_job.kind is JobKind.LOAD
        dismissed = banner_dismissed(self.settings) == self.BANNER_SITUATION
        self.banner.setVisible(not (official or self.loaded is not None or loading or dismissed))

    def _banner_dismissed(self) -> None:
        set_banner_dismissed(self.settings, self.BANNER_SITUATION)
        self.banner.hide()

    # -- messages --------------------------------------------------------------------------
    def show_message(self, text: str) -> None:
        self.notice.setText(text)

    def warn(self, text: str) -> None:
        """A problem that must not scroll away with the next status message."""
        lines = [line for line in self.alert_text.text().split("\n") if line]
        if text not in lines:
            self.alert_text.setText("\n".join([*lines, text]))
        self.alert.setVisible(True)
        self.show_message(text)

    @staticmethod
    def error_sentence(error: Exception) -> str:
        """The sentence for a failed job, in the interface's language (a bug's own text
        stays as Python said it: it is for a bug report)."""
        if isinstance(error, StudioError):
            return core_text(error)
        torch = sys.modules.get("torch")  # its error exists once the worker has imported it
        if isinstance(error, (MemoryError, getattr(torch, "OutOfMemoryError", MemoryError))):
            return translate(
                "MainWindow",
                "Out of memory: lower the batch size or the segment size, or use another device.",
            )
        first = str(error).splitlines()[0][:300] if str(error) else ""
        if not first:
            return translate("MainWindow", "Unexpected error: {kind}").format(
                kind=type(error).__name__
            )
        return translate("MainWindow", "Unexpected error: {kind}: {detail}").format(
            kind=type(error).__name__, detail=first
        )

    def _show_error(self, error: Exception) -> None:
        self.last_error = error
        self.show_message(self.error_sentence(error))  # a bug too: said plainly, window alive

    # -- model -----------------------------------------------------------------------------
    def load_model(self, name: str) -> None:
        self.model_name = name
        self.reload_model()

    def reload_model(self) -> None:
        if not self.model_name:
            return
        if self.current_job is not None:
            self.show_message(self.tr("Wait for the running job to finish (or cancel it) first."))
            return
        controls = self.controls
        # Before the device probe: the saved choice, settled by the worker as the controls
        # will show it.
        spec = LoadJob(
            self.model_name,
            controls.device_id() or None,
            controls.precision_value(),
            settle=not controls.ready,
            engine=controls.engine_value(),
        )
        self.current_job = self.host.load(spec)
        self._set_busy(True)
        self._update_banner()

    def _set_loaded(self, loaded: "LoadedModel") -> None:
        self.loaded = loaded
        self.controls.show_effective(loaded.precision, loaded.engine.value)
        info = loaded.info
        # Name, device, precision and engine first: a narrow window elides the line's end.
        name = str(info.folder) if info.kind == "folder" else info.name
        text = self.tr("Model: {name} · {device} · {precision} · {engine}").format(
            name=name,
            device=loaded.device.id,
            precision=loaded.precision.value,
            engine=engine_label(loaded.engine.value),
        )
        if info.random_weights:
            text += f" · {core_text(models.RANDOM_LABEL)}"
        self.model_label.setText(text)
        self._restyle_warnings()
        self.settings.set(Key.MODEL, self.model_name)
        self.settings.sync()
        self.model_dialog.show_loaded(loaded)
        said = self.tr("Loaded {model} on {device} in {seconds:.1f} s.").format(
            model=model_label(info), device=loaded.device.id, seconds=loaded.load_seconds
        )
        self.model_dialog.status_label.setText(said)  # where a model chosen there is said
        self.show_message(said)
        self._update_banner()

    def _restyle_warnings(self) -> None:
        """Demo weights stay visibly marked as noise for as long as they are loaded, in a red
        readable on the scheme's window (light or dark, followed when it changes)."""
        noise = self.loaded is not None and self.loaded.info.random_weights
        colour = warning_colour(self.palette()).name()
        self.model_label.setStyleSheet(f"color: {colour}; font-weight: bold;" if noise else "")
        self.result.restyle_warnings()

    def show_models(self) -> None:
        self.model_dialog.show_loaded(self.loaded)
        self.model_dialog.show()
        self.model_dialog.raise_()

    def _banner_download(self) -> None:
        self.show_models()
        self.model_dialog.start_download()

    def _download(self) -> None:
        if self.current_job is not None:
            self.model_dialog.download_ended(self.tr("Wait for the running job to finish first."))
            return
        self.current_job = self.host.download()
        self._set_busy(True)

    def _build_model(self, name: str) -> None:
        """Demo weights built in the worker (they are not loaded: Load does that)."""
        if self.current_job is not None:
            self.model_dialog.build_ended(self.tr("Wait for the running job to finish first."))
            return
        self.current_job = self.host.build(name)
        self._set_busy(True)

    def _remember_text_folder(self, path: Path) -> None:
        self._folder_used(str(Path(path).parent))

    def _history_limit_changed(self, limit: int) -> None:
        save_history_limit(self.settings, limit)
        self.settings.sync()

    def _folder_used(self, folder: str) -> None:
        self.settings.set(Key.LAST_FOLDER, folder)
        self.settings.sync()

    def open_text(self) -> None:
        path = dialogs.open_text_file(self, self.settings.text(Key.LAST_FOLDER))
        if path and self.editor.open_file(path):
            self.show_message(self.tr("Opened {path}.").format(path=path))

    # -- closing ---------------------------------------------------------------------------
    def closeEvent(self, event: QCloseEvent) -> None:  # Qt's name
        """Cancel what runs, wait for the worker thread to end, then close."""
        self.persist()
        self.live.timer.stop()
        self.result.timer.stop()
        self.serve_timer.stop()  # the API itself stops with the worker (WorkerHost.release)
        self.result.stop()
        self.result.cancel_export()  # it stops before its next file and leaves nothing
        self.audition_dialog.close()
        self.blend_dialog.close()
        self.model_dialog.close()
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
