"""The two producers of the pipeline's events (their contract: pipeline.py): `fast_events`, Studio's
decode loop with continuous batching, and `stock_events`, ChatTTS's own generate loop (the
reference path).
"""

import dataclasses
import time
from collections.abc import Iterator
from itertools import takewhile

import numpy as np
import torch

from chattts_studio.core import SAMPLES_PER_STEP
from chattts_studio.core.engine.decode import vocoding
from chattts_studio.core.engine.decode.job import (
    Job,
    JobSource,
    NonFiniteError,
    non_finite_sentence,
)
from chattts_studio.core.engine.decode.loop import FastDecoder
from chattts_studio.core.engine.decode.slots import DecoderShape
from chattts_studio.core.engine.decode.streaming import FIRST_AUDIO_STEPS, ChunkVocoder
from chattts_studio.core.engine.metrics import memory_snapshot
from chattts_studio.core.engine.pipeline import Event, JobContext, Unit
from chattts_studio.core.engine.request import AudioChunk, Sampling, SegmentResult
from chattts_studio.core.voices.voice import Voice


def _result(
    ctx: JobContext,
    unit: Unit,
    audio: np.ndarray,
    steps: int,
    compute: float,
    batch: int,
    eos: bool,
) -> SegmentResult:
    return SegmentResult(
        index=unit.key,
        segments=ctx.count,
        text=unit.segment.shown,
        audio=np.ascontiguousarray(audio[: steps * SAMPLES_PER_STEP], dtype=np.float32),
        steps=steps,
        compute_seconds=compute,
        batch_size=batch,
        memory=memory_snapshot(ctx.device),
        hit_cap=not eos and not ctx.random_weights and steps >= unit.cap,
        speaker=unit.name,
    )


def _jobs(ctx: JobContext, units: list[Unit]) -> list[Job]:
    """Decode jobs whose text (refined when asked), prompt and embedding are made only when a
    row takes them; until then they hold an estimate (the KV cache grows if it was short)."""
    jobs = []
    extra: dict[Voice, int] = {}  # a cloned voice's prompt: its transcript and sample codes
    for unit in units:
        prompt, cap = unit.texts.estimate(unit.segment.index)
        voice = unit.speaker
        if voice.cloned and voice not in extra:
            extra[voice] = len(voice.transcript) + ctx.model.check_sample(voice.sample)
        prompt += extra.get(voice, 0)
        job = Job(unit.key, lambda: torch.zeros(0), cap, cap, prompt)

        def make(unit: Unit = unit, job: Job = job) -> torch.Tensor:
            ids = ctx.model.prompt_ids(unit.text, ctx.settings.speed, unit.speaker)
            job.prompt_len, job.cap, job.min_steps = int(ids[0].shape[1]), unit.cap, unit.min_steps
            ctx.live.expect(unit.key, unit.texts.expected(unit.segment.index), unit.cap)
            return ctx.model.embed(ids, unit.speaker)

        job.emb = make
        jobs.append(job)
    return jobs


class Admission:
    """The decoder's job source (decode/job.py's JobSource): jobs in key order, each once its
    model text is ready, into the running batch. The first job runs alone until its first
    audio can be made (one row steps fastest), with a listener or without (so that a seed
    gives the same audio either way); a job whose text is not ready waits while other rows
    run, and is made ready at once when none does."""

    def __init__(self, jobs: list[Job], by_key: dict[int, Unit], decoder: FastDecoder) -> None:
        self.jobs, self.by_key, self.decoder = list(jobs), by_key, decoder
        self.active = decoder.active
        self.head = jobs[0].key if jobs else None
        self.hold = self.head is not None

    def after_step(self) -> None:
        """Between steps: the first job lets the others in once it has its first chunk's
        steps (or has ended); then the next texts' refine pass, so they can join."""
        if self.hold and self.head is not None:
            running = self.decoder.running(self.head)
            if running is None or running.steps >= FIRST_AUDIO_STEPS:
                self.hold = False
        if not self.hold and self.jobs:
            unit = self.by_key[self.jobs[0].key]
            if not unit.texts.ready(unit.segment.index):
                unit.texts.text(unit.segment.index)

    def __call__(self) -> Job | None:
        if not self.jobs:
            return None
        if any(job is not None for job in self.active):
            unit = self.by_key[self.jobs[0].key]
            if self.hold or not unit.texts.ready(unit.segment.index):
                return None
        return self.jobs.pop(0)


