"""Reaching a Ray cluster (`pip install 'chattts-studio[cluster]'`) for manifest renders and the
speech API's replicas. Ray is imported only here, when one of them runs.

A local Ray (no address) stays on this machine: its node address is loopback, so every server it
runs listens on 127.0.0.1 only, and `shutdown()` stops it whole. A cluster reached by address keeps
its own settings. SIGINT and SIGTERM end a process on Ray within STOP_SECONDS (SignalWatch): Ray's
core swaps ray.init's SIGTERM handler for one that aborts, so connect() puts a Python one back."""

import atexit
import contextlib
import os
import secrets
import signal
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from chattts_studio.core.errors import StudioError

INSTALL = "pip install 'chattts-studio[cluster]' (on every machine of the cluster)"
# Ray gives a node its network address unless this is off (its default on Windows and macOS).
LOOPBACK_ENV = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"
# Marks every process a local start spawns (workers inherit it through the raylet).
SESSION_ENV = "CHATTTS_STUDIO_RAY_SESSION"
KILL_GRACE_SECONDS = 3.0  # between the polite signal to a leftover and the hard one
STOP_SECONDS = 15.0  # from a first SIGINT or SIGTERM to the exit, whatever the cleanup does
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


def ray_module() -> Any:
    """`ray`, or one sentence saying how to install it."""
    try:
        import ray
    except ImportError:
        raise StudioError(f"--ray needs Ray: {INSTALL}.") from None
    return ray


def reachable(address: str, timeout: float = 5.0) -> None:
    """A HOST:PORT address answers, or one sentence: Ray itself retries for minutes."""
    import socket

    host, _, port = address.rpartition(":")
    if "://" in address or not host or not port.isdigit():
        return  # "", "auto", ray://...: Ray's own rules
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=timeout).close()
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise StudioError(
            f"Cannot reach the Ray cluster at {address} ({reason.lower()}): start it with "
            "`ray start --head` there, or check the address."
        ) from None


def starts_local(address: str | None) -> bool:
    """Whether ray.init(address) would start a Ray instance here rather than join one: Ray's
    own rule (RAY_ADDRESS, else a cluster `ray start` recorded on this machine, else a new
    one)."""
    if address == "local":
        return True
    if address:
        return False
    try:
        from ray._private.services import canonicalize_bootstrap_address
    except ImportError:  # Ray moved it: the documented part of the rule
        return not os.environ.get("RAY_ADDRESS")
    return canonicalize_bootstrap_address(None) is None  # type: ignore[arg-type]


class LocalRay:
    """The Ray instance this process started: its processes, found by the session mark they
    inherit, as this process's descendants (on Linux this process adopts orphans while it
    runs, so a raylet's children stay in the tree when the raylet dies first), and not
    among the children this process had before."""

    def __init__(self) -> None:
        import psutil

        self.session = secrets.token_hex(8)
        self.before = set(psutil.Process().children(recursive=True))
        self.adopting = _adopt_orphans(True)

    def processes(self) -> list[Any]:
        import psutil

        found = {p for p in psutil.Process().children(recursive=True) if p not in self.before}
        for process in psutil.process_iter(["environ"]):
            if (process.info["environ"] or {}).get(SESSION_ENV) == self.session:
                found.add(process)
                with contextlib.suppress(psutil.Error):
                    found.update(process.children(recursive=True))
        found.discard(psutil.Process())
        return sorted(found, key=lambda p: p.pid)

    def kill(self) -> None:
        """Whatever of it still runs: SIGTERM, then SIGKILL after KILL_GRACE_SECONDS; every
        one waited for (those this process adopted are reaped, not left as zombies)."""
        import psutil

        leftovers = self.processes()
        for process in leftovers:
            with contextlib.suppress(psutil.Error):
                process.terminate()
        _, alive = psutil.wait_procs(leftovers, timeout=KILL_GRACE_SECONDS)
        for process in alive:
            with contextlib.suppress(psutil.Error):
                process.kill()
        psutil.wait_procs(alive, timeout=KILL_GRACE_SECONDS)
        if self.adopting:
            self.adopting = not _adopt_orphans(False)


