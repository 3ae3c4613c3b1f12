"""`serve --ray` on a Ray it starts itself, as a user runs it (a child process): every server
of that Ray listens on loopback only, Ray Serve's own routes keep the app's Host and Origin
rules, and SIGTERM or SIGINT end the command within seconds with nothing of its Ray left
running (core/cluster.py). Marked `ray`: each case starts and stops its own local Ray. The
deadline behind the exit is tested first, without Ray, on a cleanup stuck in native code."""

import ipaddress
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import httpx2 as httpx
import psutil
import pytest

from chattts_studio.core.child_process import child_env, run_python
from chattts_studio.core.cluster import STOP_SECONDS

READY = "serving on http://127.0.0.1:"
START_SECONDS = 240  # Ray, Serve, one replica loading the demo weights, on a busy 2-core box
EXIT_SECONDS = STOP_SECONDS + 10  # the deadline, and the interpreter's own exit


STUCK = """
import ctypes, os, signal, sys, time
from chattts_studio.core import cluster
cluster.STOP_SECONDS = 1.0
watch = cluster.SignalWatch(hard_stop=lambda: print("killed Ray", flush=True))
assert watch.install()
try:
    os.kill(os.getpid(), signal.SIG{first})
    time.sleep(30)
except (SystemExit, KeyboardInterrupt) as exc:
    print("cleanup after", type(exc).__name__, flush=True)
    {then}
    ctypes.CDLL(None).sleep(30)  # a cleanup stuck in native code: no Python handler runs
print("not reached", flush=True)
"""


@pytest.mark.parametrize(
    ("first", "then", "code"),
    [
        ("TERM", "pass", 128 + signal.SIGTERM),  # the deadline, one second later
        ("INT", "os.kill(os.getpid(), signal.SIGTERM)", 128 + signal.SIGINT),  # a second signal
    ],
    ids=["deadline", "second-signal"],
)
def test_a_stuck_cleanup_is_cut_short_and_ray_killed(first: str, then: str, code: int) -> None:
    started = time.monotonic()
    done = run_python([sys.executable, "-c", STUCK.format(first=first, then=then)], timeout=60)
    took = time.monotonic() - started
    assert done.returncode == code, done.stderr
    exception = "SystemExit" if first == "TERM" else "KeyboardInterrupt"
    assert done.stdout.split("\n")[:2] == [f"cleanup after {exception}", "killed Ray"]
    assert took < 20, took  # not the 30 s the cleanup would have taken


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def listening(processes: list[psutil.Process]) -> list[tuple[str, int, str]]:
    """(address, port, process name) of every TCP socket the processes listen on."""
    pids = {p.pid: p for p in processes}
    found = []
    for conn in psutil.net_connections("tcp"):
        if conn.status == psutil.CONN_LISTEN and conn.pid in pids:
            with_name = pids[conn.pid]
            try:
                name = with_name.name()
            except psutil.Error:
                name = "?"
            found.append((conn.laddr.ip, conn.laddr.port, name))
    return sorted(found)


def is_loopback(address: str) -> bool:
    ip = ipaddress.ip_address(address.split("%")[0])
    mapped = getattr(ip, "ipv4_mapped", None)
    return bool((mapped or ip).is_loopback)


def alive(processes: list[psutil.Process]) -> list[psutil.Process]:
    left = []
    for process in processes:
        try:
            if process.is_running() and process.status() != psutil.STATUS_ZOMBIE:
                left.append(process)
        except psutil.NoSuchProcess:
            pass
    return left


def _mentioning(text: str) -> list[psutil.Process]:
    """Processes whose command line names `text` (the session's Ray temp folder)."""
    found = []
    for process in psutil.process_iter(["cmdline"]):
        if any(text in part for part in process.info["cmdline"] or ()):
            found.append(process)
    return found


class Served:
    def __init__(self, process: subprocess.Popen[bytes], port: int, ray_dir: str, log: Path):
        self.process, self.port, self.ray_dir, self.log = process, port, ray_dir, log

    def tree(self) -> list[psutil.Process]:
        """The command and every process of its Ray (its descendants, and any process that
        names its Ray's temp folder)."""
        me = psutil.Process(self.process.pid)
        found = {me, *me.children(recursive=True), *_mentioning(self.ray_dir)}
        return sorted(found, key=lambda p: p.pid)

    def said(self) -> str:
        return self.log.read_text("utf-8", "replace")