class InOrder:
    """A decode's finished segments: each made a SegmentResult as its audio exists (its share
    of the wall time from its steps), then given out in text order."""

    def __init__(
        self, ctx: JobContext, by_key: dict[int, Unit], order: list[int], slots: int
    ) -> None:
        self.ctx, self.by_key, self.order, self.slots = ctx, by_key, order, slots
        self.done: dict[int, SegmentResult] = {}
        self.streamed: set[int] = set()  # units whose audio went out in chunks already
        self.started = time.perf_counter()
        self.row_steps = 0

    def on_step(self, keys: list[int]) -> None:
        self.row_steps += len(keys)
        self.ctx.live.add_steps(keys)

    def finish(self, job: Job, audio: np.ndarray) -> None:
        # A row's share of the wall time: its steps at the average cost per row-step so far.
        per_step = (time.perf_counter() - self.started) / max(1, self.row_steps)
        unit = self.by_key[job.key]
        self.done[job.key] = _result(
            self.ctx, unit, audio, job.steps, job.steps * per_step, self.slots, job.ended_by_eos
        )
        self.ctx.live.segment_done(job.key)
        # Its audio exists: the per-step states are no longer needed (a long job would
        # otherwise hold every finished segment's until it ends).
        job.hiddens = []
        job.tokens = []

    def in_order(self) -> Iterator[Event]:
        ctx, order = self.ctx, self.order
        while order and order[0] in self.done:
            result = self.done.pop(order.pop(0))
            if ctx.stream and result.index not in self.streamed:
                yield AudioChunk(result.index, result.audio, True)
            yield result
        ctx.live.update(segment=min((order[0] if order else 0) + 1, ctx.count))


def fast_events(ctx: JobContext, units: list[Unit], batch: int) -> Iterator[Event]:
    by_key = {u.key: u for u in units}
    order = [u.key for u in units]  # what is still to be yielded, in order
    jobs = _jobs(ctx, units)
    slots = max(1, min(batch, len(jobs)))
    on_cuda = ctx.device.startswith("cuda")
    max_len = max(j.length for j in jobs) + 1
    # Fixed shapes on a GPU: what a CUDA graph (and launch-bound small steps) want.
    graphs = on_cuda and ctx.cuda_graphs
    if ctx.decoders is None:
        decoder = FastDecoder(ctx.model, slots, max_len, static=on_cuda, graphs=graphs)
        yield from _decode(ctx, by_key, order, jobs, slots, decoder)
        return
    # The model's decoder for this shape: no allocation or graph capture per job.
    shape = DecoderShape(slots, static=on_cuda, graphs=graphs)
    with ctx.decoders.lend(ctx.model, shape, max_len) as kept:
        yield from _decode(ctx, by_key, order, jobs, slots, kept)


