"""The window's speech API: the server and batcher around the model the window's worker
already holds, started and stopped on the worker's thread, so the model passes from the worker
to the batcher and back with nothing else running on it."""

import socket
from typing import TYPE_CHECKING

from chattts_studio.core.errors import StudioError
from chattts_studio.core.messages import QT_TRANSLATE_NOOP, Sentence

if TYPE_CHECKING:
    from chattts_studio.core.engine.batch.batcher import Batcher
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
            Sentence(
                QT_TRANSLATE_NOOP(
                    "core",
                    "The model is serving the local speech API: stop serving (Run > Serve on "
                    "localhost) to use it here.",
                )
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
    """The speech API service (chattts_studio.core.serve.running.SpeechService: one Batcher holding
    `engine`'s model itself, no second copy, and one uvicorn thread), as the window asks for
    it. Built and closed by the worker thread; its counters are read from the UI thread.

    `others` (Allow other machines): it listens on every interface and asks every request for
    a key made for this session alone (kept in memory, never saved: the next session has
    another); else it listens on 127.0.0.1 and asks for none. Either way the Host and Origin
    checks keep web pages out (core/serve/access.py)."""

    def __init__(self, engine: "Engine", port: int = DEFAULT_PORT, others: bool = False) -> None:
        from chattts_studio.core.serve.access import new_api_key
        from chattts_studio.core.serve.running import CannotListen, ServeOptions, SpeechService

        self.host = ANY_HOST if others else HOST
        self.api_key: str | None = new_api_key() if others else None
        # The preferred port when it is free, else one the system picks (shown in the URL).
        wanted = port if port and port_free(port, self.host) else 0
        self.engine = engine
        self.service = SpeechService(
            engine, ServeOptions(host=self.host, port=wanted, api_key=self.api_key)
        )
        self.lan_host = lan_address() if others else None
        try:
            self.service.start(stop_seconds=STOP_SECONDS, wait_seconds=START_SECONDS)
        except CannotListen:
            raise StudioError(
                Sentence(
                    QT_TRANSLATE_NOOP("core", "Cannot listen on {host}:{port}."),
                    host=self.host,
                    port=wanted or port,
                )
            ) from None

    @property
    def batcher(self) -> "Batcher":
        return self.service.batcher

    @property
    def address(self) -> str:
        """Where it listens."""
        return self.service.address

    @property
    def port(self) -> int:
        return self.service.port

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
        return self.service.requests

    @property
    def running(self) -> int:
        return self.service.running

    def close(self) -> None:
        """Stop listening (clients in flight get STOP_SECONDS), then end the batcher: both
        threads are gone when it returns and the model is the worker's alone again."""
        self.service.close()


def serve(engine: "Engine", port: int, others: bool) -> ServeSession:
    """The job that starts a session over the loaded model."""
    if engine.model is None:
        raise StudioError(Sentence(QT_TRANSLATE_NOOP("core", "Load a model before serving it.")))
    return ServeSession(engine, port, others)
