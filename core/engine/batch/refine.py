"""ChatTTS's refine pass for the continuous batch (batcher.py), batched across requests between
decode steps. A refined text depends on what it was refined with, so a request with refine is not
promised its solo audio.
"""

import logging
from collections.abc import Callable

from chattts_studio.core import seeds
from chattts_studio.core.engine.batch.tickets import Ticket
from chattts_studio.core.engine.cancel import CancelToken
from chattts_studio.core.engine.chattts.chat import ChatModel
from chattts_studio.core.engine.pipeline import out_of_memory, release_memory
from chattts_studio.core.errors import StudioError

log = logging.getLogger("chattts_studio")
REFINE_BATCH = 8  # segments in one call at most
REFINE_FAILED = "Refining the text failed on the server; try again, or without refine_text."


def refine_picks(
    first: Ticket, tickets: list[Ticket], limit: int, heads: bool = False
) -> list[tuple[Ticket, int]]:
    """The segments to refine in one call, `limit` at most: `first`'s next unrefined one,
    then, in turns, the next unrefined segment of each of `tickets` (in the order they take
    rows) that asks for the same RefineSettings as `first`. `heads`: one segment a ticket
    (`first`'s is its first segment, whose audio should not wait for the others' text)."""
    settings = first.order.refine
    queues = [
        (t, t.unrefined())
        for t in [first, *(t for t in tickets if t is not first)]
        if t.order.refine == settings and not t.cancelled
    ]
    picks: list[tuple[Ticket, int]] = []
    while queues and len(picks) < limit:
        for ticket, queue in list(queues):
            index = next(queue, None)
            if index is None:
                queues.remove((ticket, queue))
            elif len(picks) < limit:
                picks.append((ticket, index))
                if heads:
                    queues.remove((ticket, queue))
    return picks


class RefineCancel(CancelToken):
    """A refine call's token: set once every request it refines for is cancelled, or the
    batcher closes (ChatTTS's generate loop reads it after every step)."""

    def __init__(self, tickets: list[Ticket], closed: Callable[[], bool]) -> None:
        super().__init__()
        self.tickets, self.closed = tickets, closed

    @property
    def cancelled(self) -> bool:
        return super().cancelled or self.closed() or all(t.cancelled for t in self.tickets)


def refine_segments(
    model: ChatModel,
    picks: list[tuple[Ticket, int]],
    fail: Callable[[Ticket, Exception], None],
    closed: Callable[[], bool],
    device: str,
) -> None:
    """Refine the picked segments in one call, keeping each text on its ticket; `fail` fails
    a request (the batcher's), `closed` says the batcher is closing, `device` is where memory
    is released after an out-of-memory call."""
    texts: list[str] = []
    kept: list[tuple[Ticket, int]] = []
    for ticket, index in picks:
        try:
            texts.append(model.normalize(ticket.segments[index].text))
            kept.append((ticket, index))
        except Exception as exc:
            fail(ticket, exc)
    picks = [(t, i) for t, i in kept if not t.done]
    texts = [text for (t, _), text in zip(kept, texts, strict=True) if not t.done]
    if not picks:
        return
    tickets = list(dict.fromkeys(ticket for ticket, _ in picks))
    settings = tickets[0].order.refine
    assert settings is not None
    cancel = RefineCancel(tickets, closed)
    seeds.seed_text_passes(tickets[0].order.seed)  # deterministic for one company
    memory = False
    try:
        refined = list(zip(picks, model.refine(texts, settings, cancel), strict=True))
    except Exception as exc:
        memory = out_of_memory(exc)
        log.warning("refine failed: %s", exc)  # the detail for the log, a sentence for them
        failure = exc if isinstance(exc, StudioError) or memory else StudioError(REFINE_FAILED)
        if memory:  # the failed call's tensors must not outlive it
            exc.__traceback__ = None
        for ticket in tickets:
            fail(ticket, failure)
        refined = []
    if memory:  # outside the except block, whose traceback held the call's tensors
        release_memory(device)
    if cancel.cancelled:  # cut short: its texts are partial, and nobody wants them
        return
    for (ticket, index), text in refined:
        ticket.refined[index] = text
