"""A manifest render spread over a Ray cluster (`pip install 'chattts-studio[cluster]'`).

One actor (ItemWorker: a loaded model, one continuous batch) per GPU or group of CPUs. The driver
hands out chunks of pending items, largest first, with every speaker and seed resolved, two in
flight per actor; a dead actor's chunk goes back to the queue. Actors send back encoded bytes and
the driver writes each file and journal line exactly once. The engine, precision and thread count
are settled on the driver, so each item's bits are a local render's."""

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from chattts_studio.core.cluster import connect, plan_actors, ray_module, shutdown
from chattts_studio.core.engine.cancel import CancelToken
from chattts_studio.core.engine.engine_choice import EngineKind
from chattts_studio.core.errors import Cancelled, StudioError
from chattts_studio.core.render.manifest.item_store import ItemEntry
from chattts_studio.core.render.manifest.items import WorkItem
from chattts_studio.core.render.manifest.run import (
    ItemResult,
    ItemWorker,
    ManifestJob,
    ManifestOptions,
)

MAX_RESTARTS = 3  # per actor; then it is left out of the run
IN_FLIGHT = 2  # chunks per actor at a time


@dataclass
class ClusterStats:
    actors: int = 0
    chunks: int = 0
    requeued: int = 0  # chunks given out again after their actor failed
    actor_failures: int = 0
    errors: list[str] = field(default_factory=list)


def workers_engine(gpu: bool, precision: str, engine: EngineKind | str) -> EngineKind:
    """The engine every worker runs, auto decided here by the rule a render here follows
    (engine_choice.py) for the workers' device: their CPUs, or a GPU each, where the onnx
    engine does not run. Judged by this installation: a worker without ONNX Runtime then
    fails with its own sentence."""
    from chattts_studio.core.engine.devices import check_precision, resolve_device
    from chattts_studio.core.engine.engine_choice import check_engine

    if not gpu:
        cpu = resolve_device("cpu")
        return check_engine(cpu, check_precision(cpu, precision), engine)
    if str(engine).lower() == EngineKind.ONNX:
        raise StudioError(
            "The onnx engine runs on the CPU; this Ray cluster's workers use its GPUs, so "
            "give --engine torch or auto."
        )
    return EngineKind.TORCH


def _threads_here() -> int:
    import torch

    return int(torch.get_num_threads())


