"""Running the speech API: uvicorn over a SpeechServer's app, in the foreground, on a thread of its
own or on a free loopback port. SpeechService is the one batcher and app over a loaded model that
every runner shares.
"""

import contextlib
import socket
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from chattts_studio.core.engine.batch.batcher import Batcher
from chattts_studio.core.errors import StudioError
from chattts_studio.core.serve.access import Access
from chattts_studio.core.serve.app import Peers, SpeechServer
from chattts_studio.core.serve.limits import ServeLimits

if TYPE_CHECKING:
    from chattts_studio.core.engine.engine import Engine

START_SECONDS = 30.0  # how long SpeechService.start() waits for uvicorn to listen


def uvicorn_server(server: SpeechServer, host: str, port: int, ready: Callable[[], None]) -> Any:
    """A uvicorn Server for the app (run() blocks; should_exit stops it); `ready` is called
    once it listens."""
    import uvicorn

    config = uvicorn.Config(
        server.app,
        host=host,
        port=port,
        log_level="warning",
        # The pure-Python protocol and loop the suite validates (Ray Serve installs uvloop and
        # httptools, which uvicorn would otherwise pick up): same behaviour wherever it runs.
        http="h11",
        loop="asyncio",
        limit_concurrency=server.max_connections,  # beyond: 503 at once, before any work
        timeout_keep_alive=server.limits.keep_alive_seconds,
    )
    uv = uvicorn.Server(config)
    original = uv.startup

    async def startup(sockets: Any = None) -> None:
        await original(sockets)
        if uv.started:
            ready()

    uv.startup = startup  # type: ignore[method-assign]
    return uv


def serve_app(server: SpeechServer, host: str, port: int, ready: Callable[[], None]) -> None:
    """Serve until interrupted (Ctrl+C)."""
    uvicorn_server(server, host, port, ready).run()


class ApiThread:
    """uvicorn serving the app on a thread of its own: start() waits until it listens (False
    when it cannot bind: uvicorn then ends its thread); stop() gives clients in flight
    `stop_seconds` (None: uvicorn's own wait), then cuts off one that never reads."""

    def __init__(
        self, server: SpeechServer, host: str, port: int, stop_seconds: float | None = None
    ) -> None:
        self.address, self.port = "", 0  # where it listens, once it does
        self.stop_seconds = stop_seconds
        self._ready = threading.Event()
        self._uv: Any = uvicorn_server(server, host, port, self._listening)
        self._uv.config.timeout_graceful_shutdown = stop_seconds
        self._thread = threading.Thread(target=self._uv.run, name="speech-api", daemon=True)

    def _listening(self) -> None:  # uvicorn's thread, once it listens
        self.address, self.port = self._uv.servers[0].sockets[0].getsockname()[:2]
        self._ready.set()

    def start(self, wait_seconds: float) -> bool:
        self._thread.start()
        waited = 0.0
        while not self._ready.wait(0.05) and self._thread.is_alive() and waited < wait_seconds:
            waited += 0.05
        return self._ready.is_set()

    def stop(self) -> None:
        self._uv.should_exit = True
        if self._thread.is_alive():
            self._thread.join(self.stop_seconds + 5 if self.stop_seconds is not None else 30)
        if self._thread.is_alive():  # a client that never reads: cut it off
            self._uv.force_exit = True
            self._thread.join()


@contextlib.contextmanager
def serving_on_loopback(server: SpeechServer, batcher: Batcher) -> Iterator[int]:
    """Serve on a free 127.0.0.1 port in a thread (the benchmark's and the tests' server);
    yields the port; on leaving, stops uvicorn, then the batcher."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = int(probe.getsockname()[1])
    thread = ApiThread(server, "127.0.0.1", port)
    batcher.start()
    try:
        if not thread.start(60):
            raise RuntimeError("the speech API did not start")
        yield port
    finally:
        thread.stop()
        batcher.close()


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
            serve_app(self.server, self.options.host, self.options.port, on_listening)
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