class SignalWatch:
    """SIGINT and SIGTERM while this process is on Ray. The first raises in the main thread
    (KeyboardInterrupt, or SystemExit(143) for SIGTERM), so the caller's cleanup runs; if
    the process still runs STOP_SECONDS later, or at a second signal, `hard_stop()` runs and
    the process exits. A thread keeps the deadline, woken through signal.set_wakeup_fd, so
    it holds even while the main thread is stuck in native code."""

    def __init__(self, hard_stop: Callable[[], None]) -> None:
        """Made before ray.init: the handlers to give back are the ones before Ray's."""
        self.hard_stop = hard_stop
        self.previous = {sig: signal.getsignal(sig) for sig in STOP_SIGNALS}
        self.received = False
        self.installed = False
        self._old_wakeup = -1
        self._reader: socket.socket | None = None
        self._writer: socket.socket | None = None

    def install(self) -> bool:
        """From the main thread only (Python's rule for signal handlers); whether done."""
        if threading.current_thread() is not threading.main_thread():
            return False
        self._reader, self._writer = socket.socketpair()
        self._writer.setblocking(False)
        try:
            self._old_wakeup = signal.set_wakeup_fd(
                self._writer.fileno(), warn_on_full_buffer=False
            )
        except (ValueError, OSError):
            self._close()
            return False
        for sig in STOP_SIGNALS:
            signal.signal(sig, self._on_signal)
        self.installed = True
        threading.Thread(target=self._keep_deadline, name="ray-stop", daemon=True).start()
        return True

    def uninstall(self) -> None:
        if not self.installed:
            return
        self.installed = False
        if self._writer is not None:
            with contextlib.suppress(OSError):
                self._writer.send(b"\0")  # the deadline thread ends
        if threading.current_thread() is threading.main_thread():
            with contextlib.suppress(ValueError, OSError):
                signal.set_wakeup_fd(self._old_wakeup)
            for sig, handler in self.previous.items():
                signal.signal(sig, handler)
            if self._writer is not None:  # only once Python no longer writes to it
                self._writer.close()

    def _on_signal(self, signum: int, frame: Any) -> None:
        if self.received and self.installed:
            return  # the deadline thread has it: cleanup goes on until then
        self.received = True
        if signum == signal.SIGINT:
            raise KeyboardInterrupt
        raise SystemExit(128 + signum)

    def _keep_deadline(self) -> None:
        reader = self._reader
        assert reader is not None
        deadline: float | None = None
        seen: list[int] = []
        try:
            while True:
                left = None if deadline is None else max(0.0, deadline - time.monotonic())
                reader.settimeout(left)
                try:
                    got = reader.recv(64)
                except TimeoutError:
                    break
                if not got or 0 in got:
                    return  # uninstalled
                seen += [n for n in got if n in STOP_SIGNALS]
                if len(seen) >= 2:
                    break
                if seen and deadline is None:
                    deadline = time.monotonic() + STOP_SECONDS
            if not self.installed:
                return
            self.hard_stop()
            with contextlib.suppress(Exception):
                sys.stderr.write("stopped: Ray did not shut down in time\n")
                sys.stderr.flush()
            os._exit(128 + seen[0])
        finally:
            reader.close()

    def _close(self) -> None:
        for end in (self._reader, self._writer):
            if end is not None:
                end.close()


_local: LocalRay | None = None  # the Ray instance this process started, until it is stopped
_watch: SignalWatch | None = None  # while this process is on Ray


