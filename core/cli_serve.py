"""`chattts-studio-cli serve`: the local speech API (server.py) over one loaded model."""

import argparse
import ipaddress
import socket
from typing import Any

from .cli_common import err
from .errors import StudioError


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


def add_serve_parser(sub: Any) -> None:
    serve = sub.add_parser("serve", help="an OpenAI-compatible speech API on this machine")
    serve.add_argument(
        "--host", default="127.0.0.1", help="address to listen on (default: 127.0.0.1)"
    )
    serve.add_argument("--port", type=int, default=8000)
    serve.add_argument(
        "--api-key", default=None, help="required from clients as 'Authorization: Bearer KEY'"
    )
    serve.add_argument("--model", default="demo", help="demo, demo-full, official, or a folder")
    serve.add_argument("--device", default=None, help="cpu, cuda, cuda:N or mps")
    serve.add_argument("--precision", default="fp32", choices=["fp32", "fp16", "bf16", "int8"])
    serve.add_argument("--slots", type=int, default=16, help="decoder rows shared by requests")
    serve.add_argument("--queue", type=int, default=64, help="most requests waiting for a row")
    serve.add_argument("--max-input", type=int, default=4096, help="most characters per input")
    serve.set_defaults(func=cmd_serve)


def cmd_serve(args: argparse.Namespace) -> int:
    from .batcher import Batcher
    from .cli_common import load_engine
    from .server import ServeLimits, SpeechServer, serve_app

    # Checked before the model loads: a refusal costs nothing.
    if not args.api_key and not is_loopback(args.host):
        raise StudioError(
            f"Refusing to listen on {args.host} without --api-key: anyone who can reach it "
            "could use this machine; give --api-key KEY or keep the default 127.0.0.1."
        )
    if not 1 <= args.port <= 65535:
        raise StudioError("The port must be between 1 and 65535.")
    if not 1 <= args.slots <= 64 or not 1 <= args.queue <= 10_000 or args.max_input < 1:
        raise StudioError("--slots must be 1-64, --queue 1-10000 and --max-input at least 1.")
    check_port(args.host, args.port)
    engine = load_engine(args.model, args.device, args.precision)
    batcher = Batcher(engine, slots=args.slots, max_waiting=args.queue)
    server = SpeechServer(
        engine, batcher, args.api_key, ServeLimits(max_input_chars=args.max_input)
    )
    batcher.start()
    url = f"http://{args.host}:{args.port}/v1"
    try:
        serve_app(server, args.host, args.port, lambda: err(f"serving on {url} (Ctrl+C stops)"))
    finally:
        batcher.close()
    return 0
