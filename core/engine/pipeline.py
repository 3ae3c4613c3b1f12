"""One synthesis pipeline for every caller: units of work in, typed events out, with one
out-of-memory policy around whichever producer (Studio's loop or ChatTTS's) makes the audio.

A producer yields a unit's `AudioChunk`s as they become playable (the unit that plays next
first), then its `SegmentResult`, units in key order, and only once its audio exists, so a
failure leaves every unfinished unit to make again. It raises `torch.OutOfMemoryError`
unchanged: `with_backoff` retries with a smaller batch once the failed producer is gone, and
says `SegmentRestarted` for a unit that had streamed."""

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import torch

from chattts_studio.core.cycles import collect_cycles
from chattts_studio.core.engine.cancel import CancelToken
from chattts_studio.core.engine.chattts.chat import ChatModel, RefinePass
from chattts_studio.core.engine.decoder_pool import DecoderPool, drop_decoders
from chattts_studio.core.engine.metrics import LiveMetrics
from chattts_studio.core.engine.request import (
    AudioChunk,
    RefineSettings,
    SegmentRestarted,
    SegmentResult,
)
from chattts_studio.core.errors import DeviceError
from chattts_studio.core.text.prepare import MAX_STEP_CAP, STEP_CAP_MARGIN, Segment, needed_steps
from chattts_studio.core.voices.voice import Voice

Event = AudioChunk | SegmentRestarted | SegmentResult


class ModelTexts:
    """Each segment's text as the model reads it: normalised at once; refined by ChatTTS's text
    pass (when asked) a group at a time, the first segment alone (`first_alone`) so that its
    first audio waits for its own pass only, then the next group, whole (a pass a step between
    the decoder's steps kept a lone row stepping at nearly a full batch's cost). A segment is
    refined once, whoever reads it (every speaker of an audition, a retry after out of
    memory)."""

    def __init__(
        self,
        model: ChatModel,
        segments: list[Segment],
        refine: RefineSettings | None,
        batch: int,
        cancel: CancelToken,
        live: LiveMetrics,
        random_weights: bool,
        first_alone: bool = True,
    ) -> None:
        self.model, self.segments, self.refine = model, segments, refine
        self.batch, self.cancel, self.live = max(1, batch), cancel, live
        self.random_weights = random_weights
        self.first_alone = first_alone and len(segments) > 1
        self.normalized = [model.normalize(s.text) for s in segments]
        self.refined: dict[int, str] = {}
        self.running: tuple[range, RefinePass] | None = None  # the pass under way

    def group(self, index: int) -> range:
        """The segments refined in one pass with `index`: the first alone, then batches."""
        count = len(self.segments)
        if not self.first_alone:
            start = index - index % self.batch
        elif index == 0:
            return range(0, 1)
        else:
            start = 1 + (index - 1) // self.batch * self.batch
        return range(start, min(start + self.batch, count))

    def ready(self, index: int) -> bool:
        return self.refine is None or index in self.refined

    def text(self, index: int) -> str:
        if self.refine is None:
            return self.normalized[index]
        if index not in self.refined:
            self._refine(self.group(index))
        return self.refined[index]

    def _refine(self, group: range) -> None:
        assert self.refine is not None
        batch = [self.normalized[i] for i in group]
        run = RefinePass(self.model, batch, self.refine, self.cancel, on_step=self.live.refine_step)
        self.live.refine_begin(len(batch), run.limit)
        self.running = (group, run)
        while self.running is not None:
            self._step()

    def _step(self) -> None:
        assert self.running is not None
        group, run = self.running
        started = time.perf_counter()
        try:
            done = run.step()
        except BaseException:
            self.running = None
            self.live.refine_end(len(self.refined))
            raise
        finally:
            self.live.refine_time(time.perf_counter() - started)
        if done:
            for index, text in zip(group, run.texts(), strict=True):
                self.refined[index] = text
            self.running = None
            self.live.refine_end(len(self.refined))
            self.cancel.check()

    def cap(self, index: int) -> int:
        """The unit's step cap: the plan's, grown with what refine added (pauses, fillers)."""
        cap = self.segments[index].step_cap
        if self.refine is not None:
            cap = min(MAX_STEP_CAP, max(cap, needed_steps(self.text(index))))
        return cap

    def min_steps(self, index: int) -> int:
        # Random weights would stop at a random EOS; hold it off so demo audio has the
        # length speech of that text would have. Real weights end when the model says so.
        return self.cap(index) if self.random_weights else 1

    def expected(self, index: int) -> int:
        """The steps the unit is expected to take once its model text is final: its cap on
        random weights (EOS is held off), what the text needs on real ones."""
        if self.random_weights:
            return self.cap(index)
        if self.refine is None:
            return self.segments[index].expected_steps
        return max(1, round(needed_steps(self.text(index)) / STEP_CAP_MARGIN))

    def estimate(self, index: int) -> tuple[int, int]:
        """(prompt tokens, cap) known before refining: what a KV cache is first sized for."""
        if self.refine is None or index in self.refined:
            return len(self.text(index)) + 16, self.cap(index)
        return 2 * len(self.normalized[index]) + 32, self.segments[index].step_cap


