"""What every request passes before a route reads it: Host and Origin (access.py), CORS, the API
key, the body's size and type; every answer counted, and a route's bug answered in one sentence.
"""

import hmac
import logging
from typing import Protocol

from fastapi.responses import JSONResponse
from starlette.middleware.cors import CORSMiddleware
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from chattts_studio.core.serve.access import CORS_METHODS, Access, cors_origins, refusal
from chattts_studio.core.serve.errors import error_response
from chattts_studio.core.serve.instructions import HEADER
from chattts_studio.core.serve.metrics import ServerMetrics
from chattts_studio.core.serve.page import PAGE_FILES
from chattts_studio.core.serve.stream import StreamAborted

log = logging.getLogger("chattts_studio")


class GuardedServer(Protocol):
    """What the guard reads of the server (app.py's SpeechServer), at each request."""

    access: Access
    api_key: str | None
    max_body: int
    metrics: ServerMetrics


class Guard:
    """Plain ASGI (not BaseHTTPMiddleware, which gets between a streaming response and the
    client's disconnect), before any route: who asks (Host, Origin), then CORS for a listed
    origin (its preflight answered there, without the key), then the key and the body's
    size and type; every answer counted."""

    def __init__(self, app: ASGIApp, server: GuardedServer) -> None:
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
            # Starlette's outermost middleware would print the traceback.
            log.warning("request failed: %s: %s", type(exc).__name__, exc)
            if not started[0]:
                sentence = "The server failed to make this request's audio."
                await error_response(500, sentence)(scope, receive, counting)
        finally:
            self.server.metrics.answered(str(scope.get("path", "")), status[0])

    async def _checked(self, scope: Scope, receive: Receive, send: Send) -> None:
        await (request_refusal(self.server, scope) or self.app)(scope, receive, send)


def is_json(content_type: bytes) -> bool:
    """Whether a Content-Type is application/json (any charset or other parameter)."""
    kind = content_type.split(b";", 1)[0].strip().lower()
    return kind == b"application/json"


def request_refusal(server: GuardedServer, scope: Scope) -> JSONResponse | None:
    """The key, the body's size and type, checked before any route reads anything."""
    path = str(scope.get("path", ""))
    headers = dict((k.lower(), v) for k, v in scope.get("headers", []))
    if server.api_key and path != "/health" and path not in PAGE_FILES:
        given = headers.get(b"authorization", b"")
        if not hmac.compare_digest(given, f"Bearer {server.api_key}".encode()):
            return error_response(
                401,
                "A valid API key is needed: Authorization: Bearer KEY.",
                None,
                "invalid_api_key",
            )
    length = headers.get(b"content-length")
    limit = server.max_body
    if length is not None and (not length.isdigit() or int(length) > limit):
        return error_response(413, f"The request body is larger than {limit} bytes.")
    if scope.get("method") == "POST" and not is_json(headers.get(b"content-type", b"")):
        # A page may POST text/plain anywhere without asking (no preflight): only a
        # JSON type, which a browser must ask for first, is read.
        return error_response(
            415, "The request body must be sent as Content-Type: application/json."
        )
    return None
