"""Per-job cancel tokens: made when a job is queued, handed to everything it does, dropped with it.
Nothing is shared between jobs, so no cancel is lost by coming early or stops a later job by coming
late.
"""

import threading

from chattts_studio.core.errors import Cancelled


class CancelToken:
    """Set once, from any thread; read by the job's own thread between units of work."""

    __slots__ = ("_event",)

    def __init__(self) -> None:
        self._event = threading.Event()

    def cancel(self) -> None:
        self._event.set()

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()

    def check(self) -> None:
        """Raise Cancelled when the job was cancelled."""
        if self._event.is_set():
            raise Cancelled()

    def __repr__(self) -> str:
        return f"CancelToken(cancelled={self.cancelled})"