@dataclass(frozen=True)
class Unit:
    """One piece of audio to make: a segment's model text read by one voice. Units of one job
    may have different voices (a dialogue, an audition): each decode row carries its own."""

    key: int  # results come back in key order
    segment: Segment
    speaker: Voice
    texts: ModelTexts
    name: str = ""  # the speaker's name in a dialogue, for the results

    @property
    def text(self) -> str:
        return self.texts.text(self.segment.index)

    @property
    def cap(self) -> int:
        return self.texts.cap(self.segment.index)

    @property
    def min_steps(self) -> int:
        return self.texts.min_steps(self.segment.index)


@dataclass(frozen=True)
class Settings:
    temperature: float
    top_p: float
    top_k: int
    speed: int
    seed: int


@dataclass
class JobContext:
    """What a producer works with; the same for every retry of one job."""

    model: ChatModel
    settings: Settings
    cancel: CancelToken
    live: LiveMetrics
    device: str
    count: int  # units in the whole job, for SegmentResult.segments
    stream: bool  # a listener wants chunks of the unit that plays next
    random_weights: bool
    cuda_graphs: bool = True  # on CUDA: the decode step as CUDA graphs
    # On CUDA: finished units vocoded on a second stream while the GPT steps on (off until a
    # GPU run has checked it, as fused steps are).
    vocoder_stream: bool = False
    # The loaded model's decoders, reused across jobs; None: a new decoder per job.
    decoders: DecoderPool | None = None
    # Rows join the running batch as their text is ready, the first alone until its first
    # audio (with a listener); False: every row of the first batch starts together.
    head_first: bool = True


Producer = Callable[[JobContext, list[Unit], int], Iterator[Event]]


def out_of_memory(exc: BaseException) -> bool:
    """CUDA says torch.OutOfMemoryError; MPS (where ChatTTS's vocoder runs on the GPU) says a
    RuntimeError 'MPS backend out of memory'."""
    return isinstance(exc, torch.OutOfMemoryError) or "out of memory" in str(exc).lower()


def release_memory(device: str) -> None:
    """Return what freed tensors held to the device (CUDA keeps it cached otherwise), the
    decoders kept for reuse (their caches and graphs) included."""
    drop_decoders()
    collect_cycles()  # cycles first: a model's tensors may be held in one
    if device.startswith("cuda") and torch.cuda.is_available():
        torch.cuda.empty_cache()
    elif device == "mps" and torch.backends.mps.is_available():
        torch.mps.empty_cache()


def smaller_batch(batch: int) -> int:
    if batch <= 1:
        raise DeviceError(
            "Out of memory even at batch size 1; lower the segment size or use another device."
        )
    return max(1, batch // 2)


def with_backoff(
    produce: Producer, ctx: JobContext, units: list[Unit], batch: int
) -> Iterator[Event]:
    """Run `produce` over `units`; after out of memory, halve the batch and run what is not
    finished again, until everything is made or batch 1 fails too (DeviceError)."""
    pending = list(units)
    while pending:
        batch = min(batch, len(pending))  # what the producer really runs, halved if it fails
        streamed: set[int] = set()
        failed = False
        try:
            for event in produce(ctx, pending, batch):
                if isinstance(event, AudioChunk):
                    streamed.add(event.index)
                elif isinstance(event, SegmentResult):
                    pending = [u for u in pending if u.key != event.index]
                yield event
        except (torch.OutOfMemoryError, RuntimeError) as exc:
            # Nothing here: the producer's frames (its decoder and KV cache) are referenced by
            # this exception's traceback until the block ends. Recover below, outside it.
            if not out_of_memory(exc):
                raise
            failed = True
            del exc
        if not failed:
            return
        if ctx.decoders is not None:
            ctx.decoders.clear()  # the big batch's decoder first: a smaller one replaces it
        release_memory(ctx.device)
        batch = smaller_batch(batch)  # raised here, it carries no failed frames along
        ctx.live.restarted()
        ctx.live.update(note=f"out of memory: batch size lowered to {batch}", batch_size=batch)
        keys = {u.key for u in pending}
        for key in sorted(streamed & keys):
            yield SegmentRestarted(key)


def start_live(
    live: LiveMetrics, segments: list[Segment], times: int, refine: bool, batch: int, random: bool
) -> None:
    """The live figures of a job of `times` readings of `segments`: the steps each is expected
    to take (random weights run to the cap: EOS is held off) and its cap, as known before
    refine (the producers correct both once a segment's text is final)."""
    expected = [s.step_cap if random else s.expected_steps for s in segments]
    caps = [s.step_cap for s in segments]
    live.start("decode", expected * times, caps * times, len(segments) if refine else 0, batch)
