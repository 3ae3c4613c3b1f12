"""The speech API under load: 1, 4, 16 concurrent clients against sequential requests.

    python -m chattts_studio.core.devtools.servebench [--model demo-full] [--clients 1,4,16]
    [--per-client 2] [--engine auto|torch|onnx] [--seeded] [--ray-replicas 1,2 [--ray-cpus N]]

Sequential is the engine alone (Engine.synthesize, one request after another); then the server on
127.0.0.1 with N clients, each sending its requests one after another. Throughput is audio seconds
per wall second; time to first byte is per request (pcm). Clients name a voice but no `seed`, so
they share products; --seeded makes each request exact. --ray-replicas runs the same clients
against Ray Serve replicas on a local Ray instance."""

import argparse
import http.client
import json
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

TEXTS = ["今天天气很好，我们去公园散步吧。", "Hello there, how are you today?", "明天见，谢谢你。"]


@dataclass(frozen=True)
class Row:
    name: str
    requests: int
    audio_seconds: float
    wall_seconds: float
    first_bytes: list[float]

    @property
    def throughput(self) -> float:
        return self.audio_seconds / self.wall_seconds if self.wall_seconds else 0.0


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def _request(port: int, text: str, seed: int, named: bool = False) -> tuple[float, int]:
    """(seconds to the first audio byte, bytes of audio) for one pcm request; `named`: it
    names its `seed` (the exact lane)."""
    fields = {"model": "chattts", "input": text, "voice": f"seed:{seed}", "response_format": "pcm"}
    body = json.dumps({**fields, "seed": seed} if named else fields)
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=3600)
    started = time.perf_counter()
    conn.request("POST", "/v1/audio/speech", body, {"Content-Type": "application/json"})
    response = conn.getresponse()
    if response.status != 200:
        raise RuntimeError(f"HTTP {response.status}: {response.read()[:200]!r}")
    first = response.read(1)
    ttfb = time.perf_counter() - started
    size = len(first) + len(response.read())
    conn.close()
    return ttfb, size


@dataclass(frozen=True)
class Stream:
    """One streamed request as its listener hears it: playback starts at the first byte."""

    first_audio: float  # seconds from sending to the first audio byte
    audio_seconds: float
    realtime: bool  # the audio never ran out before the next bytes came


UNDERRUN_SLACK_S = 0.05  # a late read by this much is the client's jitter, not an underrun


def stream_request(port: int, text: str, seed: int) -> Stream:
    """A pcm request read as it arrives, checked against playing it from the first byte."""
    body = json.dumps(
        {"model": "chattts", "input": text, "voice": f"seed:{seed}", "response_format": "pcm"}
    )
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
    started = time.perf_counter()
    conn.request("POST", "/v1/audio/speech", body, {"Content-Type": "application/json"})
    response = conn.getresponse()
    if response.status != 200:
        raise RuntimeError(f"HTTP {response.status}: {response.read()[:200]!r}")
    received, first, realtime = 0, 0.0, True
    while chunk := response.read1(1 << 16):
        now = time.perf_counter()
        if not received:
            first = now
        elif now - first > received / 2 / 24_000 + UNDERRUN_SLACK_S:
            realtime = False  # what had come was played out before this arrived
        received += len(chunk)
    conn.close()
    return Stream(first - started, received / 2 / 24_000, realtime)


