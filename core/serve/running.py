"""Running the speech API: uvicorn over a SpeechServer's app, in the foreground (`serve`), on
a thread of its own (the window, the Ray driver) or on a free loopback port (the benchmarks
and the tests)."""

import contextlib
import socket
import threading
from collections.abc import Callable, Iterator
from typing import Any

from chattts_studio.core.engine.batch.batcher import Batcher
from chattts_studio.core.serve.app import SpeechServer


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
