"""The local speech API: OpenAI's `/v1/audio/speech` over one shared continuous batch.

Every error is a JSON body in OpenAI's shape ({"error": {"message", "type", "param", "code"}})
with one sentence, never a traceback. Audio streams as it is made for wav, pcm, mp3 and opus;
flac is sent whole (its encoder rewrites its header at the end). A client that goes away
cancels its request: the batcher frees its rows before the next step.
"""

import contextlib
import hmac
import json
import logging
import math
import socket
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .batcher import Batcher, SpeechOrder
from .chat import SpeakerLike
from .engine import Engine
from .errors import StudioError
from .server_audio import CONTENT_TYPES
from .server_errors import ApiError, error_response
from .server_metrics import ServerMetrics
from .server_stream import respond

log = logging.getLogger("chattts_studio")
MODEL_IDS = ("chattts", "tts-1", "tts-1-hd", "gpt-4o-mini-tts")
# OpenAI's voice names, so clients that only know them work: each is a fixed seed's speaker.
OPENAI_VOICES = {
    name: 1000 + i
    for i, name in enumerate(
        "alloy ash ballad coral echo fable onyx nova sage shimmer verse marin cedar".split()
    )
}


@dataclass(frozen=True)
class ServeLimits:
    max_input_chars: int = 4096  # OpenAI's own limit
    max_body_bytes: int = 64 * 1024
    pause_seconds: float = 0.25  # silence between segments, as the app joins them


def speed_token(speed: float) -> int:
    """OpenAI's speed (0.25-4, 1 normal) as ChatTTS's [speed_N] (0-9, 5 normal)."""
    return max(0, min(9, round(5 + 2 * math.log2(speed))))


