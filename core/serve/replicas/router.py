"""How Ray Serve's proxies pick a replica: power of two choices over queue lengths, each request
counted from the moment it is chosen, so requests arriving together spread (docs/api.md,
"Routing"). This module imports Ray.
"""

import time
from collections import defaultdict, deque
from typing import Any

from ray.serve._private.request_router import PowerOfTwoChoicesRequestRouter
from ray.serve.request_router import PendingRequest, ReplicaID, RunningReplica

# A request chosen or sent this long ago and still not sent or answered (its client went
# away, or another replica took it) is no longer counted: both take milliseconds.
REPLY_SECONDS = 2.0


class SpreadingRouter(PowerOfTwoChoicesRequestRouter):
    """The default router, but the replica it ranks first is counted at once, so the next
    request routed in the same pass sees it (and not counted again when it is sent); and a
    replica's reply sets its count to the replica's own plus the requests sent to it since,
    whose replies have not come yet."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # When each request was chosen (and counted) and not sent yet; sent and not answered.
        self._chosen: defaultdict[ReplicaID, deque[float]] = defaultdict(deque)
        self._sent: defaultdict[ReplicaID, deque[float]] = defaultdict(deque)

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
        self._chosen[first.replica_id].append(time.monotonic())
        rest = [replica for replica in ranks[0] if replica is not first]
        return [[first], rest] if rest else [[first]]

    @staticmethod
    def _recent(times: deque[float]) -> deque[float]:
        """`times` without those older than REPLY_SECONDS."""
        while times and time.monotonic() - times[0] > REPLY_SECONDS:
            times.popleft()
        return times

    def on_send_request(self, replica_id: ReplicaID) -> None:
        self._recent(self._sent[replica_id]).append(time.monotonic())
        chosen = self._recent(self._chosen[replica_id])
        if chosen:
            chosen.popleft()  # counted when it was chosen
            return
        super().on_send_request(replica_id)

    def on_new_queue_len_info(self, replica_id: ReplicaID, num_ongoing_requests: int) -> None:
        """The replica's reply to a request (taken or refused): its count, plus what it
        cannot have counted yet (sent after that request, or chosen and not sent)."""
        sent = self._recent(self._sent[replica_id])
        if sent:
            sent.popleft()  # the replies come in the order the requests were sent
        coming = len(sent) + len(self._recent(self._chosen[replica_id]))
        super().on_new_queue_len_info(replica_id, num_ongoing_requests + coming)

    def update_replicas(self, replicas: list[RunningReplica]) -> None:
        super().update_replicas(replicas)
        live = {replica.replica_id for replica in replicas}
        for table in (self._chosen, self._sent):
            for gone in [key for key in table if key not in live]:
                del table[gone]
