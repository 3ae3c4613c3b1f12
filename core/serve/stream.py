"""One speech request's response: its ticket in the batcher, its audio encoded as it comes and sent
as raw bytes, as events (sse.py), or whole in one JSON body with its captions.

A failure before the first audio is an error status; afterwards it aborts the response (no
chunked body's end), never a short 200. A client that leaves cancels its ticket and counts as
gone, not as a failure. Past `buffer_seconds` of unread audio the request takes no new row until
its reader catches up; a client that reads nothing for `stall_seconds` is cut off."""

import asyncio
import base64
import logging
import threading
from collections import deque
from collections.abc import AsyncIterator, Awaitable
from dataclasses import dataclass, field
from typing import Any, TypeVar

import numpy as np
from fastapi import Request
from fastapi.responses import JSONResponse, Response, StreamingResponse
from starlette.concurrency import run_in_threadpool
from starlette.types import Receive, Scope, Send

from chattts_studio.core import SAMPLE_RATE
from chattts_studio.core.engine.batch.batcher import Batcher
from chattts_studio.core.engine.batch.tickets import (
    Delivery,
    Failed,
    Finished,
    QueueFull,
    SpeechOrder,
    Ticket,
)
from chattts_studio.core.engine.request import AudioChunk
from chattts_studio.core.errors import StudioError
from chattts_studio.core.serve.audio import CONTENT_TYPES, Encoder
from chattts_studio.core.serve.captions import captions, word_timestamps
from chattts_studio.core.serve.errors import ApiError, error_response
from chattts_studio.core.text.prepare import Segment

log = logging.getLogger("chattts_studio")
T = TypeVar("T")
CLIENT_LEFT = 499  # nginx's "client closed request": counted apart from the server's failures


@dataclass(frozen=True)
class StreamLimits:
    buffer_seconds: float = 10.0  # audio waiting for one client before its request waits
    stall_seconds: float = 20.0  # a client that takes nothing this long while audio waits


class Framing:
    """How a streamed response carries its audio: as it is (OpenAI's default stream). A
    subclass wraps it (core/serve/sse.py): each piece, what follows the last, and what is sent
    before a failure ends the response."""

    media_type: str | None = None  # None: the audio format's own

    def audio(self, data: bytes) -> bytes:
        return data

    def end(
        self, input_chars: int, done: Finished, segments: list[Segment], encoder: Encoder
    ) -> bytes:
        return b""

    def failure(self, message: str) -> bytes:
        return b""


@dataclass(frozen=True)
class Reply:
    """What a speech response is: audio bytes (streamed as they come, flac whole), audio in
    `framing` (events), or, with `captions`, one JSON body of the audio and its captions."""

    framing: Framing | None = None
    captions: str | None = None  # srt, vtt or json
    headers: dict[str, str] = field(default_factory=dict)
    # The input's characters as the client sent them: what usage counts (the model's text may
    # have more, e.g. a [laugh] that instructions put before it).
    input_chars: int = 0


def usage(input_chars: int, done: Finished) -> dict[str, int]:
    """OpenAI's usage object. ChatTTS bills nothing, so what is counted is ours to say: input
    tokens are the input's characters (what the length limit counts, as sent: never a token
    the server added), output tokens the decoder's steps (one audio token, num_vq codes, per
    step: 512 samples of audio)."""
    return {
        "input_tokens": input_chars,
        "output_tokens": done.steps,
        "total_tokens": input_chars + done.steps,
    }


class StreamAborted(Exception):
    """Raised inside a response whose headers went out: uvicorn closes the connection without
    the chunked body's end, so the client cannot mistake the audio for whole."""


