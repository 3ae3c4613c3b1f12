"""A dialog that asks the worker for one job at a time and cancels it when closed, so the worker is
free for the next job at once.
"""

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QDialog, QPushButton, QWidget


class JobDialog(QDialog):
    """Its Cancel button (`cancel`, made here with the caller's translated text) is enabled
    exactly while its job runs: pressing it, or closing the dialog then (Esc, the title bar's
    close, a Close button wired to reject), emits `cancel_requested` for the window to cancel
    the job. The subclass enables the button when it asks for the job and disables it when the
    job ends."""

    cancel_requested = Signal()

    def __init__(self, cancel_text: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.cancel = QPushButton(cancel_text)
        self.cancel.setEnabled(False)
        self.cancel.clicked.connect(self.cancel_requested)

    @property
    def running(self) -> bool:
        return self.cancel.isEnabled()

    def reject(self) -> None:
        """Closing the dialog while its job runs cancels the job."""
        if self.running:
            self.cancel_requested.emit()
        super().reject()
