"""The proxies' router (core/serve/replicas/router.py) without a cluster: requests that reach
a proxy together spread over the replicas even when the router's picture of them is uneven or
stale, each is counted once, and a replica's reply does not forget those still on their way to
it. Ray Serve's own router sends all 8 to one replica in both cases; the cluster test beside it
(test_replicas.py) sends requests together through the proxy."""

import asyncio
from collections import Counter

import pytest
from ray.serve._private.common import DeploymentHandleSource, DeploymentID, RequestMetadata
from ray.serve.request_router import PendingRequest, ReplicaID

from chattts_studio.core.serve.replicas import router as router_module
from chattts_studio.core.serve.replicas.router import SpreadingRouter

DEPLOYMENT = DeploymentID(name="SpeechReplica", app_name="chattts-studio")


class Replica:
    """What the router reads of a running replica."""

    def __init__(self, name: str, max_ongoing: int = 80) -> None:
        self.replica_id = ReplicaID(name, deployment_id=DEPLOYMENT)
        self.node_id, self.availability_zone = "node", None
        self.multiplexed_model_ids: set[str] = set()
        self.max_ongoing_requests = max_ongoing
        self.is_cross_language = False
        self.probed = 0

    async def get_queue_len(self, *, deadline_s: float) -> int:
        self.probed += 1
        return 0


def _router(replicas: list[Replica]) -> SpreadingRouter:
    router = SpreadingRouter(
        deployment_id=DEPLOYMENT,
        handle_source=DeploymentHandleSource.UNKNOWN,
        self_node_id="node",
        use_replica_queue_len_cache=True,  # as on a proxy: the rejection protocol's cache
        prefer_local_node_routing=False,
        prefer_local_az_routing=False,
    )
    router.update_replicas(replicas)  # type: ignore[arg-type]
    return router


async def _route_together(router: SpreadingRouter, requests: int) -> Counter[str]:
    """`requests` pending at once, each sent as Ray Serve's router sends it once chosen."""

    async def route(n: int) -> str:
        pending = PendingRequest([], {}, RequestMetadata(str(n), str(n)))
        replica = await router._choose_replica_for_request(pending)
        router.on_send_request(replica.replica_id)
        return str(replica.replica_id.unique_id)

    return Counter(await asyncio.gather(*(route(n) for n in range(requests))))


@pytest.mark.parametrize(
    "b_had", [1, None], ids=["one-replica-looked-shorter", "one-replica-count-stale"]
)
def test_requests_routed_together_spread_and_are_counted_once(b_had: int | None) -> None:
    """b still had one request (or its count had gone stale, as when only a /health check
    went to a since): of 8 requests arriving together, each replica gets its share."""

    async def run() -> tuple[Counter[str], dict[str, int | None], int | None]:
        a, b = Replica("a"), Replica("b")
        router = _router([a, b])
        await asyncio.sleep(0.05)  # the new replicas' first probe, as Ray makes it, done
        cache = router.replica_queue_len_cache
        cache.update(a.replica_id, 0)
        if b_had is None:
            cache.invalidate_key(b.replica_id)
        else:
            cache.update(b.replica_id, b_had)
        served = await _route_together(router, 8)
        counted = {r.replica_id.unique_id: cache.get(r.replica_id) for r in (a, b)}
        # a's reply to the first it took counts that one only: the rest are on their way.
        router.on_new_queue_len_info(a.replica_id, 1)
        return served, counted, cache.get(a.replica_id)

    served, counted, after_reply = asyncio.run(run())
    had = b_had or 0
    assert sum(served.values()) == 8
    assert abs(served["a"] - (served["b"] + had)) <= 1, served  # as even as it can be
    # Each request counted once, on the replica that got it, until the replicas answer.
    assert counted == {"a": served["a"], "b": served["b"] + had}
    assert after_reply == served["a"]


def test_a_full_replica_is_asked_and_passed_over() -> None:
    """The router's count says a is full: Ray asks both replicas (the probe) and the
    request goes to the one with room."""

    async def run() -> tuple[Counter[str], int]:
        a, b = Replica("a", max_ongoing=2), Replica("b", max_ongoing=2)
        router = _router([a, b])
        await asyncio.sleep(0.05)
        router.replica_queue_len_cache.update(a.replica_id, 2)
        router.replica_queue_len_cache.update(b.replica_id, 2)
        before = a.probed + b.probed
        served = await _route_together(router, 1)
        return served, a.probed + b.probed - before

    served, probes = asyncio.run(run())
    assert sum(served.values()) == 1 and probes >= 1


def test_a_choice_never_sent_stops_counting(monkeypatch: pytest.MonkeyPatch) -> None:
    """A replica chosen for a request that then went elsewhere (or whose client left) is
    counted for REPLY_SECONDS only: after that, a reply gives the replica's own count and the
    next request sent there counts again."""

    async def run() -> tuple[int | None, int | None, int | None]:
        a, b = Replica("a"), Replica("b")
        router = _router([a, b])
        await asyncio.sleep(0.05)
        cache = router.replica_queue_len_cache
        ranks = await router.choose_replicas(router._replicas_list)
        first = ranks[0][0]  # chosen and counted; never sent
        chosen = cache.get(first.replica_id)
        monkeypatch.setattr(router_module, "REPLY_SECONDS", 0.01)
        await asyncio.sleep(0.05)
        router.on_new_queue_len_info(first.replica_id, 0)
        replied = cache.get(first.replica_id)
        router.on_send_request(first.replica_id)
        return chosen, replied, cache.get(first.replica_id)

    assert asyncio.run(run()) == (1, 0, 1)
