"""A load run of the speech API: many clients, some slow, some leaving, for a bounded time.

    python -m chattts_studio.core.devtools.loadrun [--clients 64] [--seconds 60] [--model demo]
    [--ray-replicas N]

The server (`serve`'s defaults) runs in this process on 127.0.0.1. A third of the clients read
fast, a third slowly, a third hang up at random points. It prints how each request ended, peak
memory against the idle server's and the tracebacks and ERROR lines logged, and exits 1 on any 5xx,
traceback, or growth over --max-growth-mb. --ray-replicas runs the clients against local Ray Serve
replicas."""

import argparse
import http.client
import json
import logging
import os
import random
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil

from chattts_studio.core import platforms

TEXTS = [
    "今天天气很好，我们去公园散步吧。",
    "Hello there, how are you today?",
    "明天见，谢谢你。我们下次再聊。",
    "。".join(["今天天气很好我们去公园散步"] * 4) + "。",
]
FORMATS = ["pcm", "pcm", "wav", "mp3", "opus", "flac"]
KINDS = ("fast", "slow", "leaving")


@dataclass
class Summary:
    clients: int
    seconds: float
    sent: int = 0
    served: int = 0  # answered 200 and read to the end
    left: int = 0  # hung up on purpose
    errors: Counter[str] = field(default_factory=Counter)  # kind or status -> count
    idle_rss: int = 0
    peak_rss: int = 0
    tracebacks: int = 0
    error_lines: int = 0
    audio_bytes: int = 0
    processes: int = 1  # the server's (replicas: one each); --max-growth-mb is per process

    @property
    def growth_mb(self) -> float:
        return (self.peak_rss - self.idle_rss) / 2**20

    def adds_up(self) -> bool:
        return self.sent == self.served + self.left + sum(self.errors.values())

    def text(self) -> str:
        errors = ", ".join(f"{k}: {n}" for k, n in sorted(self.errors.items())) or "none"
        return "\n".join(
            [
                f"clients {self.clients} ({', '.join(KINDS)} by thirds), {self.seconds:.0f} s",
                f"requests sent {self.sent}: served {self.served}, left on purpose "
                f"{self.left}, errors {sum(self.errors.values())} ({errors})",
                f"audio bytes received {self.audio_bytes}",
                f"RSS idle {self.idle_rss / 2**20:.0f} MB, peak {self.peak_rss / 2**20:.0f} MB "
                f"(+{self.growth_mb:.0f} MB over {self.processes} process(es))",
                f"tracebacks logged {self.tracebacks}, ERROR lines {self.error_lines}",
            ]
        )


