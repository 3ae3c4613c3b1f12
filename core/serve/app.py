"""The local speech API: OpenAI's `/v1/audio/speech` over one shared continuous batch. Errors are
OpenAI's JSON shape with one sentence; audio streams as it is made; a client that leaves cancels
its request. See docs/api.md.
"""

import logging
import socket
from typing import Any, Protocol

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException

from chattts_studio.core.engine.batch.batcher import Batcher
from chattts_studio.core.engine.batch.tickets import SpeechOrder
from chattts_studio.core.engine.engine import Engine
from chattts_studio.core.engine.request import SpeakerLike
from chattts_studio.core.serve.access import Access
from chattts_studio.core.serve.audio import CONTENT_TYPES
from chattts_studio.core.serve.errors import ApiError, error_response
from chattts_studio.core.serve.guard import Guard
from chattts_studio.core.serve.instructions import HEADER, read_instructions
from chattts_studio.core.serve.limits import ServeLimits, body_limit
from chattts_studio.core.serve.metrics import Family, ServerMetrics, render
from chattts_studio.core.serve.page import PAGE_FILES, page_file
from chattts_studio.core.serve.replicas.board import ReplicaReport
from chattts_studio.core.serve.request import (
    ERROR_SCHEMA,
    LEVEL_DEFAULTS,
    MODEL_IDS,
    parse_body,
    read_fields,
    sampling_for,
    speech_schema,
    speed_token,
)
from chattts_studio.core.serve.sse import SpeechEvents
from chattts_studio.core.serve.stream import Reply, respond
from chattts_studio.core.serve.voices import ApiVoices
from chattts_studio.core.voices.blend import MAX_PARTS
from chattts_studio.core.voices.speaker_codec import speaker_string_limit
from chattts_studio.core.voices.speaker_file import MAX_NAME
from chattts_studio.core.voices.voice import OPENAI_VOICES

log = logging.getLogger("chattts_studio")
VOICE_MARGIN = 16  # characters over the longest embedding string, in case an encoder pads
BLEND_MARGIN = 16  # a part's weight ("*0.333333") and the "+" between parts, spaced
CAPTIONED = "/v1/audio/captioned_speech"


_HTTP_SENTENCES = {
    404: "There is no such endpoint; the API serves /v1/audio/speech, "
    "/v1/audio/captioned_speech, /v1/models, /v1/audio/voices, /health and /metrics.",
    405: "This endpoint does not take that method.",
}


class Peers(Protocol):
    """The replicas serving this same app behind Ray Serve (core/serve/replicas), this one
    included, for /health and /metrics; a server alone has none."""

    async def reports(self) -> list[ReplicaReport]: ...


class SpeechServer:
    """The app and what it serves from: one batcher over one loaded engine."""

    def __init__(
        self,
        engine: Engine,
        batcher: Batcher,
        api_key: str | None = None,
        limits: ServeLimits | None = None,
        access: Access | None = None,
        peers: Peers | None = None,
    ) -> None:
        self.engine, self.batcher, self.api_key = engine, batcher, api_key
        self.peers = peers
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
        # The API's equality promise (docs/api.md): a request that names `seed` is
        # bit-identical to its solo run whatever shares the batch; the others share products
        # for throughput.
        shared = fields.seed is None
        order = SpeechOrder(
            text, speaker, seed, speed, sampling, refine, fields.segment_size, shared
        )
        framing = None
        if fields.stream_format == "sse":
            framing = SpeechEvents(fields.captions)
            headers["Cache-Control"] = "no-cache"  # proxies pass each event on as it comes
        return order, fields.fmt, Reply(framing, fields.captions, headers, len(fields.text))

    # -- the app ----------------------------------------------------------------------------
    def _build(self) -> FastAPI:
        app = FastAPI(title="ChatTTS Studio speech API", docs_url=None, redoc_url=None)
        app.add_middleware(Guard, server=self)

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
            "vtt): the audio (base64), its captions and word timestamps ([{word, start_time, "
            "end_time, estimated}], as Kokoro-FastAPI's) in one JSON body.",
        )(self.captioned)
        return app

    async def page(self, request: Request) -> Response:
        return await run_in_threadpool(page_file, request.url.path)

    def report(self, replica_id: str = "local") -> ReplicaReport:
        """This server's figures now, as one replica's line (plain counters: any thread)."""
        stats = self.batcher.stats
        return ReplicaReport(
            replica_id,
            socket.gethostname(),
            stats.requests,
            stats.completed,
            stats.failed,
            self.batcher.active_requests(),
            self.batcher.queue_length(),
            tuple(self.metrics.families()),
        )

    async def _reports(self) -> list[ReplicaReport]:
        return await self.peers.reports() if self.peers is not None else [self.report()]

    async def health(self) -> dict[str, Any]:
        """Open to probes without the key: names the model, never its folder's path; one line
        per replica (a server alone is one), with the requests each has taken."""
        loaded = self.engine.loaded
        replicas = await self._reports()
        return {
            "status": "ok",
            "model": self.model_name,
            "device": loaded.device.id if loaded else None,
            "engine": loaded.engine.value if loaded else None,  # what runs the decode step
            # The page says so: random weights make noise with the real cost, never speech.
            "random_weights": loaded.info.random_weights if loaded else None,
            "queue": sum(r.queue for r in replicas),
            "active": sum(r.active for r in replicas),
            "replicas": [r.health() for r in replicas],
        }

    async def metrics_text(self) -> Response:
        if self.peers is None:
            text = self.metrics.text()
        else:  # every replica's figures, each labelled with its id
            by_replica: dict[str, list[Family]] = {
                r.id: list(r.families) for r in await self.peers.reports()
            }
            text = render(by_replica)
        return Response(text, media_type="text/plain; version=0.0.4")

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
