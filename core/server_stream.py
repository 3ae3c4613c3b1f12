"""One speech request's response: its ticket in the batcher, its audio encoded as it comes.

A failure before the first audio is an error status; afterwards the audio streams (flac is
sent whole: its encoder rewrites its header at the end). A client that goes away cancels its
ticket: the batcher frees its rows before the next step.
"""

import asyncio
from collections.abc import AsyncIterator

from fastapi import Request
from fastapi.responses import Response, StreamingResponse

from .batcher import Batcher, Delivery, Failed, Finished, QueueFull, SpeechOrder
from .errors import StudioError
from .request import AudioChunk
from .server_audio import CONTENT_TYPES, Encoder
from .server_errors import ApiError, error_response


async def respond(
    request: Request, batcher: Batcher, order: SpeechOrder, fmt: str, pause_seconds: float
) -> Response:
    loop = asyncio.get_running_loop()
    items: asyncio.Queue[Delivery] = asyncio.Queue()

    def deliver(item: Delivery) -> None:  # the batcher's thread
        loop.call_soon_threadsafe(items.put_nowait, item)

    try:
        ticket = batcher.submit(order, deliver)
    except QueueFull as exc:
        raise ApiError(429, str(exc), None, "rate_limit_exceeded") from None
    except StudioError as exc:  # the text cannot be spoken
        raise ApiError(400, str(exc), "input") from None
    encoder = Encoder(fmt, pause_seconds)
    try:
        # Wait for the first audio, so that a failure before it is an error status.
        first = await _next(request, items)
        if isinstance(first, Failed):
            return error_response(500, f"The audio could not be made: {first.error}")
        if not encoder.streams:
            return Response(
                await _whole(request, items, encoder, first),
                200,
                media_type=CONTENT_TYPES[fmt],
            )
    except BaseException:
        ticket.cancel()
        raise

    async def stream() -> AsyncIterator[bytes]:
        try:
            item: Delivery | None = first
            while item is not None:
                data = _encode(encoder, item)
                if data:
                    yield data
                item = None if isinstance(item, Finished | Failed) else await items.get()
        finally:
            ticket.cancel()  # the client went away (or all was sent: then a no-op)

    return StreamingResponse(stream(), media_type=CONTENT_TYPES[fmt])


async def _next(request: Request, items: "asyncio.Queue[Delivery]") -> Delivery:
    """The next delivery; CancelledError when the client has gone meanwhile."""
    while True:
        try:
            return await asyncio.wait_for(items.get(), 0.5)
        except TimeoutError:
            if await request.is_disconnected():
                raise asyncio.CancelledError() from None


async def _whole(
    request: Request, items: "asyncio.Queue[Delivery]", encoder: Encoder, item: Delivery
) -> bytes:
    parts: list[bytes] = []
    while True:
        if isinstance(item, Failed):
            raise ApiError(500, f"The audio could not be made: {item.error}")
        parts.append(_encode(encoder, item))
        if isinstance(item, Finished):
            return b"".join(parts)
        item = await _next(request, items)


def _encode(encoder: Encoder, item: Delivery) -> bytes:
    if isinstance(item, AudioChunk):
        return encoder.add(item)
    return encoder.finish()  # Finished, or Failed mid-stream: end what was sent