class _LogCount(logging.Handler):
    """Counts what the server logs that no run should: tracebacks and ERROR lines."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.tracebacks = 0
        self.errors = 0

    def emit(self, record: logging.LogRecord) -> None:
        if record.exc_info or "Traceback" in record.getMessage():
            self.tracebacks += 1
        if record.levelno >= logging.ERROR:
            self.errors += 1


def _one(port: int, kind: str, rng: random.Random, index: int) -> tuple[str, int]:
    """One request: (outcome, audio bytes read); outcome is "served", "left" or an error."""
    body = json.dumps(
        {
            "model": "chattts",
            "input": rng.choice(TEXTS),
            "voice": f"seed:{index % 50}",
            "response_format": rng.choice(FORMATS),
        }
    )
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    read = 0
    try:
        conn.request("POST", "/v1/audio/speech", body, {"Content-Type": "application/json"})
        if kind == "leaving" and rng.random() < 0.3:
            return "left", 0  # before the first audio (the finally hangs up)
        response = conn.getresponse()
        if response.status != 200:
            response.read()
            return f"HTTP {response.status}", 0
        stop = rng.randrange(1, 200_000) if kind == "leaving" else None
        while True:
            part = response.read1(4096 if kind == "slow" else 65536)
            if not part:
                return "served", read
            read += len(part)
            if stop is not None and read >= stop:
                return "left", read
            if kind == "slow":
                time.sleep(0.02)  # ~200 KB/s: a little faster than pcm plays
    except http.client.IncompleteRead:
        return "aborted (incomplete body)", read
    except (ConnectionError, http.client.HTTPException, TimeoutError) as exc:
        return type(exc).__name__, read
    finally:
        conn.close()


def _own_rss() -> int:
    return int(psutil.Process().memory_info().rss)


def _watch_memory(summary: Summary, stop: threading.Event, rss: Callable[[], int]) -> None:
    while not stop.wait(0.1):
        summary.peak_rss = max(summary.peak_rss, rss())


def load(
    port: int, clients: int, seconds: float, seed: int = 0, rss: Callable[[], int] = _own_rss
) -> Summary:
    """Run the clients against a server on `port` for `seconds`; requests in flight at the
    end are read to their end. `rss`: the server's resident memory (this process's)."""
    summary = Summary(clients, seconds)
    # Idle, but warm: the first request pays one-time costs (allocator, kernels) once.
    _one(port, "fast", random.Random(seed), 0)
    summary.idle_rss = summary.peak_rss = rss()
    lock = threading.Lock()
    deadline = time.monotonic() + seconds
    stop = threading.Event()
    watcher = threading.Thread(target=_watch_memory, args=(summary, stop, rss), daemon=True)
    watcher.start()

    def client(c: int) -> None:
        rng = random.Random(seed * 100_003 + c)
        kind = KINDS[c % len(KINDS)]
        n = 0
        while time.monotonic() < deadline:
            outcome, read = _one(port, kind, rng, c * 1000 + n)
            n += 1
            with lock:
                summary.sent += 1
                summary.audio_bytes += read
                if outcome == "served":
                    summary.served += 1
                elif outcome == "left":
                    summary.left += 1
                else:
                    summary.errors[outcome] += 1
                    if outcome == "HTTP 429":  # a full queue: back off as a client should
                        time.sleep(0.2)

    threads = [threading.Thread(target=client, args=(c,), daemon=True) for c in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(seconds + 300)
    stop.set()
    watcher.join()
    return summary


def run(
    model: str,
    clients: int,
    seconds: float,
    say: Callable[[str], None],
    engine: Any = None,
) -> Summary:
    """A load run on a server started here (on `engine` when given, else `model` loaded)."""
    from chattts_studio.core.engine.batch.batcher import Batcher
    from chattts_studio.core.engine.engine import Engine
    from chattts_studio.core.serve.app import SpeechServer
    from chattts_studio.core.serve.running import serving_on_loopback

    own = engine is None
    if engine is None:
        engine = Engine()
        engine.load(model, "cpu" if model.startswith("demo") else None)
    assert isinstance(engine, Engine)
    counter = _LogCount()
    names = ("", "uvicorn", "uvicorn.error", "chattts_studio")
    for name in names:
        logging.getLogger(name).addHandler(counter)
    try:
        batcher = Batcher(engine, slots=16, max_waiting=64)
        server = SpeechServer(engine, batcher)
        with serving_on_loopback(server, batcher) as port:
            say(f"serving {model} on 127.0.0.1:{port}; {clients} clients for {seconds:g} s")
            summary = load(port, clients, seconds)
    finally:
        for name in names:
            logging.getLogger(name).removeHandler(counter)
        if own:
            engine.unload()
    summary.tracebacks, summary.error_lines = counter.tracebacks, counter.errors
    return summary


def _replica_processes() -> list[psutil.Process]:
    """The replicas' worker processes (Ray titles them ray::ServeReplica:APP:DEPLOYMENT)."""
    found = []
    for proc in psutil.process_iter(["cmdline"]):
        if "ServeReplica:chattts-studio:SpeechReplica" in " ".join(proc.info["cmdline"] or []):
            found.append(proc)
    return found


