"""The page at GET / that tries the API from a browser: static files from
chattts_studio.resources.web, served without the key (they hold no secret) under a strict
Content-Security-Policy.
"""

from importlib.resources import files

from fastapi.responses import Response

from chattts_studio.core.serve.errors import error_response

PAGE_FILES = {
    "/": ("index.html", "text/html; charset=utf-8"),
    "/page/page.js": ("page.js", "text/javascript; charset=utf-8"),
    "/page/page.css": ("page.css", "text/css; charset=utf-8"),
}
PAGE_HEADERS = {
    "Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; "
    "connect-src 'self'; media-src 'self' blob:; img-src 'self' data:; "
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-cache",
}


def page_file(path: str) -> Response:
    """One of the page's files, by the path it is served at."""
    entry = PAGE_FILES.get(path)
    if entry is None:
        return error_response(404, "There is no such file.")
    name, media_type = entry
    data = files("chattts_studio.resources.web").joinpath(name).read_bytes()
    return Response(data, media_type=media_type, headers=PAGE_HEADERS)
