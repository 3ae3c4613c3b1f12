"""Who may use the speech API besides its key: a request is served only when its Host names this
server and its Origin, if any, is its own page or listed, since any page can reach loopback.
"""

import functools
import ipaddress
import secrets
import socket
from dataclasses import dataclass
from pathlib import Path

from fastapi.responses import JSONResponse
from starlette.types import Scope

from chattts_studio.core.errors import StudioError
from chattts_studio.core.messages import QT_TRANSLATE_NOOP, Sentence
from chattts_studio.core.serve.errors import error_response

LOOPBACK_NAMES = frozenset({"127.0.0.1", "localhost", "[::1]"})
CORS_METHODS = ("GET", "POST")
KEY_CHARS = frozenset(chr(c) for c in range(0x21, 0x7F))  # what a header value can carry as is


@dataclass(frozen=True)
class Access:
    """Who may use the API besides the key: the Host names and browser origins it accepts."""

    host: str = "127.0.0.1"  # the address served (bind address)
    allow_hosts: tuple[str, ...] = ()  # extra Host names (--allow-host)
    allow_origins: tuple[str, ...] = ()  # origins allowed with real CORS (--allow-origin)

    def host_allowed(self, header: str, port: int | None) -> bool:
        """Whether a request's Host header names this server, served on `port` (None: a
        socket without one, where only the name is checked)."""
        name, given_port = split_host(header)
        if name is None:
            return False
        if name in {split_host(h)[0] for h in self.allow_hosts}:
            return True  # the user's own name, as a reverse proxy forwards it (any port)
        if port is not None and given_port != port and not (given_port is None and port == 80):
            return False
        bound = _bracketed(self.host.lower())
        if name in LOOPBACK_NAMES or name == bound:
            return True
        if self.beyond_loopback:
            # DNS rebinding always needs a name the attacker controls, so an address typed as
            # a literal is safe to accept from other machines, and so is this machine's name.
            return _is_ip_literal(name) or name in _own_names()
        return False

    def serves_own_page_at(self, header: str) -> bool:
        """Whether a page loaded from this Host may call the API as our own page: only when
        the name cannot be re-pointed by anyone else (a loopback name, the bound address, an
        IP literal). This machine's name (spoofable over mDNS or a search domain on the LAN)
        and --allow-host names (a reverse proxy may serve other apps under the same name)
        are not enough: their origins must be listed with --allow-origin."""
        name, _ = split_host(header)
        if name is None:
            return False
        return (
            name in LOOPBACK_NAMES
            or name == _bracketed(self.host.lower())
            or (_is_ip_literal(name))
        )

    def origin_allowed(self, origin: str) -> bool:
        return normal_origin(origin) in {normal_origin(o) for o in self.allow_origins}

    @property
    def beyond_loopback(self) -> bool:
        """Whether the bound address reaches other machines (0.0.0.0, ::, a LAN address)."""
        try:
            return not ipaddress.ip_address(self.host.strip("[]")).is_loopback
        except ValueError:
            return self.host.lower() != "localhost"


def refusal(access: Access, scope: Scope) -> JSONResponse | None:
    """Who is asking, checked before anything else (the key included: a browser page must
    not even learn whether one is needed): a Host that names this server, and an Origin, if
    any, that was listed. A preflight for a listed origin passes on to CORS."""
    headers = [(k.lower(), v) for k, v in scope.get("headers", [])]
    hosts = [v.decode("latin-1") for k, v in headers if k == b"host"]
    server = scope.get("server")
    port = int(server[1]) if server and server[1] is not None else None
    if len(hosts) != 1 or not access.host_allowed(hosts[0], port):
        return error_response(
            403,
            "This server does not answer for that Host; start it with --allow-host NAME "
            "to accept a name it is reached by.",
            None,
            "host_not_allowed",
        )
    origins = [v.decode("latin-1") for k, v in headers if k == b"origin"]
    own = None
    if access.serves_own_page_at(hosts[0]):
        own = own_origin(str(scope.get("scheme", "http")), hosts[0])
    if any(normal_origin(o) != own and not access.origin_allowed(o) for o in origins):
        # Browsers add Origin to every cross-site request and to same-site POSTs: a page
        # nobody listed gets nothing, not even the answer to a preflight. Our own page (GET /)
        # gets through as itself; see own_origin for why no other page can.
        return error_response(
            403,
            "Requests from web pages are refused unless their origin is listed with "
            "--allow-origin.",
            None,
            "origin_not_allowed",
        )
    asked = dict(headers).get(b"access-control-request-method")
    preflight = bool(origins) and scope.get("method") == "OPTIONS" and asked is not None
    if preflight and bytes(asked or b"").decode("latin-1").upper() not in CORS_METHODS:
        return error_response(405, f"Only {' and '.join(CORS_METHODS)} are served.")
    return None