def concurrent_streams(port: int, clients: int, text: str) -> list[Stream]:
    """`clients` streamed requests sent at once, each from its own thread."""
    got: list[Stream] = []
    failed: list[BaseException] = []
    barrier = threading.Barrier(clients)

    def client(c: int) -> None:
        barrier.wait()
        try:
            got.append(stream_request(port, text, 100 + c))
        except Exception as exc:  # counted as not real time
            failed.append(exc)

    threads = [threading.Thread(target=client, args=(c,)) for c in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return got + [Stream(float("inf"), 0.0, False)] * len(failed)


def realtime_streams(
    port: int, text: str, most: int, seconds: float, say: Callable[[str], None]
) -> dict[str, Any]:
    """The most concurrent clients that each hear their audio at least as fast as it plays:
    1, 2, 4, ... clients at once until one of them underruns, `most` is reached or the next
    round would not fit in `seconds` (a round costs at least the one before it)."""
    deadline = time.perf_counter() + seconds
    best: list[Stream] = []
    rounds: list[dict[str, Any]] = []
    clients, last = 1, 0.0
    while clients <= most and time.perf_counter() + 2 * last < deadline:
        began = time.perf_counter()
        streams = concurrent_streams(port, clients, text)
        last = time.perf_counter() - began
        ok = all(s.realtime for s in streams)
        firsts = [s.first_audio for s in streams]
        rounds.append(
            {"clients": clients, "realtime": ok, "wall_s": last,
             "first_audio_p95_s": percentile(firsts, 0.95)}
        )  # fmt: skip
        p95 = rounds[-1]["first_audio_p95_s"]
        say(f"{clients} streams: real time {ok}, p95 first audio {p95:.3f} s")
        if not ok:
            break
        best = streams
        clients = most if clients < most < 2 * clients else 2 * clients
    firsts = [s.first_audio for s in best]
    return {
        "realtime_streams": len(best),
        "first_audio_p50_s": percentile(firsts, 0.5) if best else None,
        "first_audio_p95_s": percentile(firsts, 0.95) if best else None,
        "audio_s_per_stream": best[0].audio_seconds if best else None,
        "rounds": rounds,
        "capped": bool(best) and len(best) >= most,
    }


def _clients(port: int, clients: int, per_client: int, seeded: bool = False) -> Row:
    first: list[float] = []
    sizes: list[int] = []
    lock = threading.Lock()
    barrier = threading.Barrier(clients)

    def client(c: int) -> None:
        barrier.wait()
        for r in range(per_client):
            i = c * per_client + r
            ttfb, size = _request(port, TEXTS[i % len(TEXTS)], 100 + i, seeded)
            with lock:
                first.append(ttfb)
                sizes.append(size)

    threads = [threading.Thread(target=client, args=(c,)) for c in range(clients)]
    started = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - started
    audio = sum(sizes) / 2 / 24_000
    lane = ", seeded" if seeded else ""
    return Row(f"server, {clients} client(s){lane}", len(sizes), audio, wall, first)


def _sequential(engine: object, count: int) -> Row:
    from chattts_studio.core.engine.engine import Engine
    from chattts_studio.core.engine.request import SynthesisRequest, join_audio

    assert isinstance(engine, Engine)
    first: list[float] = []
    audio = 0.0
    # Once untimed: first calls pay one-time costs (allocator, kernels) no request should.
    list(engine.synthesize(SynthesisRequest(TEXTS[0], refine_text=False)))
    started = time.perf_counter()
    for i in range(count):
        request = SynthesisRequest(TEXTS[i % len(TEXTS)], seed=100 + i, refine_text=False)
        begun = time.perf_counter()
        heard: list[float] = []

        def listen(_event: object, heard: list[float] = heard) -> None:
            heard.append(time.perf_counter())

        results = list(engine.synthesize(request, listen))
        first.append((heard[0] if heard else time.perf_counter()) - begun)
        audio += len(join_audio(results)) / 24_000
    return Row("sequential (engine alone)", count, audio, time.perf_counter() - started, first)


def replica_rows(
    model: str,
    replicas: list[int],
    clients: list[int],
    per_client: int,
    slots: int,
    cpus: int,
    chunk_rows: int | None,
    say: Callable[[str], None],
) -> list[Row]:
    """The clients against 1, 2, ... replicas of `serve --ray` on a local Ray instance."""
    import socket

    from chattts_studio.core.cluster import connect, shutdown
    from chattts_studio.core.serve.replicas.spec import ReplicaSpec, Sizing
    from chattts_studio.core.services.serve_replicas import ReplicaService

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = int(probe.getsockname()[1])
    spec = ReplicaSpec(model=model, cpus=cpus, slots=slots, chunk_rows=chunk_rows, port=port)
    rows: list[Row] = []
    connect(None, num_cpus=max(replicas) * cpus)  # a local Ray, on loopback only
    try:
        for count in replicas:
            service = ReplicaService(spec, Sizing("cpu", replicas=count))
            service.start()
            try:
                _request(port, TEXTS[0], 1)  # untimed: one-time costs
                for n in clients:
                    before = _served(port)
                    row = _clients(port, n, per_client)
                    time.sleep(2)  # every replica's figures reported (board.REPORT_SECONDS)
                    split = [after - before.get(rid, 0) for rid, after in _served(port).items()]
                    rows.append(
                        Row(f"ray {count} replica(s), {n} client(s)", row.requests,
                            row.audio_seconds, row.wall_seconds, row.first_bytes)
                    )  # fmt: skip
                    say(format_table(rows) + f"\n  requests per replica: {split}")
            finally:
                service.close()
    finally:
        shutdown()
    return rows


def _served(port: int) -> dict[str, int]:
    """Requests each replica has taken, from /health."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    conn.request("GET", "/health")
    replicas = json.loads(conn.getresponse().read())["replicas"]
    conn.close()
    return {r["id"]: r["requests"] for r in replicas}


def format_table(rows: list[Row]) -> str:
    base = rows[0].throughput or 1.0
    lines = [
        f"{'scenario':28} {'req':>4} {'audio s':>8} {'wall s':>8} {'audio s/s':>9} "
        f"{'x seq':>6} {'TTFB p50':>9} {'TTFB p95':>9}"
    ]
    for r in rows:
        lines.append(
            f"{r.name:28} {r.requests:>4} {r.audio_seconds:>8.2f} {r.wall_seconds:>8.2f} "
            f"{r.throughput:>9.3f} {r.throughput / base:>6.2f} "
            f"{percentile(r.first_bytes, 0.5):>8.2f}s {percentile(r.first_bytes, 0.95):>8.2f}s"
        )
    return "\n".join(lines)


def run(
    model: str,
    clients: list[int],
    per_client: int,
    sequential: int,
    slots: int,
    say: Callable[[str], None],
    chunk_rows: int | None = None,
    engine_kind: str = "auto",
    seeded: bool = False,
) -> list[Row]:
    from chattts_studio.core.engine.batch.batcher import Batcher
    from chattts_studio.core.engine.engine import Engine
    from chattts_studio.core.serve.app import SpeechServer
    from chattts_studio.core.serve.running import serving_on_loopback

    engine = Engine()
    device = "cpu" if model.startswith("demo") else None
    loaded = engine.load(model, device, engine=engine_kind)
    say(f"model {loaded.info.label} on {loaded.device.id}, engine {loaded.engine.value}")
    rows = [_sequential(engine, sequential)]
    say(format_table(rows))
    batcher = Batcher(engine, slots=slots, max_waiting=max(64, max(clients)), chunk_rows=chunk_rows)
    server = SpeechServer(engine, batcher)
    try:
        with serving_on_loopback(server, batcher) as port:
            _request(port, TEXTS[0], 1)  # untimed, as for the engine
            for n in clients:
                rows.append(_clients(port, n, per_client, seeded))
                say(format_table(rows))
    finally:
        engine.unload()
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="servebench", description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="demo-full")
    parser.add_argument("--clients", default="1,4,16", help="comma-separated client counts")
    parser.add_argument("--per-client", type=int, default=2, help="requests each client sends")
    parser.add_argument("--sequential", type=int, default=4, help="requests in the baseline")
    parser.add_argument("--slots", type=int, default=16, help="the server's decoder rows")
    parser.add_argument(
        "--chunk-rows", type=int, default=None, help="the CPU's exact step: rows per product"
    )
    parser.add_argument("--engine", default="auto", choices=["auto", "torch", "onnx"])
    parser.add_argument(
        "--seeded", action="store_true", help="clients name `seed`: exact, not shared, rows"
    )
    parser.add_argument("--ray-replicas", default=None, help="e.g. 1,2: replicas on Ray Serve")
    parser.add_argument("--ray-cpus", type=int, default=1, help="CPUs per replica")
    args = parser.parse_args(argv)
    try:
        counts = [int(c) for c in args.clients.split(",") if c]
        replicas = [int(c) for c in (args.ray_replicas or "").split(",") if c]
    except ValueError:
        print("--clients and --ray-replicas take whole numbers separated by commas, e.g. 1,4,16",
              file=sys.stderr)  # fmt: skip
        return 2
    say = lambda line: print(line, file=sys.stderr, flush=True)  # noqa: E731
    if replicas:
        rows = replica_rows(
            args.model, replicas, counts, args.per_client, args.slots, args.ray_cpus,
            args.chunk_rows, say,
        )  # fmt: skip
        print(format_table(rows))
        return 0
    rows = run(
        args.model,
        counts,
        args.per_client,
        args.sequential,
        args.slots,
        say,
        args.chunk_rows,
        args.engine,
        args.seeded,
    )
    print(format_table(rows))
    print(f"total audio s/s at {counts[-1]} clients vs sequential: "
          f"{rows[-1].throughput / (rows[0].throughput or 1.0):.2f}x")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
