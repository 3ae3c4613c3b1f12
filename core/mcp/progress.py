"""A job's progress, from the engine's worker thread to the client as MCP progress notifications:
the thread sets the latest figures and the call's task sends them, so the decode never waits on the
client. A failed notification is logged.
"""

import sys
import threading
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import anyio
from mcp.server.context import ServerRequestContext

from chattts_studio.core.mcp.slot import EngineSlot

T = TypeVar("T")
PROGRESS_SECONDS = 0.25  # how often the client hears of a job's progress


class ProgressFeed:
    """The render's latest progress, set by the engine's thread and sent by the call's task:
    the render never waits on the client's pipe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._latest: tuple[float, float, str] | None = None
        self._sent: tuple[float, float, str] | None = None

    def set(self, done: float, total: float, message: str) -> None:
        with self._lock:
            self._latest = (done, total, message)

    def take(self) -> tuple[float, float, str] | None:
        """The progress not yet sent, if any."""
        with self._lock:
            latest = self._latest
        if latest is None or latest == self._sent:
            return None
        self._sent = latest
        return latest

    async def pump(self, ctx: "ServerRequestContext[Any, Any]", slot: EngineSlot) -> None:
        """Send each new progress as a notification (a no-op when the client asked for none)."""
        while True:
            await self.flush(ctx, slot)
            await anyio.sleep(PROGRESS_SECONDS)

    async def flush(self, ctx: "ServerRequestContext[Any, Any]", slot: EngineSlot) -> None:
        """A notification that cannot be sent (the client's pipe closing) never stops the
        render: a client that left is seen by the SDK, which cancels the call."""
        update = self.take()
        if update is None:
            return
        slot.progress = update[2]
        try:
            await ctx.session.report_progress(update[0], update[1], update[2])
        except Exception as exc:
            print(f"progress not sent: {type(exc).__name__}: {exc}", file=sys.stderr)


async def reported(
    feed: ProgressFeed,
    ctx: "ServerRequestContext[Any, Any]",
    slot: EngineSlot,
    job: Callable[[], Awaitable[T]],
) -> T:
    """`job()`'s result, its progress sent meanwhile and once more at its end. Its error is
    raised as itself (inside the task group it would come out wrapped in an ExceptionGroup)."""
    outcome: list[T] = []
    failed: list[Exception] = []
    async with anyio.create_task_group() as pumping:
        pumping.start_soon(feed.pump, ctx, slot)
        try:
            outcome.append(await job())
        except Exception as exc:
            failed.append(exc)
        finally:
            pumping.cancel_scope.cancel()
    if failed:
        raise failed[0]
    await feed.flush(ctx, slot)
    return outcome[0]