@pytest.fixture
def served(demo_model: str, tmp_path: Path) -> Iterator[Served]:
    """`chattts-studio-cli serve --ray --port P` with one replica over the demo weights, in
    a child process with a private Ray temp folder (short: Ray's socket paths are bounded);
    yields once it says it is serving; anything still running at the end is killed."""
    ray_dir = tempfile.mkdtemp(prefix="ray-", dir="/tmp" if os.path.isdir("/tmp") else None)
    port = _free_port()
    log = tmp_path / "serve.log"
    argv = [sys.executable, "-m", "chattts_studio.core.cli.main", "serve", "--ray"]
    argv += ["--port", str(port), "--model", demo_model, "--replicas", "1", "--slots", "2"]
    argv += ["--device", "cpu", "--engine", "torch"]
    env = child_env({**os.environ, "RAY_TMPDIR": ray_dir})
    env.pop("RAY_ADDRESS", None)
    with log.open("wb") as out:
        process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=out, env=env)
    served = Served(process, port, ray_dir, log)
    seen: list[psutil.Process] = []
    try:
        deadline = time.monotonic() + START_SECONDS
        while READY not in served.said():
            assert process.poll() is None, f"serve --ray exited early:\n{served.said()}"
            assert time.monotonic() < deadline, f"serve --ray did not start:\n{served.said()}"
            time.sleep(0.5)
        seen = served.tree()
        yield served
    finally:
        for leftover in alive([*seen, *_mentioning(ray_dir)]):
            leftover.kill()
        if process.poll() is None:
            process.kill()
            process.wait(30)
        shutil.rmtree(ray_dir, ignore_errors=True)


def _exits_whole(served: Served, signum: int) -> int:
    """Send `signum`; the command's exit status, once nothing of its tree runs any more."""
    tree = served.tree()
    assert len(tree) > 5, [p.name() for p in tree]  # the command, GCS, raylet, agents, actors
    sent = time.monotonic()
    served.process.send_signal(signum)
    try:
        code = served.process.wait(EXIT_SECONDS)
    except subprocess.TimeoutExpired:
        pytest.fail(f"still running {EXIT_SECONDS} s after {signum}:\n{served.said()}")
    took = time.monotonic() - sent
    deadline = time.monotonic() + 5  # killed processes are gone, not yet reaped by init
    while alive(tree + _mentioning(served.ray_dir)) and time.monotonic() < deadline:
        time.sleep(0.2)
    left = [(p.pid, p.name()) for p in alive(tree + _mentioning(served.ray_dir))]
    assert left == [], f"left running after the exit ({took:.1f} s): {left}"
    return code


@pytest.mark.ray
def test_a_local_ray_listens_on_loopback_only_and_guards_serves_own_routes(
    served: Served,
) -> None:
    sockets = listening(served.tree())
    assert len(sockets) >= 8, sockets  # GCS, raylet, agents, metrics, workers, the proxy
    assert [s for s in sockets if not is_loopback(s[0])] == [], sockets
    assert ("127.0.0.1", served.port, "ray::ProxyActor") in sockets
    url = f"http://127.0.0.1:{served.port}"
    for path in ("/-/routes", "/-/healthz"):
        assert httpx.get(url + path, timeout=30).status_code == 200, path
        foreign = httpx.get(url + path, headers={"Host": "evil.example"}, timeout=30)
        assert foreign.status_code == 403, path
        assert foreign.json()["error"]["code"] == "host_not_allowed"
        page = httpx.get(url + path, headers={"Origin": "http://evil.example"}, timeout=30)
        assert page.status_code == 403, path
        assert page.json()["error"]["code"] == "origin_not_allowed"
    assert _exits_whole(served, signal.SIGTERM) == 128 + signal.SIGTERM


@pytest.mark.ray
def test_ctrl_c_ends_the_server_and_its_ray(served: Served) -> None:
    assert _exits_whole(served, signal.SIGINT) == 0
