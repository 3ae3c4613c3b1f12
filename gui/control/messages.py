"""Where the window says things: the notice line under the editor (every outcome), the alert
strip (problems that must not scroll away), and the sentence for a failed job."""

import sys

from chattts_studio.core.errors import StudioError
from chattts_studio.gui.common.notices import MessageLabel, Notice
from chattts_studio.gui.i18n import core_text, translate


def error_sentence(error: Exception) -> str:
    """The sentence for a failed job, in the interface's language (a bug's own text stays as
    Python said it: it is for a bug report)."""
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
        return translate("MainWindow", "Unexpected error: {kind}").format(kind=type(error).__name__)
    return translate("MainWindow", "Unexpected error: {kind}: {detail}").format(
        kind=type(error).__name__, detail=first
    )


class Messages:
    """Owns the notice line and the alert strip (the window places them)."""

    def __init__(self) -> None:
        self.notice = MessageLabel(lines=2)
        self.notice.setObjectName("notice")
        # Problems found at start (damaged settings, a newer speaker library, a draft that
        # could not be read) stay in view until dismissed; the notice line changes too often.
        self.alert = Notice("alert", 2)
        self.alert_text = self.alert.text
        self.alert_close = self.alert.close_button
        self.alert.setVisible(False)
        self.last_error: Exception | None = None

    def show(self, text: str) -> None:
        self.notice.setText(text)

    def warn(self, text: str) -> None:
        """A problem that must not scroll away with the next status message."""
        lines = [line for line in self.alert_text.text().split("\n") if line]
        if text not in lines:
            self.alert_text.setText("\n".join([*lines, text]))
        self.alert.setVisible(True)
        self.show(text)

    def show_error(self, error: Exception) -> None:
        self.last_error = error
        self.show(error_sentence(error))  # a bug too: said plainly, window alive
