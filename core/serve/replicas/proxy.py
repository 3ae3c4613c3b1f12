"""Ray Serve's own routes (/-/routes, /-/healthz) behind the speech API's Host and Origin rules,
through the middlewares its proxy callback returns. `proxy_env` carries them to a local Ray; for a
cluster see docs/api.md.
"""

import json
import os
from typing import Any

from starlette.middleware import Middleware
from starlette.types import ASGIApp, Receive, Scope, Send

from chattts_studio.core.serve.access import Access, refusal

CALLBACK_ENV = "RAY_SERVE_HTTP_PROXY_CALLBACK_IMPORT_PATH"
CALLBACK = "chattts_studio.core.serve.replicas.proxy:middlewares"
ACCESS_ENV = "CHATTTS_STUDIO_PROXY_ACCESS"
SERVE_ROUTES = "/-/"  # Ray Serve's own paths; the app has none there


def proxy_env(access: Access) -> dict[str, str]:
    """The environment of a Ray whose proxies guard their own routes with `access`."""
    fields = {
        "host": access.host,
        "allow_hosts": list(access.allow_hosts),
        "allow_origins": list(access.allow_origins),
    }
    return {CALLBACK_ENV: CALLBACK, ACCESS_ENV: json.dumps(fields)}


def proxy_access() -> Access:
    """The access ACCESS_ENV holds; without it, this machine's names only."""
    given = os.environ.get(ACCESS_ENV)
    if not given:
        return Access()
    fields: dict[str, Any] = json.loads(given)
    return Access(
        str(fields.get("host", "127.0.0.1")),
        tuple(fields.get("allow_hosts", ())),
        tuple(fields.get("allow_origins", ())),
    )


def middlewares() -> list[Middleware]:
    """Ray Serve's proxy callback."""
    return [Middleware(ServeRoutesGuard, access=proxy_access())]


class ServeRoutesGuard:
    """Plain ASGI around the proxy: a request for one of Serve's own routes is refused as the
    app would refuse it (403, the app's sentence); everything else passes untouched, to be
    checked by the app in its replica."""

    def __init__(self, app: ASGIApp, access: Access) -> None:
        self.app, self.access = app, access

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and str(scope.get("path", "")).startswith(SERVE_ROUTES):
            refused = refusal(self.access, scope)
            if refused is not None:
                await refused(scope, receive, send)
                return
        await self.app(scope, receive, send)
