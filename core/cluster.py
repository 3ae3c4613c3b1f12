"""Reaching a Ray cluster (`pip install 'chattts-studio[cluster]'`), for the two things that
run on one: manifest renders (core/render/manifest/cluster.py) and the speech API's replicas
(core/serve/replicas). Ray is imported only here and only when one of them runs: core imports
without it."""

from typing import Any

from chattts_studio.core.errors import StudioError

INSTALL = "pip install 'chattts-studio[cluster]' (on every machine of the cluster)"


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


def connect(address: str | None, **init: Any) -> bool:
    """Join the cluster at `address` (None: RAY_ADDRESS, else a local instance Ray starts);
    True when this call started Ray (the caller then shuts it down), False when this process
    was connected already. `init`: more ray.init arguments (num_cpus for a local one)."""
    ray = ray_module()
    if ray.is_initialized():
        return False
    reachable(address or "")
    try:
        ray.init(
            address=address or None,
            log_to_driver=False,
            include_dashboard=False,
            **init,
        )
    except (ConnectionError, ValueError, RuntimeError) as exc:
        where = address or "a local Ray instance"
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise StudioError(f"Cannot connect to the Ray cluster at {where}: {reason}") from None
    return True


def plan_actors(resources: dict[str, float], cpus_per_actor: int) -> tuple[int, bool]:
    """(actors, on GPUs): one per GPU when the cluster has any, else one per CPU group."""
    gpus = int(resources.get("GPU", 0))
    if gpus > 0:
        return gpus, True
    return int(resources.get("CPU", 0)) // max(1, cpus_per_actor), False