def chunk_size(pending: int, actors: int) -> int:
    """Small enough that every actor gets several chunks (balance), at most 8 items."""
    return max(1, min(8, pending // max(1, actors * 4)))


class ClusterRender:
    """connect(), then run(job) (again: the actors and their models are kept), then close();
    `actors` are the Ray actor handles (tests kill one)."""

    def __init__(
        self,
        model: str,
        precision: str = "fp32",
        address: str | None = None,
        cpus_per_actor: int | None = None,
        actors: int | None = None,
        engine: EngineKind | str = EngineKind.AUTO,
        threads: int | None = None,
    ) -> None:
        """`engine`: auto, torch or onnx, settled by connect() for the workers' device (then
        `engine` is the one they run). `threads`: each CPU worker's torch and ONNX Runtime
        threads, by default `cpus_per_actor` when given, else this process's torch thread
        count; `cpus_per_actor`: the CPUs each worker takes on a cluster without GPUs, by
        default its threads."""
        for name, count in (("--ray-cpus-per-actor", cpus_per_actor), ("--threads", threads)):
            if count is not None and count < 1:
                raise StudioError(f"{name} must be 1 or more.")
        self.model, self.precision, self.address = model, precision, address
        try:
            self.engine = EngineKind(str(engine).lower())
        except ValueError:
            raise StudioError(f"Unknown engine '{engine}'; choose auto, torch or onnx.") from None
        self.threads = threads or cpus_per_actor or _threads_here()
        self.cpus_per_actor = cpus_per_actor or self.threads
        self.max_actors = actors
        self.actors: list[Any] = []
        self.gpu = False
        self.stats = ClusterStats()
        self._ray: Any = None
        self._started = False
        self._options: ManifestOptions | None = None
        self._flights: dict[Any, tuple[int, list[WorkItem]]] = {}  # ref -> (actor, chunk)

    def connect(self) -> None:
        """Join (or start) Ray and plan the workers: how many, on GPUs or CPUs, and the
        engine they run; StudioError, with Ray left again, when no worker fits."""
        ray = self._ray = ray_module()
        self._started = connect(self.address)
        try:
            count, self.gpu = plan_actors(ray.cluster_resources(), self.cpus_per_actor)
            if self.max_actors is not None:
                count = min(count, self.max_actors)
            if count < 1:
                raise StudioError(
                    f"The Ray cluster has no GPU and fewer than {self.cpus_per_actor} CPU(s) "
                    "for one worker; lower --ray-cpus-per-actor."
                )
            self.engine = workers_engine(self.gpu, self.precision, self.engine)
        except BaseException:
            self.close()
            raise
        self.stats.actors = count

    def _start_actors(self, options: ManifestOptions) -> None:
        ray = self._ray
        remote = ray.remote(
            num_cpus=0 if self.gpu else self.cpus_per_actor,
            num_gpus=1 if self.gpu else 0,
            max_restarts=MAX_RESTARTS,
            max_task_retries=0,  # the driver re-queues a failed chunk itself
            max_concurrency=IN_FLIGHT,
        )(ItemWorker)
        self.actors = [
            remote.remote(
                self.model,
                self.precision,
                options,
                self.threads,  # the worker's torch threads, within the CPUs it reserved
                self.gpu,
                self.engine.value,
            )
            for _ in range(self.stats.actors)
        ]

    def in_flight(self) -> list[int]:
        """Chunks given to each actor and not back yet."""
        counts = [0] * len(self.actors)
        for index, _chunk in self._flights.values():
            counts[index] += 1
        return counts

    def close_actors(self) -> None:
        ray = self._ray
        for actor in self.actors:
            try:
                ray.kill(actor, no_restart=True)
            except Exception:  # already gone
                pass
        self.actors = []

    def close(self) -> None:
        """The actors, and Ray when connect() started it (not when it was running already)."""
        ray = self._ray
        if ray is None:
            return
        self.close_actors()
        if self._started:
            self._started = False
            shutdown()  # and what is left of a local Ray

    def run(
        self,
        job: ManifestJob,
        cancel: CancelToken | None = None,
        on_item: Callable[[ItemEntry], None] | None = None,
    ) -> int:
        """Make the job's pending items on the cluster; with the store open. Returns how many
        were made. StudioError when every actor failed, or an item cannot be made."""
        ray = self._ray
        from ray.exceptions import RayActorError, RayTaskError

        lost: tuple[type[BaseException], ...] = (RayActorError,)
        unavailable = getattr(ray.exceptions, "ActorUnavailableError", None)
        if unavailable is not None:
            lost = (*lost, unavailable)
        pending = job.pending()
        if not pending:
            return 0
        size = chunk_size(len(pending), self.stats.actors)
        queue: deque[list[WorkItem]] = deque(
            pending[i : i + size] for i in range(0, len(pending), size)
        )
        self.stats.chunks = len(queue)
        if not self.actors or self._options != job.options:
            self.close_actors()
            self._start_actors(job.options)
            self._options = job.options
        failures = [0] * len(self.actors)
        flights = self._flights = {}
        made = 0
        while queue or flights:
            if cancel is not None and cancel.cancelled:
                raise Cancelled()
            alive = [i for i, n in enumerate(failures) if n <= MAX_RESTARTS]
            if not alive:
                last = self.stats.errors[-1] if self.stats.errors else "no reason given"
                raise StudioError(f"Every Ray worker failed; the last error: {last}")
            for index in alive:
                busy = sum(1 for a, _ in flights.values() if a == index)
                while queue and busy < IN_FLIGHT:
                    chunk = queue.popleft()
                    flights[self.actors[index].render.remote(chunk)] = (index, chunk)
                    busy += 1
            ready, _ = ray.wait(list(flights), num_returns=1, timeout=0.5)
            for ref in ready:
                index, chunk = flights.pop(ref)
                try:
                    results: list[ItemResult] = ray.get(ref)
                except lost as exc:
                    failures[index] += 1
                    self.stats.actor_failures += 1
                    self.stats.requeued += 1
                    self.stats.errors.append(str(exc).splitlines()[0][:200])
                    queue.appendleft(chunk)
                    continue
                except RayTaskError as exc:
                    cause = exc.cause if getattr(exc, "cause", None) is not None else exc
                    raise StudioError(str(cause).splitlines()[0]) from None
                for result in results:
                    entry = job.accept(result)
                    if entry is not None:
                        made += 1
                        if on_item is not None:
                            on_item(entry)
        return made