def ray_temp_folder(platform: str | None = None) -> Path:
    """Where a local Ray started without --temp-dir keeps its sessions, by Ray's own rule:
    $RAY_TMPDIR, else $TMPDIR on Linux, else /tmp on Linux and macOS, else the user's temp
    folder (Windows: %TEMP%, where /tmp does not exist)."""
    platform = platforms.PLATFORM if platform is None else platform
    linux = platform.startswith("linux")
    if os.environ.get("RAY_TMPDIR"):
        base = os.environ["RAY_TMPDIR"]
    elif linux and os.environ.get("TMPDIR"):
        base = os.environ["TMPDIR"]
    elif linux or platform.startswith("darwin"):
        base = "/tmp"
    else:
        base = tempfile.gettempdir()
    return Path(base) / "ray"


def _replica_logs() -> tuple[int, int]:
    """(tracebacks, ERROR lines) in this Ray session's replica log files."""
    tracebacks = errors = 0
    folder = ray_temp_folder() / "session_latest" / "logs" / "serve"
    for path in folder.glob("replica_chattts-studio_SpeechReplica_*"):
        for line in path.read_text("utf-8", errors="replace").splitlines():
            tracebacks += "Traceback" in line
            errors += " ERROR " in line
    return tracebacks, errors


def _warm_every_replica(port: int, replicas: int) -> None:
    """One request served by each replica before the idle memory is taken (as the single
    server's run warms its one): the router picks replicas, so send pairs until /health
    shows each has served one."""
    for round_ in range(20):
        pair = [threading.Thread(target=_one, args=(port, "fast", random.Random(round_), i))
                for i in range(2)]  # fmt: skip
        for t in pair:
            t.start()
        for t in pair:
            t.join()
        time.sleep(1.5)  # the replicas' reports (core/serve/replicas/board.py)
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        conn.request("GET", "/health")
        served = [r["completed"] for r in json.loads(conn.getresponse().read())["replicas"]]
        conn.close()
        if len(served) == replicas and min(served) >= 1:
            return


def run_replicas(
    model: str, replicas: int, clients: int, seconds: float, say: Callable[[str], None]
) -> Summary:
    """A load run on `replicas` replicas of `serve --ray` on a local Ray instance."""
    import socket

    from chattts_studio.core.cluster import connect, shutdown
    from chattts_studio.core.serve.replicas.spec import ReplicaSpec, Sizing
    from chattts_studio.core.services.serve_replicas import ReplicaService

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = int(probe.getsockname()[1])
    connect(None, num_cpus=replicas)  # a local Ray, on loopback only
    service = ReplicaService(ReplicaSpec(model=model, port=port), Sizing("cpu", replicas))
    try:
        service.start()
        processes = _replica_processes()
        say(f"{len(processes)} replicas of {model} on 127.0.0.1:{port}; {clients} clients")

        def rss() -> int:
            return sum(p.memory_info().rss for p in processes)

        _warm_every_replica(port, replicas)

        summary = load(port, clients, seconds, rss=rss)
        summary.tracebacks, summary.error_lines = _replica_logs()
        summary.processes = len(processes)
    finally:
        service.close()
        shutdown()
    return summary


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="loadrun", description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="demo")
    parser.add_argument("--clients", type=int, default=64)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--max-growth-mb", type=float, default=150.0, help="per process")
    parser.add_argument("--ray-replicas", type=int, default=0, help="replicas on Ray Serve")
    args = parser.parse_args(argv)
    if args.clients < 1 or args.seconds <= 0 or args.ray_replicas < 0:
        print("--clients must be at least 1, --seconds above 0.", file=sys.stderr)
        return 2
    say = lambda line: print(line, flush=True)  # noqa: E731
    if args.ray_replicas:
        summary = run_replicas(args.model, args.ray_replicas, args.clients, args.seconds, say)
    else:
        summary = run(args.model, args.clients, args.seconds, say)
    print(summary.text())
    server_errors = sum(n for k, n in summary.errors.items() if k.startswith("HTTP 5"))
    ok = not server_errors and not summary.tracebacks and summary.adds_up()
    ok = ok and summary.growth_mb / summary.processes <= args.max_growth_mb
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