class SpeechServer:
    """The app and what it serves from: one batcher over one loaded engine."""

    def __init__(
        self,
        engine: Engine,
        batcher: Batcher,
        api_key: str | None = None,
        limits: ServeLimits | None = None,
    ) -> None:
        self.engine, self.batcher, self.api_key = engine, batcher, api_key
        self.limits = limits or ServeLimits()
        self.metrics = ServerMetrics(batcher)
        self.app = self._build()

    # -- the request's parts --------------------------------------------------------------
    def voice(self, name: str) -> tuple[SpeakerLike, int | None]:
        """(speaker, seed it came from or None) for a voice the API accepts: an embedding
        string, or for a cloned library voice the Voice as synthesis reads it."""
        from .speakers import SpeakerLibrary

        entry = SpeakerLibrary.open_or_locked().get(name)
        if entry is not None:
            if entry.cloned:
                # Checked as synth checks a library voice (its transcript normalised the same
                # way), so the prompt, and with it the audio, is the one synth would make.
                try:
                    return self.engine.check_voice(entry.voice), entry.seed
                except StudioError as exc:
                    raise ApiError(
                        400, f"The voice '{name}' cannot be used: {exc}", "voice"
                    ) from None
            return entry.embedding, entry.seed
        seed: int | None = OPENAI_VOICES.get(name.lower())
        if name.startswith("seed:") and name[5:].isdigit():
            seed = int(name[5:])
        if seed is not None:
            if seed > 2**31 - 1:
                raise ApiError(400, "A voice seed must be below 2147483648.", "voice")
            return self.engine.sample_speaker(seed), seed
        if len(name) < 100:  # a name that is not in the library, not an embedding
            raise ApiError(
                400,
                f"Unknown voice '{name[:60]}': use a library speaker's name, seed:N, "
                "or a speaker embedding.",
                "voice",
            )
        try:
            return self.engine.check_speaker(name), None
        except StudioError as exc:
            raise ApiError(400, str(exc), "voice") from None

    def order(self, body: Any) -> tuple[SpeechOrder, str]:
        """The request's SpeechOrder and response format, or ApiError naming the field."""
        if not isinstance(body, dict):
            raise ApiError(400, "The request body must be a JSON object.")
        model = body.get("model")
        loaded = self.engine.loaded
        names = (*MODEL_IDS, loaded.info.name if loaded else "chattts")
        if not isinstance(model, str) or model not in names:
            raise ApiError(
                404 if isinstance(model, str) else 400,
                f"The model must be one of {', '.join(names)}.",
                "model",
                "model_not_found",
            )
        text = body.get("input")
        if not isinstance(text, str) or not text.strip():
            raise ApiError(400, "The input must be a non-empty string.", "input")
        if len(text) > self.limits.max_input_chars:
            raise ApiError(
                413,
                f"The input has {len(text)} characters; the limit is "
                f"{self.limits.max_input_chars}.",
                "input",
                "input_too_long",
            )
        voice = body.get("voice")
        if not isinstance(voice, str) or not voice.strip():
            raise ApiError(400, "The voice must be a string.", "voice")
        fmt = body.get("response_format", "mp3")
        if fmt not in CONTENT_TYPES:
            raise ApiError(
                400,
                f"The response_format must be one of {', '.join(CONTENT_TYPES)}.",
                "response_format",
            )
        speed = body.get("speed", 1.0)
        if (
            isinstance(speed, bool)
            or not isinstance(speed, int | float)
            or not (0.25 <= speed <= 4.0)
        ):
            raise ApiError(400, "The speed must be a number from 0.25 to 4.0.", "speed")
        speaker, voice_seed = self.voice(voice.strip())
        seed = body.get("seed", voice_seed if voice_seed is not None else 0)
        if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**31:
            raise ApiError(400, "The seed must be a whole number from 0 to 2147483647.", "seed")
        return SpeechOrder(text, speaker, seed, speed_token(float(speed))), fmt

    # -- the app ----------------------------------------------------------------------------
    def _build(self) -> FastAPI:
        app = FastAPI(title="ChatTTS Studio speech API", docs_url=None, redoc_url=None)
        app.add_middleware(_Guard, server=self)

        @app.exception_handler(Exception)
        async def any_error(_request: Request, exc: Exception) -> JSONResponse:
            log.warning("request failed: %s", exc)  # the sentence only; no traceback to clients
            return error_response(500, "The server failed to make this request's audio.")

        app.get("/health")(self.health)
        app.get("/metrics")(self.metrics_text)
        app.get("/v1/models")(self.models)
        app.get("/v1/audio/voices")(self.voices)
        app.post("/v1/audio/speech")(self.speech)
        return app

    def refusal(self, path: str, headers: dict[bytes, bytes]) -> JSONResponse | None:
        """The key and the body size, checked before any route reads anything."""
        if self.api_key and path != "/health":
            given = headers.get(b"authorization", b"")
            if not hmac.compare_digest(given, f"Bearer {self.api_key}".encode()):
                return error_response(
                    401,
                    "A valid API key is needed: Authorization: Bearer KEY.",
                    None,
                    "invalid_api_key",
                )
        length = headers.get(b"content-length")
        limit = self.limits.max_body_bytes
        if length is not None and (not length.isdigit() or int(length) > limit):
            return error_response(413, f"The request body is larger than {limit} bytes.")
        return None

    async def health(self) -> dict[str, Any]:
        loaded = self.engine.loaded
        return {
            "status": "ok",
            "model": loaded.info.name if loaded else None,
            "device": loaded.device.id if loaded else None,
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
        from .speakers import SpeakerLibrary

        library = SpeakerLibrary.open_or_locked()
        named = [{"name": e.name, "seed": e.seed, "note": e.note} for e in library.entries]
        builtin = [{"name": n, "seed": s, "note": "OpenAI name"} for n, s in OPENAI_VOICES.items()]
        return {"voices": named + builtin}

    async def speech(self, request: Request) -> Response:
        try:
            raw = await self._body(request)
            try:
                body = json.loads(raw)
            except (ValueError, UnicodeDecodeError):
                raise ApiError(400, "The request body is not valid JSON.") from None
            order, fmt = self.order(body)
            return await respond(request, self.batcher, order, fmt, self.limits.pause_seconds)
        except ApiError as exc:
            return error_response(exc.status, exc.message, exc.param, exc.code)

    async def _body(self, request: Request) -> bytes:
        """The body, read no further than the limit (a chunked upload has no length)."""
        data = bytearray()
        async for part in request.stream():
            data += part
            if len(data) > self.limits.max_body_bytes:
                raise ApiError(
                    413, f"The request body is larger than {self.limits.max_body_bytes} bytes."
                )
        return bytes(data)


class _Guard:
    """Plain ASGI (not BaseHTTPMiddleware, which gets between a streaming response and the
    client's disconnect): refusals before the app, and every answer counted."""

    def __init__(self, app: ASGIApp, server: SpeechServer) -> None:
        self.app, self.server = app, server

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        status = [500]

        async def counting(message: Message) -> None:
            if message["type"] == "http.response.start":
                status[0] = int(message["status"])
            await send(message)

        path = str(scope.get("path", ""))
        refused = self.server.refusal(path, dict(scope.get("headers", [])))
        try:
            await (refused or self.app)(scope, receive, counting)
        finally:
            self.server.metrics.answered(path, status[0])


def uvicorn_server(server: SpeechServer, host: str, port: int, ready: Callable[[], None]) -> Any:
    """A uvicorn Server for the app (run() blocks; should_exit stops it); `ready` is called
    once it listens."""
    import uvicorn

    config = uvicorn.Config(server.app, host=host, port=port, log_level="warning")
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


@contextlib.contextmanager
def serving_on_loopback(server: SpeechServer, batcher: Batcher) -> Iterator[int]:
    """Serve on a free 127.0.0.1 port in a thread (the benchmark's and the tests' server);
    yields the port; on leaving, stops uvicorn, then the batcher."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = int(probe.getsockname()[1])
    ready = threading.Event()
    uv = uvicorn_server(server, "127.0.0.1", port, ready.set)
    thread = threading.Thread(target=uv.run, name="speech-api", daemon=True)
    batcher.start()
    thread.start()
    try:
        if not ready.wait(60):
            raise RuntimeError("the speech API did not start")
        yield port
    finally:
        uv.should_exit = True
        thread.join(30)
        batcher.close()
