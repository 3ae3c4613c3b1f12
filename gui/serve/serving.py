"""The window's speech API: core's server and batcher around the model the worker already holds.

No Qt here. The worker starts and stops a session on its own thread, so the model passes from
the worker to the batcher and back with nothing else running on it (see Worker.serve).
"""

import socket
import threading
from typing import TYPE_CHECKING, Any

from chattts_studio.core.errors import StudioError
from chattts_studio.gui.i18n import translate

if TYPE_CHECKING:  # imported by the worker thread, never by the window's import chain
    from chattts_studio.core.engine.engine import Engine

HOST = "127.0.0.1"  # this machine only: no key asked (Host and Origin are still checked)
ANY_HOST = "0.0.0.0"  # "Allow other machines": every interface, a key asked on every request
DEFAULT_PORT = 8000  # the CLI's default, so a client set up for one finds the other
START_SECONDS = 30.0
STOP_SECONDS = 3.0  # a streaming client gets this long to finish before it is cut off


class ModelServing(StudioError):
    """A window job asked for the model while the speech API owns it."""

    def __init__(self) -> None:
        super().__init__(
            translate(
                "Serving",
                "The model is serving the local speech API: stop serving (Run > Serve on "
                "localhost) to use it here.",
            )
        )


def port_free(port: int, host: str = HOST) -> bool:
    with socket.socket() as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError:
            return False
    return True


def lan_address() -> str:
    """This machine's address on its network, as other machines reach it (the one its
    default route leaves from); its name when it has no route. Sends nothing: connecting a
    UDP socket only picks the route."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("192.0.2.1", 9))  # TEST-NET-1: never answered, never sent to
            address = str(probe.getsockname()[0])
        except OSError:
            address = ""
    return address if address and address != ANY_HOST else socket.gethostname()


class ServeSession:
    """One Batcher (holding `engine`'s model itself: no second copy) and one uvicorn thread.
    Built and closed by the worker thread; its counters are read from the UI thread.

    `others` (Allow other machines): it listens on every interface and asks every request for
    a key made for this session alone (kept in memory, never saved: the next session has
    another); else it listens on 127.0.0.1 and asks for none. Either way the Host and Origin
    checks keep web pages out (core/serve/access.py)."""

    def __init__(self, engine: "Engine", port: int = DEFAULT_PORT, others: bool = False) -> None:
        from chattts_studio.core.engine.batcher import Batcher
        from chattts_studio.core.serve.access import Access, new_api_key
        from chattts_studio.core.serve.app import SpeechServer, uvicorn_server

        self.host = ANY_HOST if others else HOST
        self.api_key: str | None = new_api_key() if others else None
        # The preferred port when it is free, else one the system picks (shown in the URL).
        wanted = port if port and port_free(port, self.host) else 0
        self.engine = engine
        self.batcher: Batcher = Batcher(engine)
        self.server: SpeechServer = SpeechServer(
            engine, self.batcher, api_key=self.api_key, access=Access(host=self.host)
        )
        self.lan_host = lan_address() if others else None
        self.address, self.port = "", 0  # where it listens, once it does
        self._ready = threading.Event()
        self._uv: Any = uvicorn_server(self.server, self.host, wanted, self._listening)
        self._uv.config.timeout_graceful_shutdown = STOP_SECONDS
        self._thread = threading.Thread(target=self._uv.run, name="speech-api", daemon=True)
        self.batcher.start()
        self._thread.start()
        # uvicorn ends its thread (SystemExit) when it cannot bind: wait for either.
        waited = 0.0
        while not self._ready.wait(0.05) and self._thread.is_alive() and waited < START_SECONDS:
            waited += 0.05
        if not self._ready.is_set():
            self.close()
            raise StudioError(
                translate("Serving", "Cannot listen on {host}:{port}.").format(
                    host=self.host, port=wanted or port
                )
            )

    def _listening(self) -> None:  # uvicorn's thread, once it listens
        self.address, self.port = self._uv.servers[0].sockets[0].getsockname()[:2]
        self._ready.set()

    @property
    def url(self) -> str:
        """The address on this machine."""
        return f"http://{HOST}:{self.port}/v1"

    @property
    def lan_url(self) -> str | None:
        """The address other machines use; None when they are not allowed."""
        return f"http://{self.lan_host}:{self.port}/v1" if self.lan_host else None

    @property
    def requests(self) -> int:
        """Speech requests taken so far (plain counters: safe to read from any thread)."""
        return self.batcher.stats.requests

    @property
    def running(self) -> int:
        return self.batcher.active_requests()

    def close(self) -> None:
        """Stop listening (clients in flight get STOP_SECONDS), then end the batcher: both
        threads are gone when it returns and the model is the worker's alone again."""
        self._uv.should_exit = True
        if self._thread.is_alive():
            self._thread.join(STOP_SECONDS + 5)
        if self._thread.is_alive():  # a client that never reads: cut it off
            self._uv.force_exit = True
            self._thread.join()
        self.batcher.close()
