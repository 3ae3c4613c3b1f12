"""The local speech API: OpenAI's `/v1/audio/speech` over one shared continuous batch.

Every error is a JSON body in OpenAI's shape ({"error": {"message", "type", "param", "code"}})
with one sentence, never a traceback. Audio streams as it is made for wav, pcm, mp3 and opus;
flac is sent whole (its encoder rewrites its header at the end). A client that goes away
cancels its request: the batcher frees its rows before the next step.

Beyond OpenAI's fields (issue 23): per-request sampling, refine-text and segment size,
`stream_format: "sse"` (core/serve/sse.py), captions (core/serve/captions.py, also at
/v1/audio/captioned_speech), `instructions` mapped where honest (core/serve/instructions.py),
and voice blends ("alloy*0.7+seed:42*0.3", core/voices/blend.py).
"""

import contextlib
import hmac
import logging
import socket
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.middleware.cors import CORSMiddleware
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from chattts_studio.core.engine.batcher import Batcher
from chattts_studio.core.engine.batcher_ticket import SpeechOrder
from chattts_studio.core.engine.chattts.chat import SpeakerLike
from chattts_studio.core.engine.chattts.speaker_codec import speaker_string_limit
from chattts_studio.core.engine.engine import Engine
from chattts_studio.core.serve.access import CORS_METHODS, Access, cors_origins, refusal
from chattts_studio.core.serve.audio import CONTENT_TYPES
from chattts_studio.core.serve.errors import ApiError, error_response
from chattts_studio.core.serve.instructions import HEADER, read_instructions
from chattts_studio.core.serve.metrics import ServerMetrics
from chattts_studio.core.serve.page import PAGE_FILES, page_file
from chattts_studio.core.serve.request import (
    ERROR_SCHEMA,
    LEVEL_DEFAULTS,
    MAX_INSTRUCTIONS,
    MODEL_IDS,
    parse_body,
    read_fields,
    sampling_for,
    speech_schema,
    speed_token,
)
from chattts_studio.core.serve.sse import SpeechEvents
from chattts_studio.core.serve.stream import Reply, StreamAborted, StreamLimits, respond
from chattts_studio.core.serve.voices import ApiVoices
from chattts_studio.core.voices.blend import MAX_PARTS
from chattts_studio.core.voices.speaker_file import MAX_NAME
from chattts_studio.core.voices.voice import OPENAI_VOICES

log = logging.getLogger("chattts_studio")
VOICE_MARGIN = 16  # characters over the longest embedding string, in case an encoder pads
BLEND_MARGIN = 16  # a part's weight ("*0.333333") and the "+" between parts, spaced
CAPTIONED = "/v1/audio/captioned_speech"


@dataclass(frozen=True)
class ServeLimits:
    max_input_chars: int = 4096  # OpenAI's own limit
    # None: the largest body the other limits allow (body_limit); a fixed 64 KiB refused
    # documented inputs (an 8-part embedding blend with 4,096 CJK characters is ~67 KB).
    max_body_bytes: int | None = None
    pause_seconds: float = 0.25  # silence between segments, as the app joins them
    # Connections and requests uvicorn takes at once (beyond: 503); None: 64 + the slots.
    max_connections: int | None = None
    keep_alive_seconds: int = 5  # an idle kept-alive connection is closed after this
    # Audio held for one client and how long it may read nothing (core/serve/stream.py).
    stream: StreamLimits = field(default_factory=StreamLimits)


# Bytes one character may take in a JSON body: \uXXXX, twice for a surrogate pair.
JSON_CHAR_BYTES = 12
OTHER_FIELDS_BYTES = 4096  # model, format, numbers, flags, the JSON's own punctuation


def body_limit(max_input_chars: int, max_voice: int) -> int:
    """The largest body a request within every field's limit can be: the input, the
    instructions and the voice at their longest, each character escaped, and the rest."""
    chars = max_input_chars + MAX_INSTRUCTIONS + max_voice
    return chars * JSON_CHAR_BYTES + OTHER_FIELDS_BYTES