def own_origin(scheme: str, host: str) -> str:
    """The origin of a page this server served, as the request's own Host header names it:
    a browser sends exactly this as Origin from the page at GET / (its same-origin POSTs).
    A foreign page cannot pass for it: its Origin matches only if its name points here
    (rebinding), which the Host check has refused already (docs/reliability.md). The scheme
    is the one the request came by, so an https page behind a TLS proxy matches its own."""
    return normal_origin(f"{scheme}://{host.strip()}")


def cors_origins(access: Access) -> list[str]:
    return [normal_origin(o) for o in access.allow_origins]


def split_host(header: str) -> tuple[str | None, int | None]:
    """(lower-case name, port or None) of a Host header; (None, None) when malformed."""
    text = header.strip().lower()
    if not text or not text.isascii():
        return None, None
    if text.startswith("["):
        close = text.find("]")
        if close < 0:
            return None, None
        name, rest = text[: close + 1], text[close + 1 :]
        if rest and not rest.startswith(":"):
            return None, None
        port_text = rest[1:] if rest else None
    else:
        name, _, port_text = text.partition(":")
        port_text = port_text if ":" in text else None
    if port_text is None:
        return name, None
    if not port_text.isdecimal() or len(port_text) > 5:
        return None, None
    return name, int(port_text)


def normal_origin(origin: str) -> str:
    """An origin as browsers send it: scheme://host[:port], lower case, no trailing slash."""
    return origin.strip().lower().rstrip("/")


def _bracketed(host: str) -> str:
    """An IPv6 address as a Host header writes it."""
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


def _is_ip_literal(name: str) -> bool:
    try:
        ipaddress.ip_address(name.strip("[]") if name.startswith("[") else name)
    except ValueError:
        return False
    return True


@functools.cache
def _own_names() -> frozenset[str]:
    """This machine's host name, short and qualified (looked up once)."""
    name = socket.gethostname().lower()
    return frozenset({name, name.split(".")[0], f"{name}.local"})


def new_api_key() -> str:
    """A fresh key: 256 random bits, URL-safe, so it fits any header or config file."""
    return secrets.token_urlsafe(32)


def read_key_file(path: Path) -> str:
    """The API key kept in `path` (surrounding blank space ignored); StudioError when the file
    cannot be read, is empty, or holds what a header cannot carry."""
    try:
        key = Path(path).read_text(encoding="utf-8").strip()
    except (OSError, UnicodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise StudioError(
            Sentence(
                QT_TRANSLATE_NOOP("core", "Cannot read the API key file {path}: {reason}."),
                path=str(path),
                reason=reason,
            )
        ) from None
    if not key:
        raise StudioError(
            Sentence(QT_TRANSLATE_NOOP("core", "The API key file {path} is empty."), path=str(path))
        )
    check_key(key)
    return key


def check_key(key: str) -> None:
    """StudioError when `key` holds characters an Authorization header cannot carry as is."""
    if not set(key) <= KEY_CHARS:
        raise StudioError(
            Sentence(
                QT_TRANSLATE_NOOP(
                    "core",
                    "An API key may hold only visible ASCII characters, without spaces.",
                )
            )
        )


def is_loopback(host: str) -> bool:
    """Whether every address `host` names is this machine's own (127.x, ::1, localhost)."""
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        pass
    try:
        infos = socket.getaddrinfo(host, None)
    except OSError:
        return False
    return bool(infos) and all(ipaddress.ip_address(i[4][0]).is_loopback for i in infos)


def open_only_with_key(host: str, key: str | None) -> None:
    """StudioError when the API would listen beyond this machine with no key."""
    if not key and not is_loopback(host):
        raise StudioError(
            f"Refusing to listen on {host} without --api-key: anyone who can reach it "
            "could use this machine; give --api-key-file PATH (or $CHATTTS_STUDIO_API_KEY) or "
            "keep the default 127.0.0.1."
        )
