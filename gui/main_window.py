"""The main window: composes the panels, turns clicks into worker requests, and shows every
worker outcome (results, progress, errors) without ever blocking the UI thread."""

from collections.abc import Callable
from pathlib import Path

import torch
from PySide6.QtCore import QTimer
from PySide6.QtGui import QCloseEvent
from PySide6.QtWidgets import (
    QApplication,
    QMainWindow,
)

from core import models
from core.devices import default_device
from core.engine import LoadedModel
from core.errors import StudioError
from core.request import SynthesisRequest
from core.text import check_text

from . import dialogs
from .draft import load_draft, save_draft
from .job_outcomes import JobOutcomes
from .notices import banner_dismissed, set_banner_dismissed
from .settings import Key, Settings
from .window_layout import WindowLayout
from .worker import (
    AuditionJob,
    Candidate,
    Job,
    JobKind,
    LoadJob,
    SynthesisJob,
    WorkerHost,
)

AUDITION_SEGMENT = 80
# The text and the settings are written this long after the last change, so a crash loses at
# most that much typing and a keystroke never waits for the disk.
PERSIST_DELAY_MS = 1_500
CLOSE_WAIT_MS = 30_000  # how long closing waits for the worker before it lets the window go


class MainWindow(QMainWindow, WindowLayout, JobOutcomes):
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
        self.persist_timer = QTimer(self)
        self.persist_timer.setSingleShot(True)
        self.persist_timer.setInterval(PERSIST_DELAY_MS)
        self._build()
        self._menus()
        self._connect()
        self._restore()
        self._start(model)

    def _connect(self) -> None:
        worker = self.host.worker
        # Bound methods of this QObject: Qt queues the calls onto the UI thread.
        worker.started.connect(self._job_started)
        worker.progress.connect(self._job_progress)
        worker.segment_ready.connect(self._segment_ready)
        worker.chunk_ready.connect(self._chunk_ready)
        worker.segment_restarted.connect(self._segment_restarted)
        worker.finished.connect(self._job_finished)
        worker.failed.connect(self._job_failed)
        worker.cancelled.connect(self._job_cancelled)
        self.synth_button.clicked.connect(self.synthesize_or_cancel)
        self.editor.error.connect(self.show_message)
        self.editor.editor.file_dropped.connect(self._remember_text_folder)
        self.controls.engine_changed.connect(self.reload_model)
        self.controls.segment_size_changed.connect(self.editor.set_segment_size)
        self.speakers.message.connect(self.show_message)
        if self.speakers.library.problem:  # damaged, newer or unreadable: say so at start
            self.warn(self.speakers.library.problem)
            QTimer.singleShot(0, lambda: self.show_message(self.speakers.library.problem))
        # Anything worth keeping changes: write it a moment later (see PERSIST_DELAY_MS).
        self.persist_timer.timeout.connect(self.persist)
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

    def _restore(self) -> None:
        s = self.settings
        if s.problem:
            self.warn(s.problem)
        draft, self._draft_problem = load_draft()
        if self._draft_problem:
            self.warn(self._draft_problem)
        if draft:
            self.editor.set_text(draft)
        self._saved_draft = draft
        geometry = s.get(Key.GEOMETRY)
        if not (geometry and self.restoreGeometry(geometry)):  # type: ignore[arg-type]
            screen = self.screen().availableGeometry()  # a first start fits a 1280x800 screen
            self.resize(min(1200, screen.width()), min(760, screen.height()))
        device = s.text(Key.DEVICE) or default_device().id
        self.controls.select(device, s.text(Key.PRECISION))
        self.controls.segment_slider.setValue(s.number(Key.SEGMENT_SIZE))
        self.controls.batch_box.setValue(s.number(Key.BATCH_SIZE))
        self.speakers.restore(s.text(Key.SPEAKER))
        self.result.stream_box.setChecked(s.flag(Key.STREAM_PLAYBACK))
        self.result.last_folder = s.text(Key.LAST_FOLDER)
        self.editor.set_segment_size(self.controls.segment_slider.value())

    def _start(self, model: str | None) -> None:
        official = models.resolve("official").folder.is_dir()
        chosen = model or self.settings.text(Key.MODEL) or ("official" if official else "")
        if chosen:
            self.load_model(chosen)
            return
        self._update_banner()
        banner = " or with the banner above" if not self.banner.isHidden() else ""
        self.show_message(
            "No model is loaded yet: download the official weights or use the demo weights, "
            f"in Models (Ctrl+M){banner}."
        )

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
        if isinstance(error, StudioError):
            return str(error)
        if isinstance(error, torch.OutOfMemoryError | MemoryError):
            return "Out of memory: lower the batch size or the segment size, or use another device."
        first = str(error).splitlines()[0][:300] if str(error) else ""
        return f"Unexpected error: {type(error).__name__}: {first}".rstrip(": ")

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
            self.show_message("Wait for the running job to finish (or cancel it) first.")
            return
        spec = LoadJob(self.model_name, self.controls.device().id, self.controls.precision().value)
        self.current_job = self.host.load(spec)
        self._set_busy(True)
        self._update_banner()

    def _set_loaded(self, loaded: LoadedModel) -> None:
        self.loaded = loaded
        self.controls.show_effective(loaded.precision)
        info = loaded.info
        # Name, device and precision first: a narrow window elides the end of the line.
        name = str(info.folder) if info.kind == "folder" else info.name
        text = f"Model: {name} · {loaded.device.id} · {loaded.precision.value}"
        if info.random_weights:
            text += f" · {models.RANDOM_LABEL}"
        self.model_label.setText(text)
        # Demo weights stay visibly marked as noise for as long as they are loaded.
        self.model_label.setStyleSheet(
            "color: #b03a2e; font-weight: bold;" if info.random_weights else ""
        )
        self.settings.set(Key.MODEL, self.model_name)
        self.settings.sync()
        self.model_dialog.show_loaded(loaded)
        said = f"Loaded {info.label} on {loaded.device.id} in {loaded.load_seconds:.1f} s."
        self.model_dialog.status_label.setText(said)  # where a model chosen there is said
        self.show_message(said)
        self._update_banner()

    def show_models(self) -> None:
        self.model_dialog.show_loaded(self.loaded)
        self.model_dialog.show()
        self.model_dialog.raise_()

    def _banner_download(self) -> None:
        self.show_models()
        self.model_dialog.start_download()

    def _download(self) -> None:
        if self.current_job is not None:
            self.model_dialog.download_ended("Wait for the running job to finish first.")
            return
        self.current_job = self.host.download()
        self._set_busy(True)

    def _build_model(self, name: str) -> None:
        """Demo weights built in the worker (they are not loaded: Load does that)."""
        if self.current_job is not None:
            self.model_dialog.build_ended("Wait for the running job to finish first.")
            return
        self.current_job = self.host.build(name)
        self._set_busy(True)

    # -- synthesis -------------------------------------------------------------------------
    def build_request(self) -> SynthesisRequest:
        generation = self.controls.generation()
        speaker = self.speakers.current()
        request = SynthesisRequest(
            text=self.editor.text(),
            speaker=speaker.embedding,
            seed=generation.seed,
            temperature=generation.temperature,
            top_p=generation.top_p,
            top_k=generation.top_k,
            refine_text=generation.refine_text,
            segment_size=self.controls.segment_slider.value(),
            batch_size=self.controls.batch_box.value(),  # 0: automatic, settled by the plan
            pause_seconds=generation.pause_seconds,
        )
        request.validate()
        check_text(request.text)  # empty or unspeakable text: say so before queueing
        return request

    def synthesize_or_cancel(self) -> None:
        if self.waiting is not None or (
            self.current_job is not None
            and self.current_job.kind is JobKind.SYNTHESIZE
            and self._cancelling is not self.current_job
        ):
            self.cancel()
            return
        self.synthesize()

    def _worker_will_be_free(self) -> bool:
        """The running job is a load (the model comes next) or a job already cancelled."""
        job = self.current_job
        return job is not None and (job.kind is JobKind.LOAD or job is self._cancelling)

    def _wait_for_worker(self, run: Callable[[], object], what: str) -> None:
        self.waiting = run
        loading = self.current_job is not None and self.current_job.kind is JobKind.LOAD
        cause = "the model" if loading else "the cancelled job to stop"
        self.synth_button.setText(f"Waiting for {cause}…  (Esc cancels)")
        self.show_message(
            f"The {what} starts as soon as "
            + ("the model is ready" if loading else "the cancelled job has stopped")
            + "; Esc cancels it."
        )

    def _run_waiting(self) -> None:
        run, self.waiting = self.waiting, None
        if run is not None:
            run()

    def _drop_waiting(self, reason: str) -> None:
        if self.waiting is not None:
            self.waiting = None
            self.synth_button.setText("Synthesize  (Ctrl+Enter)")
            self.show_message(f"{reason} The waiting request was not run.")

    def synthesize(self) -> Job | None:
        if self.current_job is not None and not self._worker_will_be_free():
            self.show_message("Busy: wait for the running job or press Esc to cancel it.")
            return None
        try:
            request = self.build_request()
        except StudioError as exc:
            self._show_error(exc)
            return None
        if self.current_job is not None:
            self._wait_for_worker(self.synthesize, "synthesis")
            return None
        if self.loaded is None:
            banner = " or with the banner above" if not self.banner.isHidden() else ""
            self.show_message(f"No model is loaded: choose one in Models (Ctrl+M){banner} first.")
            return None
        speaker = self.speakers.current()
        spec = SynthesisJob(
            request, speaker.seed if speaker.embedding is None else None, speaker.label
        )
        self.result.begin(request.pause_seconds)
        self.current_job = self.host.synthesize(spec)
        self._set_busy(True)
        self.synth_button.setText("Cancel  (Esc)")
        return self.current_job

    def cancel(self) -> None:
        if self.waiting is not None:  # Esc drops what waits, not the load it waits for
            self.waiting = None
            self.synth_button.setText("Synthesize  (Ctrl+Enter)")
            self.show_message("The waiting request is cancelled.")
            return
        if self.current_job is not None:
            self._cancelling = self.current_job
            self.host.cancel()
            self.show_message("Cancelling…")

    def _cancel_audition(self) -> None:
        if self.current_job is not None and self.current_job.kind is JobKind.AUDITION:
            self.cancel()

    def _set_busy(self, busy: bool) -> None:
        job = self.current_job
        # Segment and batch size are the running synthesis's: locked until it ends.
        synthesizing = busy and job is not None and job.kind is JobKind.SYNTHESIZE
        self.controls.set_busy(busy, synthesizing)
        self.speakers.audition.setEnabled(not busy)
        if not busy:
            self.synth_button.setText("Synthesize  (Ctrl+Enter)")

    # -- audition and speakers -------------------------------------------------------------
    def show_audition(self) -> None:
        self.audition_dialog.show()
        self.audition_dialog.raise_()

    def _audition(self, text: str, count: int) -> None:
        if self._worker_will_be_free():
            self._wait_for_worker(lambda: self._audition(text, count), "audition")
            return
        if self.current_job is not None or self.loaded is None:
            self.audition_dialog.failed("Load a model and wait for the running job first.")
            return
        generation = self.controls.generation()
        base = SynthesisRequest(
            text=text,
            temperature=generation.temperature,
            top_p=generation.top_p,
            top_k=generation.top_k,
            refine_text=False,
            segment_size=AUDITION_SEGMENT,
            batch_size=4,
        )
        self.current_job = self.host.audition(AuditionJob(text, count, base))
        self._set_busy(True)

    def _keep_candidate(self, name: str, candidate: Candidate, replace: bool = False) -> None:
        """The dialog says what the library did: kept, refused (a taken name: replace it or
        choose another), or could not be written."""
        from core.speakers import SpeakerNameTaken

        dialog = self.audition_dialog
        try:
            entry = self.speakers.store(name, candidate.embedding, candidate.seed, replace)
        except SpeakerNameTaken as taken:
            dialog.name_taken(taken.name, candidate, self.speakers.library.free_name(taken.name))
            return
        except StudioError as exc:
            dialog.keep_failed(str(exc))
            self.show_message(str(exc))
            return
        self.show_message(dialog.kept(entry.name, candidate, replace))

    def _embedding_wanted(self, seed: int) -> None:
        if self.loaded is None or self.current_job is not None:
            self.show_message(
                "The embedding of a voice seed needs a loaded model and an idle worker."
            )
            return
        self.current_job = self.host.speaker_for_seed(seed)

    def _remember_text_folder(self, path: Path) -> None:
        self._folder_used(str(Path(path).parent))

    def _folder_used(self, folder: str) -> None:
        self.settings.set(Key.LAST_FOLDER, folder)
        self.settings.sync()

    def open_text(self) -> None:
        path = dialogs.open_text_file(self, self.settings.text(Key.LAST_FOLDER))
        if path and self.editor.open_file(path):
            self.show_message(f"Opened {path}.")

    # -- keeping the text and settings --------------------------------------------------------
    def persist(self) -> None:
        """Write the editor text (atomically) and the settings now."""
        self.persist_timer.stop()
        text = self.editor.text()
        if text != self._saved_draft:
            problem = save_draft(text)
            if problem is None:
                self._saved_draft = text
                self._draft_problem = None
            elif problem != self._draft_problem:  # once per problem, not once per keystroke
                self._draft_problem = problem
                self.show_message(problem)
        self.save_settings()

    # -- closing ---------------------------------------------------------------------------
    def save_settings(self) -> None:
        s = self.settings
        s.set(Key.GEOMETRY, self.saveGeometry())
        s.set(Key.DEVICE, self.controls.device().id)
        s.set(Key.PRECISION, self.controls.precision().value)
        s.set(Key.SEGMENT_SIZE, self.controls.segment_slider.value())
        s.set(Key.BATCH_SIZE, self.controls.batch_box.value())
        s.set(Key.SPEAKER, self.speakers.current().key())
        s.set(Key.STREAM_PLAYBACK, self.result.stream_box.isChecked())
        if self.result.last_folder:
            s.set(Key.LAST_FOLDER, self.result.last_folder)
        s.sync()

    def closeEvent(self, event: QCloseEvent) -> None:  # Qt's name
        """Cancel what runs, wait for the worker thread to end, then close."""
        self.persist()
        self.live.timer.stop()
        self.result.timer.stop()
        self.result.stop()
        self.audition_dialog.close()
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
            self.host.thread.finished.connect(self._finish_close)
        event.accept()

    def _finish_close(self) -> None:
        self.host.release()
        self.quit_application()

    quit_application = staticmethod(QApplication.quit)