class _QuietAborts(logging.Filter):
    """uvicorn logs an exception out of the app at ERROR with its traceback; an aborted
    stream is a planned outcome, already said in one line where it happened."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        return not isinstance(exc, StreamAborted)


logging.getLogger("uvicorn.error").addFilter(_QuietAborts())


class _Buffer:
    """Deliveries from the batcher's thread, waiting for the response. Past the limit (in
    samples) the ticket is held back, and let go once half of that was taken."""

    def __init__(self, batcher: Batcher, limit_seconds: float) -> None:
        self._loop = asyncio.get_running_loop()
        self._batcher = batcher
        self._limit = max(1, round(limit_seconds * SAMPLE_RATE))
        self._items: deque[Delivery] = deque()
        self._lock = threading.Lock()
        self._ready = asyncio.Event()
        self.samples = 0  # audio waiting now
        self.peak = 0  # the most that ever waited
        self.ticket: Ticket | None = None  # set once submit() returns

    def put(self, item: Delivery) -> None:  # the batcher's thread
        with self._lock:
            self._items.append(item)
            if isinstance(item, AudioChunk):
                self.samples += len(item.audio)
                self.peak = max(self.peak, self.samples)
            ticket = self.ticket
            if ticket is not None and not ticket.held_back and self.samples >= self._limit:
                # Decided and done under the buffer's lock: were the flag set after it, the
                # reader could take the buffer empty in between, see no hold to let go, and
                # the request would stay held with nothing left to wake it.
                # The batcher never delivers under its own lock, so this order cannot
                # deadlock: the buffer's lock, then the batcher's.
                self._batcher.hold_back(ticket, True)
        self._loop.call_soon_threadsafe(self._ready.set)

    async def get(self) -> Delivery:
        while True:
            self._ready.clear()  # before looking: a put after the look sets it again
            with self._lock:
                if self._items:
                    item = self._items.popleft()
                    if isinstance(item, AudioChunk):
                        self.samples -= len(item.audio)
                    ticket = self.ticket
                    if ticket is not None and ticket.held_back and self.samples * 2 < self._limit:
                        self._batcher.hold_back(ticket, False)  # under the lock, as put's
                    return item
            await self._ready.wait()


class _Client:
    """Watches for the client leaving (the server's receive says http.disconnect)."""

    def __init__(self, receive: Receive) -> None:
        self.gone = asyncio.Event()
        self._listener = asyncio.ensure_future(self._listen(receive))

    async def _listen(self, receive: Receive) -> None:
        while (await receive())["type"] != "http.disconnect":
            pass
        self.gone.set()

    async def unless_gone(self, work: Awaitable[T]) -> tuple[T | None, bool]:
        """(work's result, False), or (None, True) when the client left first (work is
        cancelled then)."""
        task = asyncio.ensure_future(work)
        gone = asyncio.ensure_future(self.gone.wait())
        try:
            await asyncio.wait({task, gone}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            gone.cancel()
            if not task.done():
                task.cancel()
        if task.done() and not task.cancelled():
            return task.result(), False
        return None, True

    def close(self) -> None:
        self._listener.cancel()


@dataclass
class _Response:
    """What one response holds while it runs."""

    batcher: Batcher
    ticket: Ticket
    buffer: _Buffer
    client: _Client
    encoder: Encoder
    limits: StreamLimits

    def left(self, when: str) -> None:
        self.batcher.stats.disconnected += 1
        log.info("request %d: the client left %s", self.ticket.id, when)

    def end(self) -> None:
        """Whatever happened: the batcher frees its rows and counts it no more."""
        self.client.close()
        self.ticket.cancel()  # a no-op once all was sent
        self.ticket.release()


async def respond(
    request: Request,
    batcher: Batcher,
    order: SpeechOrder,
    fmt: str,
    pause_seconds: float,
    limits: StreamLimits | None = None,
    reply: Reply | None = None,
) -> Response:
    limits, reply = limits or StreamLimits(), reply or Reply()
    buffer = _Buffer(batcher, limits.buffer_seconds)
    try:
        ticket = batcher.submit(order, buffer.put, holds_audio=True)
    except QueueFull as exc:
        raise ApiError(429, str(exc), None, "rate_limit_exceeded") from None
    except StudioError as exc:  # the text cannot be spoken
        raise ApiError(400, str(exc), "input") from None
    buffer.ticket = ticket
    client = _Client(request.receive)
    state = _Response(batcher, ticket, buffer, client, Encoder(fmt, pause_seconds), limits)
    handed_over = False  # to the response, which ends `state` once its body is sent
    try:
        # Wait for the first audio, so that a failure before it is an error status.
        first, gone = await client.unless_gone(buffer.get())
        if gone or first is None:
            state.left("before its first audio")
            return Response(status_code=CLIENT_LEFT)
        if isinstance(first, Failed):
            return error_response(500, f"The audio could not be made: {first.error}")
        if reply.framing is None and (reply.captions or not state.encoder.streams):
            pieces: dict[int, list[np.ndarray]] | None = {} if reply.captions else None
            whole, gone = await client.unless_gone(_whole(state, first, pieces))
            if gone or whole is None:
                state.left("before its audio was whole")
                return Response(status_code=CLIENT_LEFT)
            audio, done = whole
            handed_over = True
            if reply.captions:
                segments, spans = state.ticket.segments, state.encoder.spans
                words = await run_in_threadpool(word_timestamps, segments, spans, pieces or {})
                body = _captioned(state, reply.input_chars, fmt, reply.captions, audio, done)
                body["timestamps"] = words
                return _WholeBody(state, JSONResponse(body, headers=reply.headers))
            media = CONTENT_TYPES[fmt]
            return _WholeBody(state, Response(audio, 200, media_type=media, headers=reply.headers))
        handed_over = True
        return _AudioStream(state, first, reply.framing or Framing(), fmt, reply)
    finally:
        if not handed_over:
            state.end()


def _captioned(
    state: _Response, input_chars: int, fmt: str, kind: str, audio: bytes, done: Finished
) -> dict[str, Any]:
    return {
        "audio": base64.b64encode(audio).decode("ascii"),
        "response_format": fmt,
        "content_type": CONTENT_TYPES[fmt],
        "captions_format": kind,
        "captions": captions(kind, state.ticket.segments, state.encoder.spans),
        "usage": usage(input_chars, done),
    }


async def _whole(
    state: _Response, item: Delivery, pieces: dict[int, list[np.ndarray]] | None = None
) -> tuple[bytes, Finished]:
    """The whole body; `pieces` (when given) gets each segment's audio for word timestamps."""
    parts: list[bytes] = []
    while True:
        if isinstance(item, Failed):
            raise ApiError(500, f"The audio could not be made: {item.error}")
        if pieces is not None and isinstance(item, AudioChunk):
            pieces.setdefault(item.index, []).append(item.audio)
        parts.append(_encode(state.encoder, item))
        if isinstance(item, Finished):
            return b"".join(parts), item
        item = await state.buffer.get()


def _encode(encoder: Encoder, item: Delivery) -> bytes:
    if isinstance(item, AudioChunk):
        return encoder.add(item)
    return encoder.finish()


class _AudioStream(StreamingResponse):
    """The audio from its first chunk on, sent as it comes in its framing; every write
    bounded in time."""

    def __init__(
        self,
        state: _Response,
        first: Delivery,
        framing: Framing,
        fmt: str,
        reply: Reply,
    ) -> None:
        self.state, self.first, self.framing = state, first, framing
        self.input_chars = reply.input_chars
        self._audio = self._chunks()
        media_type = framing.media_type or CONTENT_TYPES[fmt]
        super().__init__(self._audio, media_type=media_type, headers=reply.headers)

    async def _chunks(self) -> AsyncIterator[bytes]:
        state, item, framing = self.state, self.first, self.framing
        while True:
            if isinstance(item, Failed):
                state.batcher.stats.aborted += 1
                log.info("request %d: aborted after its headers", state.ticket.id)
                message = f"The audio could not be made: {item.error}"
                last = framing.failure(message)
                if last:
                    yield last
                raise StreamAborted(message)
            data = _encode(state.encoder, item)
            if data:
                yield framing.audio(data)
            if isinstance(item, Finished):
                tail = framing.end(self.input_chars, item, state.ticket.segments, state.encoder)
                if tail:
                    yield tail
                return
            item = await state.buffer.get()

    async def _pump(self, send: Send) -> bool:
        await send({"type": "http.response.start", "status": 200, "headers": self.raw_headers})
        async for data in self._audio:
            await _write(self.state, send, data, True)
        await _write(self.state, send, b"", False)
        return True

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await _sent_watched(self.state, self._pump(send), "while its audio streamed")


async def _sent_watched(state: _Response, pump: Awaitable[bool], when: str) -> None:
    """Send a body while watching for the client leaving; the request's hold ends either way
    (its rows freed, its audio no longer counted)."""
    try:
        _, gone = await state.client.unless_gone(pump)
        if gone:
            state.left(when)
    finally:
        state.end()


async def _write(state: _Response, send: Send, body: bytes, more: bool) -> None:
    """One piece of a body, bounded in time: a client that reads nothing for the stall limit
    is cut off (its response ends without the body's end)."""
    message = {"type": "http.response.body", "body": body, "more_body": more}
    try:
        await asyncio.wait_for(send(message), state.limits.stall_seconds)
    except TimeoutError:
        state.batcher.stats.stalled += 1
        log.info(
            "request %d: the client read nothing for %g s; cut off",
            state.ticket.id,
            state.limits.stall_seconds,
        )
        raise StreamAborted("The client stopped reading.") from None


class _WholeBody(Response):
    """A body made whole before it is sent (FLAC, a captions JSON), sent in pieces, each
    write bounded in time as a stream's are: a client that never reads is cut off instead of
    holding the body (~63 MB for 4,096 CJK characters as base64 WAV) and a connection for
    ever; one that leaves is seen."""

    PIECE = 64 * 1024

    def __init__(self, state: _Response, whole: Response) -> None:
        super().__init__(
            whole.body, whole.status_code, media_type=whole.media_type, headers=whole.headers
        )
        self.raw_headers = whole.raw_headers  # its own, content-length included
        self.state = state

    async def _pump(self, send: Send) -> bool:
        start = {"type": "http.response.start", "status": self.status_code}
        await send({**start, "headers": self.raw_headers})
        body = bytes(self.body)
        for at in range(0, len(body), self.PIECE):
            await _write(self.state, send, body[at : at + self.PIECE], True)
        await _write(self.state, send, b"", False)
        return True

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await _sent_watched(self.state, self._pump(send), "while its audio was sent")