class SpeechServer:
    """The app and what it serves from: one batcher over one loaded engine."""

    def __init__(
        self,
        engine: Engine,
        batcher: Batcher,
        api_key: str | None = None,
        limits: ServeLimits | None = None,
        access: Access | None = None,
    ) -> None:
        self.engine, self.batcher, self.api_key = engine, batcher, api_key
        self.limits = limits or ServeLimits()
        self.access = access or Access()
        self.metrics = ServerMetrics(batcher)
        model = engine.model
        self.hidden_size = model.hidden_size if model else 768
        # One voice's longest string, and a blend's: MAX_PARTS of them, weighted.
        self.max_part = max(MAX_NAME, speaker_string_limit(self.hidden_size) + VOICE_MARGIN)
        self.max_voice = MAX_PARTS * (self.max_part + BLEND_MARGIN)
        self.max_body = self.limits.max_body_bytes or body_limit(
            self.limits.max_input_chars, self.max_voice
        )
        self.app = self._build()

    @property
    def model_name(self) -> str | None:
        """The loaded model as clients see it: a folder's own name, never its path (which
        names the user)."""
        loaded = self.engine.loaded
        if loaded is None:
            return None
        info = loaded.info
        return info.folder.name if info.kind == "folder" else info.name

    @property
    def max_connections(self) -> int:
        return self.limits.max_connections or 64 + self.batcher.slots

    # -- the request's parts --------------------------------------------------------------
    def voice(self, name: str) -> tuple[SpeakerLike, int | None]:
        """(speaker, seed it came from or None) for a voice the API accepts (see
        core/serve/voices.py). Blocking (the library file, decoding): called off the event
        loop."""
        return ApiVoices(self.engine, self.hidden_size, self.max_part).voice(name)

    async def order(self, body: Any, captions: str | None = None) -> tuple[SpeechOrder, str, Reply]:
        """The request's SpeechOrder, response format and how it is answered, or ApiError
        naming the field. `captions`: the route's default (captioned_speech: json)."""
        names = (*MODEL_IDS, self.model_name or "chattts")
        fields = read_fields(
            body, names, self.limits.max_input_chars, self.max_voice, captions=captions
        )
        speaker, voice_seed = await run_in_threadpool(self.voice, fields.voice)
        seed = fields.seed if fields.seed is not None else voice_seed or 0
        headers: dict[str, str] = {}
        text, speed, levels = fields.text, speed_token(fields.speed), dict(LEVEL_DEFAULTS)
        if fields.instructions and fields.instructions.strip():
            reading = read_instructions(
                fields.instructions,
                fields.refine_text,
                fields.speed_given,
                frozenset(fields.levels),
            )
            headers[HEADER] = reading.header()
            speed = speed if reading.speed is None else reading.speed
            text = f"[laugh]{text}" if reading.laugh_token else text
            if reading.laugh is not None:
                levels["laugh"] = reading.laugh
            if reading.break_level is not None:
                levels["break"] = reading.break_level
        levels.update(fields.levels)
        sampling, refine = sampling_for(fields, self.batcher.sampling, levels)
        order = SpeechOrder(text, speaker, seed, speed, sampling, refine, fields.segment_size)
        framing = None
        if fields.stream_format == "sse":
            framing = SpeechEvents(fields.captions)
            headers["Cache-Control"] = "no-cache"  # proxies pass each event on as it comes
        return order, fields.fmt, Reply(framing, fields.captions, headers, len(fields.text))

    # -- the app ----------------------------------------------------------------------------
    def _build(self) -> FastAPI:
        app = FastAPI(title="ChatTTS Studio speech API", docs_url=None, redoc_url=None)
        app.add_middleware(_Guard, server=self)

        @app.exception_handler(HTTPException)
        async def http_error(_request: Request, exc: HTTPException) -> JSONResponse:
            # Starlette's own answers (an unknown route, a method it does not take), in
            # OpenAI's shape and with its own words, never the path asked for.
            sentence = _HTTP_SENTENCES.get(exc.status_code, "The request cannot be served.")
            return error_response(exc.status_code, sentence)

        @app.exception_handler(Exception)
        async def any_error(_request: Request, exc: Exception) -> JSONResponse:
            log.warning("request failed: %s", exc)  # the sentence only; no traceback to clients
            return error_response(500, "The server failed to make this request's audio.")

        errors = {
            "description": "An error",
            "content": {"application/json": {"schema": ERROR_SCHEMA}},
        }
        audio: dict[str, Any] = {"content": {kind: {} for kind in CONTENT_TYPES.values()}}
        body = speech_schema(
            (*MODEL_IDS, self.model_name or "chattts"), self.limits.max_input_chars, self.max_voice
        )
        for path in PAGE_FILES:  # the page to try the API (core/serve/page.py)
            app.get(path, include_in_schema=False, response_class=Response)(self.page)
        app.get("/health")(self.health)
        app.get("/metrics")(self.metrics_text)
        app.get("/v1/models")(self.models)
        app.get("/v1/audio/voices")(self.voices)
        audio["content"]["text/event-stream"] = {}  # stream_format: sse
        audio["content"]["application/json"] = {}  # captions
        request_body = {
            "requestBody": {"required": True, "content": {"application/json": {"schema": body}}}
        }
        app.post(
            "/v1/audio/speech",
            response_class=Response,
            responses={200: audio, "4XX": errors, "5XX": errors},
            openapi_extra=request_body,
        )(self.speech)
        app.post(
            CAPTIONED,
            response_class=Response,
            responses={200: audio, "4XX": errors, "5XX": errors},
            openapi_extra=request_body,
            description="/v1/audio/speech with captions (json unless the body asks for srt or "
            "vtt): the audio (base64) and its captions in one JSON body.",
        )(self.captioned)
        return app

    def refusal(self, scope: Scope) -> JSONResponse | None:
        """The key, the body's size and type, checked before any route reads anything."""
        path = str(scope.get("path", ""))
        headers = dict((k.lower(), v) for k, v in scope.get("headers", []))
        if self.api_key and path != "/health" and path not in PAGE_FILES:
            given = headers.get(b"authorization", b"")
            if not hmac.compare_digest(given, f"Bearer {self.api_key}".encode()):
                return error_response(
                    401,
                    "A valid API key is needed: Authorization: Bearer KEY.",
                    None,
                    "invalid_api_key",
                )
        length = headers.get(b"content-length")
        limit = self.max_body
        if length is not None and (not length.isdigit() or int(length) > limit):
            return error_response(413, f"The request body is larger than {limit} bytes.")
        if scope.get("method") == "POST" and not is_json(headers.get(b"content-type", b"")):
            # A page may POST text/plain anywhere without asking (no preflight): only a
            # JSON type, which a browser must ask for first, is read.
            return error_response(
                415, "The request body must be sent as Content-Type: application/json."
            )
        return None

    async def page(self, request: Request) -> Response:
        return await run_in_threadpool(page_file, request.url.path)

    async def health(self) -> dict[str, Any]:
        """Open to probes without the key: names the model, never its folder's path."""
        loaded = self.engine.loaded
        return {
            "status": "ok",
            "model": self.model_name,
            "device": loaded.device.id if loaded else None,
            "engine": loaded.engine.value if loaded else None,  # what runs the decode step
            # The page says so: random weights make noise with the real cost, never speech.
            "random_weights": loaded.info.random_weights if loaded else None,
            "queue": self.batcher.queue_length(),
            "active": self.batcher.active_requests(),
        }

    async def metrics_text(self) -> Response:
        return Response(self.metrics.text(), media_type="text/plain; version=0.0.4")

    async def models(self) -> dict[str, Any]:
        data = [
            {"id": name, "object": "model", "created": 0, "owned_by": "chattts-studio"}
            for name in MODEL_IDS
        ]
        return {"object": "list", "data": data}

    async def voices(self) -> dict[str, Any]:
        from chattts_studio.core.voices.speakers import SpeakerLibrary

        library = await run_in_threadpool(SpeakerLibrary.open_or_locked)
        named = [{"name": e.name, "seed": e.seed, "note": e.note} for e in library.entries]
        builtin = [{"name": n, "seed": s, "note": "OpenAI name"} for n, s in OPENAI_VOICES.items()]
        return {"voices": named + builtin}

    async def speech(self, request: Request) -> Response:
        return await self._speak(request, None)

    async def captioned(self, request: Request) -> Response:
        return await self._speak(request, "json")

    async def _speak(self, request: Request, captions: str | None) -> Response:
        try:
            body = parse_body(await self._body(request))
            order, fmt, reply = await self.order(body, captions)
            return await respond(
                request,
                self.batcher,
                order,
                fmt,
                self.limits.pause_seconds,
                self.limits.stream,
                reply,
            )
        except ApiError as exc:
            return error_response(exc.status, exc.message, exc.param, exc.code)

    async def _body(self, request: Request) -> bytes:
        """The body, read no further than the limit (a chunked upload has no length)."""
        data = bytearray()
        async for part in request.stream():
            data += part
            if len(data) > self.max_body:
                raise ApiError(413, f"The request body is larger than {self.max_body} bytes.")
        return bytes(data)


