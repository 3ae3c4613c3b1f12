"""How Ray Serve's proxies pick a replica for each request: Ray Serve's default (power of two
choices over the replicas' queue lengths), with each choice counted the moment it is made.

Ray Serve's default counts a request in its table of queue lengths only once the request is
sent, after its routing loop has gone on: requests that reach a proxy together are routed
against one picture of the replicas, and all of them go to the replica that looked shorter
in it (docs/api.md has the evidence). Named by import path (spec.ROUTER) in the deployment's
options, so the proxies import it; this module imports Ray."""

from collections import Counter
from typing import Any

from ray.serve._private.request_router import PowerOfTwoChoicesRequestRouter
from ray.serve.request_router import PendingRequest, ReplicaID, RunningReplica


class SpreadingRouter(PowerOfTwoChoicesRequestRouter):
    """The default router, but the replica it ranks first is counted at once, so the next
    request routed in the same pass sees it (and not counted again when it is sent). The
    replica's own count, which it sends back when it takes the request, then replaces the
    router's as before."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._counted: Counter[ReplicaID] = Counter()  # chosen and counted, not yet sent

    async def choose_replicas(
        self,
        candidate_replicas: list[RunningReplica],
        pending_request: PendingRequest | None = None,
    ) -> list[list[RunningReplica]]:
        ranks: list[list[RunningReplica]] = await super().choose_replicas(
            candidate_replicas, pending_request
        )
        if len(ranks) != 1 or not ranks[0]:
            return ranks
        # A count Ray has not got, or has let go stale (nothing sent there or finished for
        # seconds), is taken as none: probing it instead would leave it out of this pass.
        cache = self.replica_queue_len_cache
        counts = {replica.replica_id: cache.get(replica.replica_id) or 0 for replica in ranks[0]}
        # The shorter one; on a tie the first, which Ray put in random order.
        first = min(ranks[0], key=lambda replica: counts[replica.replica_id])
        count = counts[first.replica_id]
        if count >= first.max_ongoing_requests:
            return ranks  # full as far as the router knows: Ray asks them, then waits
        cache.update(first.replica_id, count + 1)
        self._counted[first.replica_id] += 1
        rest = [replica for replica in ranks[0] if replica is not first]
        return [[first], rest] if rest else [[first]]

    def on_send_request(self, replica_id: ReplicaID) -> None:
        if self._counted[replica_id] > 0:
            self._counted[replica_id] -= 1  # counted when it was chosen
            return
        super().on_send_request(replica_id)

    def on_new_queue_len_info(self, replica_id: ReplicaID, num_ongoing_requests: int) -> None:
        """The replica's own count replaces the router's: a request chosen for it and not
        sent yet is counted when it is sent."""
        super().on_new_queue_len_info(replica_id, num_ongoing_requests)
        self._counted.pop(replica_id, None)