def connect(address: str | None, local_env: Mapping[str, str] | None = None, **init: Any) -> bool:
    """Join the cluster at `address` (None: RAY_ADDRESS, else a local instance Ray starts,
    listening on loopback only); True when this call started or joined Ray (the caller then
    calls shutdown()), False when this process was connected already. `init`: more ray.init
    arguments (num_cpus for a local one); `local_env`: more environment for the processes of
    a local one (a cluster's processes have their own)."""
    global _watch
    ray = ray_module()
    if ray.is_initialized():
        return False
    stop_local()  # a local Ray that someone's ray.shutdown() ended: its leftovers go now
    reachable(address or "")
    local = starts_local(address)
    watch = SignalWatch(hard_stop=_kill_local)
    try:
        if local:
            _start_local(ray, dict(local_env or {}), init)
        else:
            ray.init(address=address, log_to_driver=False, include_dashboard=False, **init)
    except (ConnectionError, ValueError, RuntimeError) as exc:
        shutdown()  # whatever ray.init had started
        where = address or "a local Ray instance"
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise StudioError(f"Cannot connect to the Ray cluster at {where}: {reason}") from None
    except BaseException:
        shutdown()
        raise
    _watch = watch if watch.install() else None
    return True


def _start_local(ray: Any, env: dict[str, str], init: dict[str, Any]) -> None:
    """ray.init for a new instance here, its processes on loopback and marked as ours."""
    global _local
    _local = LocalRay()
    env.update({LOOPBACK_ENV: "0", SESSION_ENV: _local.session})
    with _environment(env), _loopback_node():
        ray.init(
            address="local",
            log_to_driver=False,
            include_dashboard=False,
            dashboard_host="127.0.0.1",
            **init,
        )
    # Once; registered after Ray's own hook, so it runs first: ray.shutdown(), then leftovers.
    atexit.unregister(shutdown)
    atexit.register(shutdown)


def shutdown() -> None:
    """Leave Ray: ray.shutdown(), then what is left of a local Ray this process started is
    killed; SIGINT and SIGTERM are this process's own again."""
    ray = ray_module()
    try:
        if ray.is_initialized():
            ray.shutdown()
    finally:
        stop_local()


def stop_local() -> None:
    """Kill what is left of the local Ray this process started (after ray.shutdown(), or
    instead of it at a deadline), and give back the signal handlers. Safe to call again."""
    global _local, _watch
    local, _local = _local, None
    if local is not None:
        local.kill()
    watch, _watch = _watch, None
    if watch is not None:
        watch.uninstall()


def _kill_local() -> None:
    if _local is not None:
        _local.kill()


def local_processes() -> list[Any]:
    """The processes (psutil) of the local Ray this process started; none when it did not."""
    return _local.processes() if _local is not None else []


@contextlib.contextmanager
def _environment(env: Mapping[str, str]) -> Iterator[None]:
    """`env` set in this process while Ray starts its processes (they inherit it), then as
    it was."""
    before = {name: os.environ.get(name) for name in env}
    os.environ.update(env)
    try:
        yield
    finally:
        for name, value in before.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


@contextlib.contextmanager
def _loopback_node() -> Iterator[None]:
    """Ray read LOOPBACK_ENV when it was imported: this process picks the node's address
    from the constant it made of it."""
    from ray._private import ray_constants

    before = getattr(ray_constants, "ENABLE_RAY_CLUSTER", None)
    ray_constants.ENABLE_RAY_CLUSTER = False
    try:
        yield
    finally:
        ray_constants.ENABLE_RAY_CLUSTER = before


def _adopt_orphans(on: bool) -> bool:
    """Linux: make this process the subreaper of its descendants (or stop); whether done."""
    if not sys.platform.startswith("linux"):
        return False
    import ctypes

    PR_SET_CHILD_SUBREAPER = 36
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(PR_SET_CHILD_SUBREAPER, int(on), 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


def plan_actors(resources: dict[str, float], cpus_per_actor: int) -> tuple[int, bool]:
    """(actors, on GPUs): one per GPU when the cluster has any, else one per CPU group."""
    gpus = int(resources.get("GPU", 0))
    if gpus > 0:
        return gpus, True
    return int(resources.get("CPU", 0)) // max(1, cpus_per_actor), False
