"""The model dialog: what is loaded and its kind, download the official weights with progress
and cancel, or choose a folder or the demo weights."""

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QDialog,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from core import models
from core.engine import LoadedModel
from core.errors import StudioError

from . import dialogs


class ModelDialog(QDialog):
    model_chosen = Signal(str)  # a model name or folder to load
    download_requested = Signal()
    cancel_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Models")
        self.loaded_label = QLabel()
        self.loaded_label.setWordWrap(True)
        self.status_label = QLabel()
        self.status_label.setWordWrap(True)
        self.progress = QProgressBar()
        self.progress.setVisible(False)
        self.download = QPushButton("Download official weights")
        self.cancel = QPushButton("Cancel download")
        self.cancel.setEnabled(False)
        self.folder = QPushButton("Choose a folder…")
        self.demo = QPushButton("Use demo weights")
        buttons = QHBoxLayout()
        for button in (self.download, self.cancel, self.folder, self.demo):
            buttons.addWidget(button)
        layout = QVBoxLayout(self)
        layout.addWidget(self.loaded_label)
        layout.addWidget(self.status_label)
        layout.addWidget(self.progress)
        layout.addLayout(buttons)
        self.download.clicked.connect(self.start_download)
        self.cancel.clicked.connect(self.cancel_requested)
        self.folder.clicked.connect(self._folder)
        self.demo.clicked.connect(lambda: self.model_chosen.emit("demo"))
        self.resize(560, 220)

    def show_loaded(self, loaded: LoadedModel | None) -> None:
        if loaded is None:
            self.loaded_label.setText("No model is loaded.")
        else:
            self.loaded_label.setText(
                f"Loaded: {loaded.info.label} (kind: {loaded.info.kind}) "
                f"on {loaded.device.id}, {loaded.precision.value}"
            )
        lines = []
        try:
            for row in models.status(quick=True):
                state = "ready" if row.verified else row.problem
                lines.append(f"{row.info.name}: {state}")
        except StudioError as exc:
            lines.append(str(exc))
        self.status_label.setText("\n".join(lines))

    def start_download(self) -> None:
        self.download.setEnabled(False)
        self.cancel.setEnabled(True)
        self.progress.setVisible(True)
        self.progress.setRange(0, 0)  # the total is unknown until the files arrive
        self.download_requested.emit()

    def download_progress(self, detail: str) -> None:
        self.progress.setFormat(detail)
        self.status_label.setText(detail)

    def download_ended(self, text: str) -> None:
        self.download.setEnabled(True)
        self.cancel.setEnabled(False)
        self.progress.setVisible(False)
        self.status_label.setText(text)

    def _folder(self) -> None:
        path = dialogs.choose_model_folder(self, "")
        if path:
            self.model_chosen.emit(str(path))