def _decode(
    ctx: JobContext,
    by_key: dict[int, Unit],
    order: list[int],
    jobs: list[Job],
    slots: int,
    decoder: FastDecoder,
) -> Iterator[Event]:
    s = ctx.settings
    sampling = Sampling(s.temperature, s.top_p, s.top_k)
    # On CUDA with the lever on, finished units are vocoded on a second stream (vocoding.py;
    # called through the module: the tests replace side_stream).
    side = vocoding.side_stream(ctx.model.device, ctx.vocoder_stream)
    queue = vocoding.VocodeQueue(ctx.model, ctx.live, side)
    stream: ChunkVocoder | None = None  # chunks of the unit that plays next
    results = InOrder(ctx, by_key, order, slots)
    finish, in_order, streamed = results.finish, results.in_order, results.streamed
    ctx.live.update(stage="decode", batch_size=slots)

    admission = Admission(jobs, by_key, decoder)
    source: JobSource | list[Job] = admission if ctx.head_first else jobs
    try:
        for ended in decoder.run(source, sampling, lambda: ctx.cancel.cancelled, results.on_step):
            head = order[0] if order else None
            if ended is not None:
                ctx.live.row_ended(ended.key)
                if stream is not None and ended.key == head:
                    final = stream.chunk(ended.hiddens, True)
                    yield AudioChunk(ended.key, final, True)
                    streamed.add(ended.key)
                    finish(ended, stream.audio())
                    stream = None
                else:
                    queue.add(ended)
            else:
                # Between steps: feed the unit that plays next.
                running = decoder.running(head) if head is not None else None
                if ctx.stream and running is not None:
                    if stream is None:
                        stream = ChunkVocoder(ctx.model)
                    if stream.ready(running.steps):
                        yield AudioChunk(running.key, stream.chunk(running.hiddens, False), False)
                if ctx.head_first:
                    admission.after_step()
            # Between steps (after every row that ended in the step has joined the queue):
            # vocode what waits when someone waits for it, when enough waits, or at the end.
            if (
                ended is None
                and len(queue)
                and (
                    (head is not None and head in queue)
                    or len(queue) >= slots
                    or not any(decoder.active)
                )
            ):
                for job, audio in queue.flush():
                    finish(job, audio)
            if ended is None:  # what the side stream has made meanwhile, without waiting
                for job, audio in queue.landed():
                    finish(job, audio)
            yield from in_order()
        if not ctx.cancel.cancelled:  # the decoding is over: wait for the side stream's rest
            for job, audio in queue.landed(wait=True):
                finish(job, audio)
            yield from in_order()
    finally:
        queue.settle()
    if ctx.cancel.cancelled:
        # What was already heard of the segment in progress is kept, marked partial.
        running = decoder.running(order[0]) if order else None
        if stream is not None and running is not None and stream.chunks:
            steps = stream.emitted
            yield dataclasses.replace(
                _result(ctx, by_key[running.key], stream.audio(), steps, 0.0, slots, False),
                partial=True,
            )
    ctx.cancel.check()  # the decoder returns early when cancelled
    assert not order, "the decoder ended with units unmade"


def stock_events(ctx: JobContext, units: list[Unit], batch: int) -> Iterator[Event]:
    """ChatTTS's generate loop: each call runs to its longest row; rows are cut to their own
    cap afterwards. Stock cannot mix speakers in one call: a batch takes one speaker's units."""
    from chattts_studio.core.engine.chattts.chat import StockSettings

    model, s = ctx.model, ctx.settings
    live = ctx.live
    i = 0
    while i < len(units):
        speaker = units[i].speaker
        chunk = list(takewhile(lambda u: u.speaker == speaker, units[i : i + batch]))  # noqa: B023
        i += len(chunk)
        caps = [u.cap for u in chunk]
        step = [0]

        def on_forward(
            hidden: torch.Tensor, caps: list[int] = caps, step: list[int] = step
        ) -> None:
            # ChatTTS samples right after this: stop before multinomial sees NaN (one sync a
            # step, acceptable on the reference path).
            if not bool(torch.isfinite(hidden).all()):
                raise NonFiniteError(non_finite_sentence(hidden.dtype))
            live.add_steps([u.key for u in chunk if u.cap > step[0]])  # noqa: B023
            step[0] += 1

        remove = model.on_step(on_forward)
        started = time.perf_counter()
        live.update(stage="decode", segment=chunk[0].key + 1, batch_size=len(chunk))
        try:
            settings = StockSettings(
                chunk[0].speaker,
                s.speed,
                s.temperature,
                s.top_p,
                s.top_k,
                max(caps),
                max(u.min_steps for u in chunk),
            )
            ids, hiddens = model.stock_codes([u.text for u in chunk], settings, ctx.cancel)
        finally:
            remove()
        ctx.cancel.check()
        steps = [min(len(h), u.cap) for h, u in zip(hiddens, chunk, strict=True)]
        eos = [len(h) < max(caps) for h in hiddens]
        live.update(stage="vocoder")
        wavs = model.vocode([h[:n] for h, n in zip(hiddens, steps, strict=True)])
        live.update(stage="decode")
        elapsed = time.perf_counter() - started
        total = sum(steps) or 1
        for unit, wav, n, ended in zip(chunk, wavs, steps, eos, strict=True):
            result = _result(ctx, unit, wav, n, elapsed * n / total, len(chunk), ended)
            live.segment_done(unit.key)
            if ctx.stream:
                yield AudioChunk(unit.key, result.audio, True)
            yield result
        del ids
