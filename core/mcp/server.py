"""The MCP server on the official SDK's low-level Server over stdio: the tools, each call sent to
its tool, every failure one sentence of error result. It answers before the model loads; stdin
closed, SIGTERM or Ctrl+C stop it cleanly.
"""

import contextlib
import os
import signal
import sys
import traceback
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from typing import Any

import anyio
from mcp import types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel.server import Server
from mcp.server.stdio import stdio_server

from chattts_studio.core.cli.common import EXIT_CANCELLED
from chattts_studio.core.errors import Cancelled, StudioError
from chattts_studio.core.mcp import books, catalog, speech
from chattts_studio.core.mcp.folders import BookFolders, OutputFolder
from chattts_studio.core.mcp.replies import refused
from chattts_studio.core.mcp.slot import EngineSlot
from chattts_studio.core.services.model_jobs import LoadSpec

NAME = "chattts-studio"
INSTRUCTIONS = (
    "ChatTTS Studio speaks text with ChatTTS on this computer. synthesize makes one audio file "
    "from a text; render_book makes one file per chapter from a long text or a book; "
    "list_speakers lists the voices kept in the app; model_status says which weights are "
    "loaded. Files are written only in the server's output folder. With demo weights the audio "
    "is noise, not speech: every result says so."
)
Handler = Callable[
    [ServerRequestContext[Any, Any], dict[str, Any] | None], Awaitable[types.CallToolResult]
]


@dataclass(frozen=True)
class Studio:
    """What the tools work with: the model's slot and the folders the user gave."""

    slot: EngineSlot
    output: OutputFolder
    books: BookFolders

    def handlers(self) -> dict[str, Handler]:
        limits = {"synthesize": speech.MOST_CHARS, "render_book": books.MOST_CHARS}

        async def synthesize(ctx: Any, arguments: dict[str, Any] | None) -> types.CallToolResult:
            return await speech.call(self.slot, self.output, arguments, ctx)

        async def render_book(ctx: Any, arguments: dict[str, Any] | None) -> types.CallToolResult:
            return await books.call(self.slot, self.output, self.books, arguments, ctx)

        async def list_speakers(
            _ctx: Any, arguments: dict[str, Any] | None
        ) -> types.CallToolResult:
            return catalog.list_speakers(arguments)

        async def model_status(_ctx: Any, arguments: dict[str, Any] | None) -> types.CallToolResult:
            return catalog.model_status(self.slot, self.output, self.books, limits, arguments)

        return {
            speech.TOOL: synthesize,
            books.TOOL: render_book,
            catalog.LIST_SPEAKERS: list_speakers,
            catalog.MODEL_STATUS: model_status,
        }


def tools() -> list[types.Tool]:
    return [speech.definition(), books.definition(), *catalog.definitions()]


async def answer(
    handler: Handler, ctx: Any, params: types.CallToolRequestParams
) -> types.CallToolResult:
    """One call's result: a failure is one sentence (a bug's traceback goes to stderr, the
    server's log), never a dropped connection."""
    try:
        return await handler(ctx, params.arguments)
    except StudioError as exc:
        return refused(str(exc) or type(exc).__name__)
    except Cancelled:
        return refused("The call was stopped before it finished.")
    except Exception as exc:
        first = exc
        while isinstance(first, ExceptionGroup) and len(first.exceptions) == 1:
            first = first.exceptions[0]  # a task group's wrapping of one error
        if isinstance(first, StudioError):
            return refused(str(first) or type(first).__name__)
        traceback.print_exc(file=sys.stderr)
        return refused(f"The call failed: {type(first).__name__}: {first}".split("\n")[0])


def build_server(studio: Studio) -> Server[Any]:
    handlers = studio.handlers()
    listed = tools()

    async def list_tools(
        _ctx: ServerRequestContext[Any, Any], _params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=listed)

    async def call_tool(
        ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        handler = handlers.get(params.name)
        if handler is None:
            return refused(
                f"There is no tool {params.name[:60]!r}; the tools are {', '.join(handlers)}."
            )
        return await answer(handler, ctx, params)

    try:
        release = version("chattts-studio")
    except PackageNotFoundError:
        release = ""
    return Server(
        NAME,
        version=release,
        title="ChatTTS Studio",
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


async def stop_on_signals(scope: anyio.CancelScope, received: list[int]) -> None:
    """SIGTERM (a client's shutdown) and SIGINT (Ctrl+C) stop the server as closing stdin
    does: the running job is cancelled and waited for."""
    wanted = [s for s in (getattr(signal, "SIGTERM", None), signal.SIGINT) if s is not None]
    try:
        with anyio.open_signal_receiver(*wanted) as signals:
            async for number in signals:
                received.append(number)
                scope.cancel()
                return
    except NotImplementedError:  # an event loop without signal handlers (Windows)
        return


async def serve(spec: LoadSpec, output: OutputFolder, books_folders: BookFolders) -> None:
    """Serve on stdin and stdout until the client closes stdin or a signal comes."""
    slot = EngineSlot(spec)
    server = build_server(Studio(slot, output, books_folders))
    received: list[int] = []
    sys.stdout.flush()  # nothing of ours may reach the protocol after the SDK takes fd 1
    async with stdio_server() as (read, write):
        # The SDK moved fd 1 to stderr; Python's own stdout follows, so a stray print
        # (a library's) lands in the log, never in the protocol.
        with contextlib.redirect_stdout(sys.stderr):
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(slot.load)
                tasks.start_soon(stop_on_signals, tasks.cancel_scope, received)
                await server.run(read, write, server.create_initialization_options())
                slot.stop_loading()
                tasks.cancel_scope.cancel()
        if received:
            # Every job has stopped and been waited for, its files closed. The SDK's stdin
            # reader would still wait in its thread for a client that keeps the pipe open
            # (a terminal, after Ctrl+C): end here, as closing stdin would have.
            print("MCP server stopped", file=sys.stderr, flush=True)
            os._exit(EXIT_CANCELLED if received[0] == signal.SIGINT else 0)
