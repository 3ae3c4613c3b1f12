"""The speech API's line under the run row: where it listens, requests taken, and buttons to copy
the URL and stop serving; when other machines are allowed, the session's key to copy.
"""

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from chattts_studio.gui.common.notices import MessageLabel, plural
from chattts_studio.gui.i18n import translate


class ServePanel(QWidget):
    stop_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.url = ""
        self.key = ""
        self.status = MessageLabel()
        self.status.setObjectName("serveStatus")
        self.status.setAccessibleName(translate("Serving", "Speech API"))
        self.copy_button = QPushButton(translate("Serving", "Copy URL"))
        self.copy_button.setToolTip(translate("Serving", "Copy the API's address to the clipboard"))
        self.stop_button = QPushButton(translate("Serving", "Stop serving"))
        self.key_label = QLabel()
        self.key_label.setObjectName("serveKey")
        self.key_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.key_label.setAccessibleName(translate("Serving", "API key"))
        self.copy_key_button = QPushButton(translate("Serving", "Copy key"))
        self.copy_key_button.setToolTip(
            translate(
                "Serving",
                "Copy the API key to the clipboard: other machines send it as the header "
                "'Authorization: Bearer KEY'. A new key is made each time serving starts.",
            )
        )
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.status, 1)
        row.addWidget(self.copy_button)
        row.addWidget(self.stop_button)
        self.key_row = QWidget()
        key_row = QHBoxLayout(self.key_row)
        key_row.setContentsMargins(0, 0, 0, 0)
        key_row.addWidget(self.key_label, 1)
        key_row.addWidget(self.copy_key_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(row)
        layout.addWidget(self.key_row)
        self.copy_button.clicked.connect(self.copy_url)
        self.copy_key_button.clicked.connect(self.copy_key)
        self.stop_button.clicked.connect(self.stop_requested)
        self.key_row.setVisible(False)
        self.setVisible(False)

    def show_counts(self, url: str, requests: int, running: int) -> None:
        self.url = url
        self.status.setText(
            translate("Serving", "Serving on {url} · {requests} · {running} running").format(
                url=url, requests=plural(requests, "request"), running=running
            )
        )

    def show_key(self, key: str | None) -> None:
        """The key other machines must send (None: only this machine is served, no key)."""
        self.key = key or ""
        self.key_label.setText(
            translate("Serving", "Other machines may connect with the key {key}").format(key=key)
            if key
            else ""
        )
        self.key_row.setVisible(bool(key))

    def show_stopping(self) -> None:
        self.status.setText(translate("Serving", "Stopping the speech API…"))
        self.stop_button.setEnabled(False)

    def shown(self, serving: bool) -> None:
        self.stop_button.setEnabled(serving)
        self.setVisible(serving)
        if not serving:
            self.show_key(None)  # the key ends with its session

    def copy_url(self) -> None:
        QGuiApplication.clipboard().setText(self.url)

    def copy_key(self) -> None:
        QGuiApplication.clipboard().setText(self.key)
