"""`chattts-studio-cli serve`: the local speech API over one loaded model, through the serve
service (chattts_studio.core.serve.running.SpeechService); its key, host and origin checked
first."""

import argparse
import os
import socket
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from chattts_studio.core.cli import common
from chattts_studio.core.cli.common import err
from chattts_studio.core.errors import StudioError

if TYPE_CHECKING:
    from chattts_studio.core.serve.replicas.spec import ReplicaSpec, Sizing

KEY_ENV = "CHATTTS_STUDIO_API_KEY"
KEYS_HELP = f"""\
The API key clients must send, the first given of: --api-key-file PATH (the file's text,
blank space around it ignored), --api-key KEY, ${KEY_ENV}. Give --api-key-file or
--api-key, not both. Other users of this machine can read a command line with ps: prefer the
file or the variable to --api-key. Without a key the API listens only on this machine.
"""


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
        help="on the CPU, rows per product for requests that name `seed` (default 1: each is "
        "bit-identical to its solo run and a lone one costs what synth does; more: faster for "
        "many seeded clients, every response still its solo run's; requests without `seed` "
        "always share one product: docs/api.md)",
    )
    serve.add_argument("--queue", type=int, default=64, help="most requests waiting for a row")
    serve.add_argument("--max-input", type=int, default=4096, help="most characters per input")
    add_ray_options(serve)


def add_ray_options(serve: Any) -> None:
    ray = serve.add_argument_group(
        "on Ray Serve (pip install 'chattts-studio[cluster]'; docs/api.md)"
    )
    ray.add_argument(
        "--ray",
        nargs="?",
        const="",
        default=None,
        metavar="ADDRESS",
        help="serve the same API from replicas on a Ray cluster (HEAD:6379; none: start Ray "
        "on this machine): one model and one batch per replica, one replica per GPU, or per "
        "--ray-cpus-per-replica CPUs on a cluster without GPUs",
    )
    ray.add_argument(
        "--replicas",
        default="auto",
        metavar="N|auto",
        help="replicas to run (default auto: Ray Serve's autoscaler, from --min-replicas to "
        "--max-replicas by the requests each replica has in hand)",
    )
    ray.add_argument("--min-replicas", type=int, default=None, help="auto's least (default 1)")
    ray.add_argument(
        "--max-replicas", type=int, default=None, help="auto's most (default: all that fit)"
    )
    ray.add_argument(
        "--target-ongoing",
        type=int,
        default=None,
        help="requests per replica auto aims at (default: its decoder rows, a full batch)",
    )
    ray.add_argument(
        "--ray-cpus-per-replica",
        type=int,
        default=1,
        metavar="N",
        help="CPUs (torch threads) of each replica on a cluster without GPUs (default 1)",
    )
    ray.add_argument(
        "--write-config",
        default=None,
        metavar="FILE",
        help="write the replicas as a Ray Serve config for `serve deploy FILE` and stop; "
        "sized for the --ray cluster when given, else for this machine",
    )


def run(args: argparse.Namespace) -> int:
    from chattts_studio.core.engine.batch.batcher import INT8_CHUNKS
    from chattts_studio.core.engine.decoder_pool import MAX_ROWS
    from chattts_studio.core.serve.access import Access, open_only_with_key
    from chattts_studio.core.serve.limits import ServeLimits
    from chattts_studio.core.serve.running import ServeOptions, SpeechService

    # Checked before the model loads: a refusal costs nothing.
    key = api_key(args)
    open_only_with_key(args.host, key)
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
    if args.ray is not None or args.write_config is not None:
        # The device is the replicas' (a cluster's machines), not this one's: they check it.
        return run_replicas(args, key, origins)
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


