"""The speech API's line under the run row: where it listens, how many requests it has taken,
a button that copies the URL and one that stops serving."""

from PySide6.QtCore import Signal
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QHBoxLayout, QPushButton, QWidget

from .i18n import translate
from .notices import MessageLabel, plural


class ServePanel(QWidget):
    stop_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.url = ""
        self.status = MessageLabel()
        self.status.setObjectName("serveStatus")
        self.status.setAccessibleName(translate("Serving", "Speech API"))
        self.copy_button = QPushButton(translate("Serving", "Copy URL"))
        self.copy_button.setToolTip(translate("Serving", "Copy the API's address to the clipboard"))
        self.stop_button = QPushButton(translate("Serving", "Stop serving"))
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.status, 1)
        layout.addWidget(self.copy_button)
        layout.addWidget(self.stop_button)
        self.copy_button.clicked.connect(self.copy_url)
        self.stop_button.clicked.connect(self.stop_requested)
        self.setVisible(False)

    def show_counts(self, url: str, requests: int, running: int) -> None:
        self.url = url
        self.status.setText(
            translate("Serving", "Serving on {url} · {requests} · {running} running").format(
                url=url, requests=plural(requests, "request"), running=running
            )
        )

    def show_stopping(self) -> None:
        self.status.setText(translate("Serving", "Stopping the speech API…"))
        self.stop_button.setEnabled(False)

    def shown(self, serving: bool) -> None:
        self.stop_button.setEnabled(serving)
        self.setVisible(serving)

    def copy_url(self) -> None:
        QGuiApplication.clipboard().setText(self.url)
