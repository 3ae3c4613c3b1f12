"""Serving the speech API: one Batcher over the loaded model itself (never a second copy) and
the app over it, listening until interrupted (the command line) or on a thread of its own
until closed (the window)."""

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import chattts_studio.core.serve.running as api
from chattts_studio.core.engine.batch.batcher import Batcher
from chattts_studio.core.errors import StudioError
from chattts_studio.core.serve.access import Access
from chattts_studio.core.serve.app import Peers, SpeechServer
from chattts_studio.core.serve.limits import ServeLimits
from chattts_studio.core.serve.running import ApiThread

if TYPE_CHECKING:
    from chattts_studio.core.engine.engine import Engine

START_SECONDS = 30.0  # how long start() waits for uvicorn to listen


class CannotListen(StudioError):
    """The API could not listen on its address (the port is taken, say)."""

    def __init__(self, host: str, port: int) -> None:
        super().__init__(f"Cannot listen on {host}:{port}.")
        self.host, self.port = host, port


@dataclass(frozen=True)
class ServeOptions:
    host: str = "127.0.0.1"
    port: int = 8000  # 0: one the system picks
    api_key: str | None = None  # asked of every request but /health when set
    slots: int | None = None  # decoder rows shared by requests; None: from the device
    queue: int = 64  # most requests waiting for a row
    chunk_rows: int | None = None  # the CPU's exact step: rows per product (Batcher)
    limits: ServeLimits = field(default_factory=ServeLimits)
    access: Access | None = None  # None: Access(host): the Host and Origin checks for it
    peers: Peers | None = None  # the replicas beside it on Ray Serve (/health, /metrics)


class SpeechService:
    """The batcher and the app over `engine`'s loaded model; serve() blocks, start() and
    close() run it on a thread. While it lives, the batcher alone uses the model."""

    def __init__(self, engine: "Engine", options: ServeOptions) -> None:
        self.options = options
        self.batcher = Batcher(
            engine, slots=options.slots, max_waiting=options.queue, chunk_rows=options.chunk_rows
        )
        access = options.access or Access(host=options.host)
        self.server = SpeechServer(
            engine, self.batcher, options.api_key, options.limits, access, options.peers
        )
        self._thread: ApiThread | None = None

    def serve(self, on_listening: Callable[[], None]) -> None:
        """Serve until interrupted (Ctrl+C); `on_listening` is called once it listens."""
        self.batcher.start()
        try:
            api.serve_app(self.server, self.options.host, self.options.port, on_listening)
        finally:
            self.batcher.close()

    def start_behind_proxy(self) -> None:
        """Run the batch only: someone else serves `server.app` (a Ray Serve replica, whose
        proxy owns the listening socket). close() ends it."""
        self.batcher.start()

    def start(self, stop_seconds: float | None = None, wait_seconds: float = START_SECONDS) -> None:
        """Listen on a thread of its own; CannotListen (with everything stopped again) when it
        cannot. close() gives clients in flight `stop_seconds` to finish."""
        thread = self._thread = ApiThread(
            self.server, self.options.host, self.options.port, stop_seconds
        )
        self.batcher.start()
        if not thread.start(wait_seconds):
            self.close()
            raise CannotListen(self.options.host, self.options.port)

    @property
    def address(self) -> str:
        return self._thread.address if self._thread else ""

    @property
    def port(self) -> int:
        """The port it listens on (the system's pick for port 0); 0 before it listens."""
        return self._thread.port if self._thread else 0

    @property
    def requests(self) -> int:
        """Speech requests taken so far (plain counters: safe to read from any thread)."""
        return self.batcher.stats.requests

    @property
    def running(self) -> int:
        return self.batcher.active_requests()

    def close(self) -> None:
        """Stop listening, then end the batcher: both threads are gone when it returns and the
        model is the caller's alone again."""
        if self._thread is not None:
            self._thread.stop()
        self.batcher.close()