class _Guard:
    """Plain ASGI (not BaseHTTPMiddleware, which gets between a streaming response and the
    client's disconnect), before any route: who asks (Host, Origin), then CORS for a listed
    origin (its preflight answered there, without the key), then the key and the body's
    size and type; every answer counted."""

    def __init__(self, app: ASGIApp, server: SpeechServer) -> None:
        self.app, self.server = app, server
        self.cors = CORSMiddleware(
            self._checked,
            allow_origins=cors_origins(server.access),
            allow_methods=CORS_METHODS,
            allow_headers=["*"],  # OpenAI's browser client sends its own x-stainless-* headers
            expose_headers=[HEADER],  # what instructions did, readable by a listed page
            max_age=600,
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        status = [500]

        async def counting(message: Message) -> None:
            if message["type"] == "http.response.start":
                status[0] = int(message["status"])
            await send(message)

        refused = refusal(self.server.access, scope)
        started = [False]

        async def watched(message: Message) -> None:
            started[0] = started[0] or message["type"] == "http.response.start"
            await counting(message)

        try:
            await (refused or self.cors)(scope, receive, watched)
        except StreamAborted:
            raise  # planned: uvicorn ends the connection without the body's end
        except Exception as exc:
            # A bug: one line in the log and one sentence to the client, here, before
            # Starlette's outermost middleware would print the traceback (issue 32).
            log.warning("request failed: %s: %s", type(exc).__name__, exc)
            if not started[0]:
                sentence = "The server failed to make this request's audio."
                await error_response(500, sentence)(scope, receive, counting)
        finally:
            self.server.metrics.answered(str(scope.get("path", "")), status[0])

    async def _checked(self, scope: Scope, receive: Receive, send: Send) -> None:
        await (self.server.refusal(scope) or self.app)(scope, receive, send)


def is_json(content_type: bytes) -> bool:
    """Whether a Content-Type is application/json (any charset or other parameter)."""
    kind = content_type.split(b";", 1)[0].strip().lower()
    return kind == b"application/json"


_HTTP_SENTENCES = {
    404: "There is no such endpoint; the API serves /v1/audio/speech, "
    "/v1/audio/captioned_speech, /v1/models, /v1/audio/voices, /health and /metrics.",
    405: "This endpoint does not take that method.",
}


def uvicorn_server(server: SpeechServer, host: str, port: int, ready: Callable[[], None]) -> Any:
    """A uvicorn Server for the app (run() blocks; should_exit stops it); `ready` is called
    once it listens."""
    import uvicorn

    config = uvicorn.Config(
        server.app,
        host=host,
        port=port,
        log_level="warning",
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
