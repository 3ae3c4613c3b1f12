"""Faults injected into a running continuous batch: rows that turn non-finite mid-decode."""

from collections.abc import Callable

import pytest
import torch

from chattts_studio.core.engine.batch.batcher import Batcher
from chattts_studio.core.engine.batch.tickets import Ticket
from chattts_studio.core.engine.decode.loop import FastDecoder


def poison_rows(
    monkeypatch: pytest.MonkeyPatch, batcher: Batcher, doomed: Callable[[Ticket], bool], at: int
) -> None:
    """From the decoder's `at`-th step on, the rows of requests for which doomed(ticket)
    holds get NaN logits, and their cache rows NaN too (as an fp16 overflow leaves them)."""
    real = FastDecoder._logits
    calls = [0]

    def poisoned(self: FastDecoder, hidden: torch.Tensor) -> torch.Tensor:
        logits = real(self, hidden)
        calls[0] += 1
        if self is batcher.decoder and calls[0] >= at:
            for slot, job in enumerate(self.active):
                entry = batcher._by_key.get(job.key) if job is not None else None
                if entry is not None and doomed(entry[0]):
                    logits[slot * self.num_vq : (slot + 1) * self.num_vq] = float("nan")
                    self.v_cache[:, slot] = float("nan")
        return logits

    monkeypatch.setattr(FastDecoder, "_logits", poisoned)