def sizing(args: argparse.Namespace) -> "Sizing":
    from chattts_studio.core.serve.replicas.spec import Sizing

    if args.max_connections is not None:
        raise StudioError(
            "--max-connections is for one server; on Ray Serve, --slots and --queue bound "
            "what each replica takes."
        )
    replicas = None
    if args.replicas != "auto":
        if not args.replicas.isdigit() or int(args.replicas) < 1:
            raise StudioError("--replicas must be a whole number of at least 1, or auto.")
        replicas = int(args.replicas)
    counts = (args.min_replicas, args.max_replicas, args.target_ongoing)
    if any(n is not None and n < 1 for n in counts) or args.ray_cpus_per_replica < 1:
        raise StudioError(
            "--min-replicas, --max-replicas, --target-ongoing and --ray-cpus-per-replica "
            "must be at least 1."
        )
    if replicas is not None and any(n is not None for n in counts):
        raise StudioError("Give --replicas N or the autoscaler's bounds, not both.")
    if args.device not in (None, "cpu") and not args.device.startswith("cuda"):
        raise StudioError("On Ray, --device is cpu or cuda (one GPU per replica).")
    return Sizing(args.device, replicas, *counts)


def run_replicas(args: argparse.Namespace, key: str | None, origins: tuple[str, ...]) -> int:
    """`serve --ray [ADDRESS]` and `serve --write-config FILE`."""
    from chattts_studio.core.cluster import shutdown
    from chattts_studio.core.serve.replicas.proxy import proxy_env
    from chattts_studio.core.serve.replicas.spec import ReplicaSpec
    from chattts_studio.core.services.serve_replicas import ReplicaService

    plan = sizing(args)
    spec = ReplicaSpec(
        model=args.model,
        precision=args.precision,
        engine=args.engine,
        cpus=args.ray_cpus_per_replica,
        slots=args.slots,
        queue=args.queue,
        chunk_rows=args.chunk_rows,
        max_input=args.max_input,
        host=args.host,
        port=args.port,
        allow_hosts=tuple(args.allow_host),
        allow_origins=origins,
        api_key=key,
        api_key_file=str(Path(args.api_key_file).resolve()) if args.api_key_file else None,
    )
    if args.write_config is not None:
        return write_replica_config(args, spec, plan, key)
    if not args.ray:
        check_port(args.host, args.port)  # Ray starts here: its proxy listens on this machine
    # A local Ray's proxy guards Ray Serve's own routes as the app guards its own.
    service = ReplicaService(spec, plan, args.ray or None, local_env=proxy_env(spec.access()))
    url = f"http://{args.host}:{args.port}/v1"
    try:
        service.serve(
            lambda: err(f"serving on {url} from {_replicas(service.spec)} on Ray (Ctrl+C stops)")
        )
    finally:
        shutdown()  # whatever of a local Ray is left after the service's own close
    return 0


def write_replica_config(
    args: argparse.Namespace, spec: "ReplicaSpec", plan: "Sizing", key: str | None
) -> int:
    from chattts_studio.core.services.serve_replicas import write_config

    if args.ray is not None:
        from chattts_studio.core.cluster import connect, ray_module, shutdown

        started = connect(args.ray or None)
        try:
            resources = ray_module().cluster_resources()
        finally:
            if started:
                shutdown()
    else:
        resources = machine_resources()
    sized = plan.sized(spec, resources)
    write_config(sized, Path(args.write_config))
    err(
        f"wrote {args.write_config}: {_replicas(sized)}; "
        f"start it with `serve deploy {args.write_config}`"
    )
    if key is not None and spec.api_key_file is None:
        err(
            f"The config holds no key: set ${KEY_ENV} for every machine of the cluster "
            "(before `ray start`), or give --api-key-file PATH with the file at that path "
            "on each."
        )
    return 0


def machine_resources() -> dict[str, float]:
    """This machine as Ray would count it: its CPUs and its CUDA GPUs."""
    import torch

    gpus = torch.cuda.device_count() if torch.cuda.is_available() else 0
    return {"CPU": float(os.cpu_count() or 1), "GPU": float(gpus)}


def _replicas(spec: "ReplicaSpec") -> str:
    scaling = spec.scaling
    where = "GPU" if spec.gpu else f"{spec.cpus} CPU(s)"
    if scaling.replicas is not None:
        return f"{scaling.replicas} replica(s), {where} each"
    return f"{scaling.min_replicas}-{scaling.max_replicas} replicas (autoscaled), {where} each"
