"""The board the replicas report to, so that any replica can answer /health and /metrics for all of
them; one that stops reporting leaves it after STALE_SECONDS. Plain Python: deployment.py deploys
it.
"""

import threading
import time
from dataclasses import dataclass
from typing import Any

from chattts_studio.core.serve.metrics import Family

REPORT_SECONDS = 1.0
STALE_SECONDS = 6.0  # several missed reports: the replica is gone


@dataclass(frozen=True)
class ReplicaReport:
    id: str  # Ray Serve's replica id
    node: str  # the machine's host name
    requests: int  # speech requests taken
    completed: int
    failed: int
    active: int  # requests decoding now
    queue: int  # requests waiting for a row
    families: tuple[Family, ...]  # its /metrics figures

    def health(self) -> dict[str, Any]:
        """The replica's line in /health."""
        return {
            "id": self.id,
            "node": self.node,
            "requests": self.requests,
            "completed": self.completed,
            "failed": self.failed,
            "active": self.active,
            "queue": self.queue,
        }


class ReplicaBoard:
    """The latest report of every live replica (one instance, in its own Ray Serve replica)."""

    def __init__(self) -> None:
        # Ray Serve runs a deployment's plain methods on a thread pool: one lock for the dict.
        self._lock = threading.Lock()
        self._reports: dict[str, tuple[float, ReplicaReport]] = {}

    def report(self, report: ReplicaReport) -> None:
        with self._lock:
            self._reports[report.id] = (time.monotonic(), report)

    def leave(self, replica_id: str) -> None:
        """A replica shutting down takes itself off at once."""
        with self._lock:
            self._reports.pop(replica_id, None)

    def reports(self) -> list[ReplicaReport]:
        """Live replicas' reports, by id; stale ones are dropped."""
        now = time.monotonic()
        with self._lock:
            for key in [k for k, (at, _) in self._reports.items() if now - at > STALE_SECONDS]:
                del self._reports[key]
            return sorted((report for _, report in self._reports.values()), key=lambda r: r.id)
