"""The speech API as a Ray Serve application: the same app (core/serve/app.py) in every replica,
each with one model and its own batch. `build(args)` is the import path `serve deploy` names; this
module imports Ray.
"""

import asyncio
import contextlib
import logging
from typing import Any

from ray import serve
from ray.serve import Application
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from chattts_studio.core.engine.engine import Engine
from chattts_studio.core.serve.access import is_loopback, open_only_with_key
from chattts_studio.core.serve.replicas.board import REPORT_SECONDS, ReplicaBoard, ReplicaReport
from chattts_studio.core.serve.replicas.spec import BOARD, DEPLOYMENT, REPLICA_HEADER, ReplicaSpec
from chattts_studio.core.serve.running import ServeOptions, SpeechService

log = logging.getLogger(__name__)

_grpc_on_loopback = False  # whether this replica's process binds Serve's gRPC to loopback


def replica_grpc_on_loopback() -> None:
    """Ray Serve starts each replica's server for calls between deployments (gRPC) on every
    interface, "[::]:0" fixed in its code, once the replica's constructor has run. On a node
    whose address is loopback (a local Ray, core/cluster.py) it is bound to 127.0.0.1 instead,
    where the other replicas reach it (the node's address and its port); on a cluster's
    nodes Ray's own choice stands. Called by each replica's constructor."""
    import ray
    from ray.serve._private import replica as serve_replica

    global _grpc_on_loopback
    original = getattr(serve_replica, "add_port_to_grpc_server", None)
    if _grpc_on_loopback or original is None:
        return
    if not is_loopback(ray.util.get_node_ip_address()):
        return

    def add_port(server: Any, address: str) -> Any:
        if address.startswith("[::]:"):
            address = "127.0.0.1:" + address.rpartition(":")[2]
        return original(server, address)

    serve_replica.add_port_to_grpc_server = add_port
    _grpc_on_loopback = True


class NamedReplica:
    """Plain ASGI around the app: every HTTP response names the replica that made it
    (REPLICA_HEADER), so a client or a test sees how the router spread its requests."""

    def __init__(self, app: ASGIApp, replica_id: str) -> None:
        self.app, self.header = app, (REPLICA_HEADER.encode(), replica_id.encode())

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def named(message: Message) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", ()), self.header]}
            await send(message)

        await self.app(scope, receive, named)


class BoardReplica(ReplicaBoard):
    """The board as a replica (its gRPC server on loopback where the node is)."""

    def __init__(self) -> None:
        replica_grpc_on_loopback()
        super().__init__()


# The board holds a few reports: no CPU of its own, so it never takes a replica's place.
Board = serve.deployment(
    name=BOARD, num_replicas=1, ray_actor_options={"num_cpus": 0}, max_ongoing_requests=1000
)(BoardReplica)


def load_engine(spec: ReplicaSpec) -> Engine:
    """The replica's model: on its GPU (Ray has set CUDA_VISIBLE_DEVICES to the one it gave
    it), else on the CPU with torch using the replica's CPUs and no more."""
    if not spec.gpu:
        import torch

        torch.set_num_threads(max(1, spec.cpus))
    engine = Engine()
    engine.load(spec.model, "cuda" if spec.gpu else "cpu", spec.precision, engine=spec.engine)
    return engine


@serve.ingress()  # the app comes from __serve_build_asgi_app__, once the model is loaded
class SpeechReplica:
    # Ray Serve awaits an async constructor (and @serve.ingress requires one).
    async def __init__(self, args: dict[str, Any], board: Any) -> None:  # type: ignore[misc]
        replica_grpc_on_loopback()
        spec = ReplicaSpec.from_args(args)
        key = spec.key()
        open_only_with_key(spec.host, key)  # a config without a key never opens the API
        # Loading takes seconds to minutes: off the replica's event loop, so that Ray's
        # health checks are answered meanwhile.
        self.engine = await asyncio.to_thread(load_engine, spec)
        self.service = SpeechService(
            self.engine,
            ServeOptions(
                host=spec.host,
                port=spec.port,
                api_key=key,
                slots=spec.slots,
                queue=spec.queue,
                chunk_rows=spec.chunk_rows,
                limits=spec.limits(),
                access=spec.access(),
                peers=self,
            ),
        )
        self.service.start_behind_proxy()
        self.server, self.batcher = self.service.server, self.service.batcher
        self.board = board
        self.id = serve.get_replica_context().replica_id.unique_id
        self._reporting = asyncio.get_running_loop().create_task(self._report_every())

    def __serve_build_asgi_app__(self) -> Any:
        return NamedReplica(self.server.app, self.id)

    def _report(self) -> ReplicaReport:
        return self.server.report(self.id)

    async def _report_every(self) -> None:
        while True:
            try:
                await self.board.report.remote(self._report())
            except Exception as exc:  # the board is being replaced: the next report lands
                log.warning("replica %s could not report: %s", self.id, exc)
            await asyncio.sleep(REPORT_SECONDS)

    async def reports(self) -> list[ReplicaReport]:
        """Every live replica's figures (core/serve/app.py's Peers), this one's current; only
        this one's while the board is unreachable (being replaced), so that /health still
        answers for the replica it reached."""
        mine = self._report()
        try:
            await self.board.report.remote(mine)
            reports: list[ReplicaReport] = await self.board.reports.remote()
        except Exception as exc:
            log.warning("replica %s could not reach the board: %s", self.id, exc)
            return [mine]
        return reports

    def check_health(self) -> None:
        """Ray Serve asks every few seconds; a replica whose batch thread died is replaced."""
        if not self.batcher.alive():
            raise RuntimeError("the replica's batcher has stopped")

    async def __del__(self) -> None:
        self._reporting.cancel()
        with contextlib.suppress(Exception):
            await self.board.leave.remote(self.id)
        await asyncio.to_thread(self.service.close)


Replica = serve.deployment(name=DEPLOYMENT)(SpeechReplica)


def build(args: dict[str, Any]) -> Application:
    """The application for a spec's args (a `serve deploy` config's, or the command line's):
    the replicas, with the options the spec gives them, and the board they report to."""
    spec = ReplicaSpec.from_args(args)
    return Replica.options(**spec.deployment_options()).bind(args, Board.bind())
