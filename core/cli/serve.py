"""`chattts-studio-cli serve`: the local speech API over one loaded model, through the serve
service (chattts_studio.core.services.serve); its key, host and origin checked first."""

import argparse
import ipaddress
import os
import socket
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from chattts_studio.core.cli import common
from chattts_studio.core.cli.common import err
from chattts_studio.core.errors import StudioError

KEY_ENV = "CHATTTS_STUDIO_API_KEY"
KEYS_HELP = f"""\
The API key clients must send, the first given of: --api-key-file PATH (the file's text,
blank space around it ignored), --api-key KEY, ${KEY_ENV}. Give --api-key-file or
--api-key, not both. Other users of this machine can read a command line with ps: prefer the
file or the variable to --api-key. Without a key the API listens only on this machine.
"""


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


def check_port(host: str, port: int) -> None:
    """Bind once ourselves, so a taken port is one sentence before the model loads."""
    try:
        family = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0][0]
        with socket.socket(family, socket.SOCK_STREAM) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            probe.bind((host, port))
    except OSError as exc:
        raise StudioError(f"Cannot listen on {host}:{port}: {exc.strerror or exc}.") from None


def api_key(args: argparse.Namespace) -> str | None:
    """The key the clients must send, by the precedence KEYS_HELP states; warns on stderr when
    it came from the command line."""
    from chattts_studio.core.serve.access import check_key, read_key_file

    if args.api_key_file is not None and args.api_key is not None:
        raise StudioError("Give --api-key-file or --api-key, not both.")
    if args.api_key_file is not None:
        return read_key_file(Path(args.api_key_file))
    if args.api_key is not None:
        err(
            "Warning: other users of this machine can read a key given with --api-key "
            f"(ps shows command lines); use --api-key-file PATH or ${KEY_ENV} instead."
        )
        key: str | None = args.api_key.strip()
    else:
        key = os.environ.get(KEY_ENV, "").strip() or None
    if key is not None:
        if not key:
            raise StudioError("The API key is empty.")
        check_key(key)
    return key


def check_origin(origin: str) -> str:
    """An --allow-origin as browsers send Origin: scheme://host[:port], nothing after."""
    parts = urlsplit(origin.strip())
    if parts.scheme not in ("http", "https") or not parts.netloc or parts.path not in ("", "/"):
        raise StudioError(
            f"--allow-origin {origin!r} is not a web page's origin; give its scheme, host "
            "and port, such as http://localhost:3000."
        )
    return origin.strip().rstrip("/")


def add_parser(sub: Any) -> None:
    """The `serve` command's options (its help line is the registry's, in main.py)."""
    serve = sub.add_parser(
        "serve",
        epilog=KEYS_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    serve.add_argument(
        "--host", default="127.0.0.1", help="address to listen on (default: 127.0.0.1)"
    )
    serve.add_argument("--port", type=int, default=8000)
    serve.add_argument(
        "--api-key-file",
        default=None,
        metavar="PATH",
        help="a file holding the key clients must send as 'Authorization: Bearer KEY'",
    )
    serve.add_argument(
        "--api-key",
        default=None,
        metavar="KEY",
        help=f"the key itself (readable by other users in ps; prefer --api-key-file or ${KEY_ENV})",
    )
    serve.add_argument(
        "--allow-host",
        action="append",
        default=[],
        metavar="NAME",
        help="also answer requests whose Host is NAME (a reverse proxy's or a LAN name); "
        "repeatable",
    )
    serve.add_argument(
        "--allow-origin",
        action="append",
        default=[],
        metavar="ORIGIN",
        help="let web pages from ORIGIN (e.g. http://localhost:3000) use the API, with CORS; "
        "pages from any other origin are refused; repeatable",
    )
    serve.add_argument(
        "--max-connections",
        type=int,
        default=None,
        help="connections and requests taken at once, beyond which clients get 503 "
        "(default: 64 + slots)",
    )
    serve.add_argument("--model", default="demo", help="demo, demo-full, official, or a folder")
    serve.add_argument("--device", default=None, help="cpu, cuda, cuda:N or mps")
    serve.add_argument("--precision", default="fp32", choices=["fp32", "fp16", "bf16", "int8"])
    common.add_engine_option(serve)
    serve.add_argument(
        "--slots",
        type=int,
        default=None,
        help="decoder rows shared by requests (default: on CUDA as many as free memory "
        "holds, up to 512; elsewhere 16)",
    )
    serve.add_argument(
        "--chunk-rows",
        type=int,
        default=None,
        help="on the CPU, rows computed together in each product (default 1: one client costs "
        "about what synth does; 16: 3.6x the throughput at 16 busy clients, a lone one about "
        "1.8x slower; measured in docs/performance.md); every response still equals the same "
        "request alone",
    )
    serve.add_argument("--queue", type=int, default=64, help="most requests waiting for a row")
    serve.add_argument("--max-input", type=int, default=4096, help="most characters per input")


def run(args: argparse.Namespace) -> int:
    from chattts_studio.core.engine.batcher import INT8_CHUNKS
    from chattts_studio.core.engine.decoder_pool import MAX_ROWS
    from chattts_studio.core.serve.access import Access
    from chattts_studio.core.serve.limits import ServeLimits
    from chattts_studio.core.services.serve import ServeOptions, SpeechService

    # Checked before the model loads: a refusal costs nothing.
    key = api_key(args)
    if not key and not is_loopback(args.host):
        raise StudioError(
            f"Refusing to listen on {args.host} without --api-key: anyone who can reach it "
            f"could use this machine; give --api-key-file PATH (or ${KEY_ENV}) or keep the "
            "default 127.0.0.1."
        )
    origins = tuple(check_origin(o) for o in args.allow_origin)
    if args.max_connections is not None and args.max_connections < 1:
        raise StudioError("--max-connections must be at least 1.")
    if not 1 <= args.port <= 65535:
        raise StudioError("The port must be between 1 and 65535.")
    slots_ok = args.slots is None or 1 <= args.slots <= MAX_ROWS
    if not slots_ok or not 1 <= args.queue <= 10_000 or args.max_input < 1:
        raise StudioError(
            f"--slots must be 1-{MAX_ROWS}, --queue 1-10000 and --max-input at least 1."
        )
    if args.chunk_rows is not None and not 1 <= args.chunk_rows <= 64:
        raise StudioError("--chunk-rows must be 1-64.")
    if args.chunk_rows is not None and args.chunk_rows > 1 and args.precision == "int8":
        raise StudioError(INT8_CHUNKS)
    common.check_engine_choice(args.device, args.precision, args.engine)
    check_port(args.host, args.port)
    engine = common.load_engine(args.model, args.device, args.precision, args.engine)
    options = ServeOptions(
        host=args.host,
        port=args.port,
        api_key=key,
        slots=args.slots,
        queue=args.queue,
        chunk_rows=args.chunk_rows,
        limits=ServeLimits(max_input_chars=args.max_input, max_connections=args.max_connections),
        access=Access(args.host, tuple(args.allow_host), origins),
    )
    url = f"http://{args.host}:{args.port}/v1"
    SpeechService(engine, options).serve(lambda: err(f"serving on {url} (Ctrl+C stops)"))
    return 0
