"""The server's one model, loaded beside the serving, and one job on it at a time in a worker thread
that a client's cancel stops. See docs/mcp.md ("One job on the engine at a time").
"""

import threading
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

import anyio
import anyio.to_thread

from chattts_studio.core.engine.cancel import CancelToken
from chattts_studio.core.errors import Cancelled, StudioError
from chattts_studio.core.services.model_jobs import LoadSpec, load_model
from chattts_studio.core.services.report import Progress

if TYPE_CHECKING:
    from chattts_studio.core.engine.engine import Engine
    from chattts_studio.core.engine.loading import LoadedModel

T = TypeVar("T")
RENDER = "render_book"
MOST_WAITING = 8  # calls that may wait behind a synthesis; more are refused
STOP_POLL_SECONDS = 0.02


class Busy(StudioError):
    """The engine is taken and the call will not wait for it (one sentence)."""


async def in_thread(
    work: Callable[[], T], token: CancelToken, stopping: Callable[[], None] = lambda: None
) -> T:
    """`work()` in a worker thread. Cancelled meanwhile (the client cancelled, or left): the
    token is set, `stopping()` called, and this waits, shielded, for `work` to stop before
    the cancel goes on."""
    lock = threading.Lock()
    state = {"started": False, "abandoned": False}
    done = threading.Event()

    def body() -> T:
        with lock:
            if state["abandoned"]:  # cancelled before the thread took it: nothing runs
                raise Cancelled()
            state["started"] = True
        try:
            return work()
        finally:
            done.set()

    try:
        return await anyio.to_thread.run_sync(body, abandon_on_cancel=True)
    except anyio.get_cancelled_exc_class():
        token.cancel()
        stopping()
        with lock:
            state["abandoned"] = True
            started = state["started"]
        if started:
            with anyio.CancelScope(shield=True):
                while not done.is_set():
                    await anyio.sleep(STOP_POLL_SECONDS)
        raise


@dataclass
class Turn:
    """A job's place on the engine: how long it waited for it, and whether it is a render
    that still keeps other calls away (not once it is being stopped)."""

    waited_seconds: float = 0.0
    rendering: bool = False


class EngineSlot:
    """The model the server loads (its state for model_status) and the engine's one turn."""

    def __init__(self, spec: LoadSpec) -> None:
        self.spec = spec
        self.engine: Engine | None = None
        self.error = ""  # why the load failed, one sentence
        self.stage = "waiting to load"  # what the load is doing, for model_status
        self.running = ""  # the tool on the engine now ("" when free)
        self.progress = ""  # the running job's last progress line
        self._loaded = anyio.Event()
        self._lock = anyio.Lock()
        self._waiting = 0
        self._renders = 0  # renders running or waiting
        self._load_token = CancelToken()

    @property
    def state(self) -> str:
        if self.engine is not None:
            return "ready"
        return "failed" if self.error else "loading"

    @property
    def loaded(self) -> "LoadedModel | None":
        return self.engine.loaded if self.engine is not None else None

    async def load(self) -> None:
        """Load the model (building the demo weights when missing); a failure is kept as its
        sentence for every call that needs the model."""
        from chattts_studio.core.engine.engine import Engine

        def report(event: object) -> None:
            if isinstance(event, Progress):
                self.stage = str(event.detail or event.stage)

        def work() -> "Engine":
            engine = Engine()
            load_model(engine, self.spec, self._load_token, report)
            return engine

        try:
            self.stage = "loading"
            self.engine = await in_thread(work, self._load_token)
            self.stage = "loaded"
        except StudioError as exc:
            self.error = str(exc) or type(exc).__name__
        except Cancelled:
            self.error = "The server is stopping."
        except Exception as exc:  # a broken install or file: said, never a traceback
            self.error = f"The model could not be loaded: {type(exc).__name__}: {exc}"
        finally:
            self._loaded.set()

    def stop_loading(self) -> None:
        self._load_token.cancel()

    async def ready(self) -> "Engine":
        await self._loaded.wait()
        if self.engine is None:
            raise StudioError(self.error or "No model is loaded.")
        return self.engine

    @asynccontextmanager
    async def turn(self, tool: str) -> AsyncIterator[Turn]:
        """The engine for `tool`, alone: waits behind a synthesis, refused behind a render."""
        if self._renders:
            said = f" ({self.progress})" if self.progress else ""
            raise Busy(
                f"A book render is using the engine{said}; call {tool} again when it has "
                "finished, or cancel it."
            )
        if self._lock.locked() and self._waiting >= MOST_WAITING:
            raise Busy(
                f"{self._waiting} calls are already waiting for the engine; call {tool} again "
                "later."
            )
        turn = Turn(rendering=tool == RENDER)
        self._renders += turn.rendering
        self._waiting += 1
        queued, asked = True, time.monotonic()
        try:
            async with self._lock:
                self._waiting -= 1
                queued = False
                self.running = tool
                turn.waited_seconds = time.monotonic() - asked
                try:
                    yield turn
                finally:
                    self.running = ""
                    self.progress = ""
        finally:
            if queued:  # cancelled while it waited
                self._waiting -= 1
            self.let_in(turn)

    def let_in(self, turn: Turn) -> None:
        """Calls made from now on wait for this job instead of being refused: it is ending
        (a cancelled render stops within a decode step)."""
        if turn.rendering:
            turn.rendering = False
            self._renders -= 1

    async def run(self, tool: str, work: "Callable[[Engine, CancelToken], T]") -> tuple[T, Turn]:
        """`work(engine, token)` in a worker thread on the engine's turn; cancelling the call
        stops it through the token (see in_thread)."""
        engine = await self.ready()
        async with self.turn(tool) as turn:
            token = CancelToken()
            result = await in_thread(lambda: work(engine, token), token, lambda: self.let_in(turn))
            return result, turn
