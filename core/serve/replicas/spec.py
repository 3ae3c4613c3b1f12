"""What every replica of the speech API is made from, as plain data carried in `serve deploy`
configs. It imports neither Ray nor torch, so the CLI writes a config without either.
"""

import dataclasses
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from chattts_studio.core.errors import StudioError
from chattts_studio.core.serve.access import Access, check_key, read_key_file
from chattts_studio.core.serve.limits import ServeLimits

KEY_ENV = "CHATTTS_STUDIO_API_KEY"
APP_NAME = "chattts-studio"
DEPLOYMENT = "SpeechReplica"
BOARD = "ReplicaBoard"
# The import path `serve deploy` and `serve run` build the application from (its args: a spec).
IMPORT_PATH = "chattts_studio.core.serve.replicas.deployment:build"
REPLICA_HEADER = "x-replica"  # names the replica that answered: its id, as /health lists it
# The proxies' router (router.py): Ray Serve's own, with each choice counted at once.
ROUTER = "chattts_studio.core.serve.replicas.router:SpreadingRouter"


@dataclass(frozen=True)
class Scaling:
    """How many replicas: `replicas` fixed, or (replicas None) Ray Serve's autoscaler between
    the bounds, aiming at `target_ongoing` requests per replica."""

    replicas: int | None = None
    min_replicas: int = 1
    max_replicas: int = 1
    target_ongoing: int | None = None  # None: the replica's decoder rows (a full batch)

    def deployment_options(self, slots: int) -> dict[str, Any]:
        if self.replicas is not None:
            return {"num_replicas": self.replicas}
        return {
            "autoscaling_config": {
                "min_replicas": self.min_replicas,
                "max_replicas": self.max_replicas,
                "target_ongoing_requests": self.target_ongoing or slots,
            }
        }


@dataclass(frozen=True)
class ReplicaSpec:
    model: str = "demo"
    precision: str = "fp32"
    engine: str = "auto"
    gpu: bool = False  # one GPU per replica; else `cpus` CPUs (torch's threads)
    cpus: int = 1
    slots: int | None = None
    queue: int = 64
    chunk_rows: int | None = None
    max_input: int = 4096
    host: str = "127.0.0.1"  # the proxies' address: the Host rule follows it
    port: int = 8000
    allow_hosts: tuple[str, ...] = ()
    allow_origins: tuple[str, ...] = ()
    # The key: given (a direct `serve --ray`; never written to a config file), or read by each
    # replica from `api_key_file` on its own machine, else from $CHATTTS_STUDIO_API_KEY there.
    api_key: str | None = field(default=None, repr=False)
    api_key_file: str | None = None
    scaling: Scaling = field(default_factory=Scaling)

    @property
    def rows(self) -> int:
        """Decoder rows per replica as the batcher will size them off CUDA (16 by default);
        on a GPU the batcher sizes from free memory and this is only the autoscaler's aim."""
        return self.slots or 16

    def args(self, with_key: bool = True) -> dict[str, Any]:
        """The spec as a `serve deploy` application's args (JSON values only)."""
        out = dataclasses.asdict(self)
        out["allow_hosts"], out["allow_origins"] = list(self.allow_hosts), list(self.allow_origins)
        if not with_key or self.api_key is None:
            out.pop("api_key")
        return out

    @classmethod
    def from_args(cls, args: dict[str, Any]) -> "ReplicaSpec":
        """A spec from a config's args; StudioError naming an unknown or mistyped field."""
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(args) - known)
        if unknown:
            raise StudioError(f"The application's args have no field {unknown[0]!r}.")
        values = dict(args)
        try:
            values["scaling"] = Scaling(**values.get("scaling", {}))
            values["allow_hosts"] = tuple(values.get("allow_hosts", ()))
            values["allow_origins"] = tuple(values.get("allow_origins", ()))
            return cls(**values)
        except TypeError as exc:
            raise StudioError(f"The application's args are not a replica spec: {exc}.") from None

    def key(self) -> str | None:
        """The key clients must send, as this replica finds it (see `api_key`)."""
        if self.api_key is not None:
            key: str | None = self.api_key
        elif self.api_key_file is not None:
            key = read_key_file(Path(self.api_key_file))
        else:
            key = os.environ.get(KEY_ENV, "").strip() or None
        if key is not None:
            check_key(key)
        return key

    def access(self) -> Access:
        return Access(self.host, self.allow_hosts, self.allow_origins)

    def limits(self) -> ServeLimits:
        # Connections are Ray Serve's to bound (max_ongoing_requests, max_queued_requests).
        return ServeLimits(max_input_chars=self.max_input)

    def deployment_options(self) -> dict[str, Any]:
        """The replica deployment's Ray Serve options: its resources, its scaling, how many
        requests it takes at once (its rows and its queue: the batcher refuses beyond those
        with a 503 itself) and the router that sends each request to the replica with the
        fewest (router.py)."""
        resources = {"num_gpus": 1, "num_cpus": 1} if self.gpu else {"num_cpus": self.cpus}
        return {
            "ray_actor_options": resources,
            "max_ongoing_requests": self.rows + self.queue,
            # Beyond every replica's room, a bounded wait at the proxy, then 503s.
            "max_queued_requests": self.queue,
            "request_router_config": {"request_router_class": ROUTER},
            "max_constructor_retry_count": 3,  # a model that cannot load fails the deploy
            "graceful_shutdown_timeout_s": 30,
            "health_check_period_s": 5,
            **self.scaling.deployment_options(self.rows),
        }


@dataclass(frozen=True)
class Sizing:
    """The command line's choice of replicas, settled against a cluster's resources by
    `sized`: `device` None puts one replica on each GPU when there are any, else on the CPUs;
    `replicas` None lets the autoscaler choose between the bounds (by default one replica up
    to as many as the cluster has room for)."""

    device: str | None = None
    replicas: int | None = None
    min_replicas: int | None = None
    max_replicas: int | None = None
    target_ongoing: int | None = None

    def sized(self, spec: ReplicaSpec, resources: dict[str, float]) -> ReplicaSpec:
        """`spec` with its device and scaling for a cluster holding `resources`."""
        gpus = int(resources.get("GPU", 0))
        gpu = self.device.startswith("cuda") if self.device else gpus > 0
        room = gpus if gpu else int(resources.get("CPU", 0)) // max(1, spec.cpus)
        what = "GPU" if gpu else f"{spec.cpus} CPU(s)"
        if room < 1:
            raise StudioError(
                f"The Ray cluster has no room for one replica ({what} each); "
                + (
                    "add a GPU machine or give --device cpu."
                    if gpu
                    else "lower --ray-cpus-per-replica."
                )
            )
        wanted = max(self.replicas or 0, self.min_replicas or 0, self.max_replicas or 0)
        if wanted > room:
            raise StudioError(
                f"The Ray cluster has room for {room} replica(s) ({what} each), not {wanted}."
            )
        if self.replicas is not None:
            scaling = Scaling(replicas=self.replicas)
        else:
            low, high = self.min_replicas or 1, self.max_replicas or room
            if low > high:
                raise StudioError("--min-replicas must not exceed --max-replicas.")
            scaling = Scaling(None, low, high, self.target_ongoing)
        return dataclasses.replace(spec, gpu=gpu, scaling=scaling)
