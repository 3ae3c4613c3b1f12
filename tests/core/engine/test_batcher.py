"""The decoder fed while it runs, per-job random streams, exact rows, and the batcher."""

import threading
import time

import numpy as np
import pytest
import torch
from batch_faults import poison_rows

from chattts_studio.core.engine.batch.batcher import Batcher
from chattts_studio.core.engine.batch.tickets import (
    Delivery,
    Failed,
    Finished,
    QueueFull,
    SpeechOrder,
    collect,
)
from chattts_studio.core.engine.decode.job import Job, NonFiniteError
from chattts_studio.core.engine.decode.loop import FastDecoder
from chattts_studio.core.engine.decode.rowwise import EXACT_CHUNK_ROWS
from chattts_studio.core.engine.engine import Engine
from chattts_studio.core.engine.request import AudioChunk, Sampling

SAMPLING = Sampling(0.3, 0.7, 20)


def _emb(engine: Engine, text: str, seed: int) -> torch.Tensor:
    model = engine.model
    assert model is not None
    speaker = engine.sample_speaker(seed)
    return model.embed(model.prompt_ids(text, 5, speaker), speaker)


def _target(engine: Engine) -> Job:
    return Job(0, _emb(engine, "今天天气很好", 1), 40, 40, seed=123)


def _neighbours(engine: Engine) -> list[Job]:
    # One long prompt pushes the attention span past a 256-position bucket; caps differ, so
    # rows end and are refilled at different steps.
    return [
        Job(i, _emb(engine, "你好世界" * (70 if i == 2 else i), 10 + i), 8 * i, 8 * i, seed=i)
        for i in range(1, 6)
    ]


def _decode(engine: Engine, jobs: list[Job], exact: bool) -> Job:
    assert engine.model is not None
    decoder = FastDecoder(engine.model, 4, 1024, exact=exact)
    torch.manual_seed(0)  # the global RNG must not matter to seeded jobs
    list(decoder.run(jobs, SAMPLING, lambda: False))
    return next(j for j in jobs if j.key == 0)


def test_an_exact_row_is_the_same_bits_whatever_sits_beside_it(engine: Engine) -> None:
    """A seeded job decoded alone, first among five others, and admitted late into a full
    batch: the same codes and the same hidden states, bit for bit."""
    alone = _decode(engine, [_target(engine)], exact=True)
    first = _decode(engine, [_target(engine), *_neighbours(engine)], exact=True)
    others = _neighbours(engine)
    late = _decode(engine, [*others[:4], _target(engine), *others[4:]], exact=True)
    for other in (first, late):
        assert torch.equal(torch.stack(other.tokens), torch.stack(alone.tokens))
        assert torch.equal(torch.stack(other.hiddens), torch.stack(alone.hiddens))


def test_a_seeded_job_draws_its_own_codes_and_an_unseeded_one_the_global_rng(
    engine: Engine,
) -> None:
    """Per-job streams: the global seed does not change a seeded job's codes; without a seed
    the job follows torch.manual_seed as before (stock's tokens at batch 1)."""
    assert engine.model is not None
    codes = []
    for global_seed in (1, 2):
        job = Job(0, _emb(engine, "你好", 1), 30, 30, seed=5)
        decoder = FastDecoder(engine.model, 2, 256)
        torch.manual_seed(global_seed)
        list(decoder.run([job], SAMPLING, lambda: False))
        codes.append(torch.stack(job.tokens))
    assert torch.equal(codes[0], codes[1])
    unseeded = []
    for global_seed in (1, 2):
        job = Job(0, _emb(engine, "你好", 1), 30, 30)
        decoder = FastDecoder(engine.model, 2, 256)
        torch.manual_seed(global_seed)
        list(decoder.run([job], SAMPLING, lambda: False))
        unseeded.append(torch.stack(job.tokens))
    assert not torch.equal(unseeded[0], unseeded[1])


def test_jobs_join_a_running_decode_and_cancelled_ones_leave_it(engine: Engine) -> None:
    """A source callable: a job that arrives after the decode started takes a free row while
    the first job still runs; a job marked cancelled leaves before the next step, unyielded."""
    assert engine.model is not None
    emb = _emb(engine, "你好", 1)
    first, late, doomed = Job(1, emb, 60, 60, seed=1), Job(2, emb, 20, 20, seed=2), None
    arrivals: list[Job] = [first]
    steps: list[list[int]] = []

    def on_step(keys: list[int]) -> None:
        steps.append(sorted(keys))
        if len(steps) == 5:
            arrivals.append(late)
        if len(steps) == 10:
            nonlocal doomed
            doomed = Job(3, emb, 60, 60, seed=3)
            arrivals.append(doomed)
        if len(steps) == 15 and doomed is not None:
            doomed.cancelled = True

    decoder = FastDecoder(engine.model, 3, 256, exact=True)
    source = lambda: arrivals.pop(0) if arrivals else None  # noqa: E731
    ended = [j.key for j in decoder.run(source, SAMPLING, lambda: False, on_step) if j]
    assert ended == [2, 1]  # the cancelled job is never yielded
    assert steps[4] == [1] and steps[5] == [1, 2]  # joined at the next step
    assert 3 in steps[14] and all(3 not in keys for keys in steps[15:])
    assert late.steps == 20 and first.steps == 60
    assert all(job is None for job in decoder.active)


_collect = collect


def _audio(got: list[Delivery]) -> np.ndarray:
    return np.concatenate([c.audio for c in got if isinstance(c, AudioChunk)])


@pytest.mark.parametrize("chunk_rows", [None, 4])
def test_the_batcher_gives_each_request_its_own_audio_in_order(
    engine: Engine, chunk_rows: int | None
) -> None:
    """Three requests at once share steps; each gets its segments in order, each equal to
    what it gets alone, with one row per product (the default) or four (serve
    --chunk-rows 4)."""
    orders = [
        SpeechOrder("你好。今天天气很好。", engine.sample_speaker(1), 1),
        SpeechOrder("Hello there. Good day.", engine.sample_speaker(2), 2),
        SpeechOrder("我们。去公园。", engine.sample_speaker(3), 3),
    ]
    batcher = Batcher(engine, slots=4, chunk_rows=chunk_rows)
    assert batcher.decoder.chunked and batcher.decoder.chunk == (chunk_rows or EXACT_CHUNK_ROWS)
    batcher.segments_of = lambda order: Batcher.segments_of(batcher, order)[:2]  # type: ignore[method-assign]
    batcher.segment_size = 3  # several segments per request
    shared: list[int] = []
    batcher.step_listeners.append(lambda ids: shared.append(len(set(ids))))
    batcher.start()
    try:
        together = [_collect(batcher, order) for order in orders]
        for done, _ in together:
            assert done.wait(60)
        assert max(shared) == 3, "the requests never decoded side by side"
        for order, (_, got) in zip(orders, together, strict=True):
            chunks = [c for c in got if isinstance(c, AudioChunk)]
            indices = [c.index for c in chunks]
            assert indices == sorted(indices) and indices[-1] == 1
            assert isinstance(got[-1], Finished)
            done, alone = _collect(batcher, order)
            assert done.wait(60)
            assert np.array_equal(_audio(got), _audio(alone))
    finally:
        batcher.close()


def test_a_non_finite_row_fails_its_request_alone(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One request's rows go NaN mid-batch: it alone gets Failed (one sentence), its rows are
    freed, and every other request, including those that take its poisoned row afterwards,
    gets the audio it gets alone, bit for bit."""
    orders = [
        SpeechOrder(f"你好。今天天气很好。{i}", engine.sample_speaker(i + 1), i + 1)
        for i in range(5)
    ]
    batcher = Batcher(engine, slots=3)
    batcher.segment_size = 3  # two segments each
    poison_rows(monkeypatch, batcher, lambda ticket: ticket.id == 1, at=4)
    batcher.start()
    try:
        together = [_collect(batcher, order) for order in orders]
        for done, _ in together:
            assert done.wait(60)
        failed = together[0][1][-1]
        assert isinstance(failed, Failed) and isinstance(failed.error, NonFiniteError)
        assert "\n" not in str(failed.error)
        assert batcher.stats.failed == 1 and batcher.stats.completed == 4
        assert all(job is None for job in batcher.decoder.active)
        for order, (_, got) in zip(orders[1:], together[1:], strict=True):
            assert isinstance(got[-1], Finished)
            done, alone = _collect(batcher, order)
            assert done.wait(60)
            assert np.array_equal(_audio(got), _audio(alone))
    finally:
        batcher.close()


def test_a_prompt_that_cannot_be_made_fails_its_request_alone(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert engine.model is not None
    bad_speaker = engine.sample_speaker(99)
    real = type(engine.model).embed

    def embed(self, ids, speaker):  # type: ignore[no-untyped-def]
        if speaker == bad_speaker:
            raise ValueError("this speaker cannot be read")
        return real(self, ids, speaker)

    monkeypatch.setattr(type(engine.model), "embed", embed)
    batcher = Batcher(engine, slots=2)
    batcher.start()
    try:
        good = SpeechOrder("你好。", engine.sample_speaker(1), 1)
        (done_bad, bad), (done_good, got) = (
            _collect(batcher, SpeechOrder("你好。", bad_speaker, 2)),
            _collect(batcher, good),
        )
        assert done_bad.wait(60) and done_good.wait(60)
        assert isinstance(bad[-1], Failed) and "cannot be read" in str(bad[-1].error)
        assert isinstance(got[-1], Finished) and _audio(got).size
    finally:
        batcher.close()


def test_a_ticket_counts_as_waiting_until_its_audio_is_taken(engine: Engine) -> None:
    """A request whose audio is all decoded but still held by its caller (a client that does
    not read) counts against max_waiting until released."""
    batcher = Batcher(engine, slots=2, max_waiting=1)
    batcher.start()
    try:
        done = threading.Event()
        order = SpeechOrder("你好。", engine.sample_speaker(1), 1)
        ticket = batcher.submit(
            order, lambda item: done.set() if isinstance(item, Finished) else None, True
        )
        assert done.wait(60)
        with pytest.raises(QueueFull):
            batcher.submit(order, lambda item: None)
        ticket.release()
        batcher.submit(order, lambda item: None)
    finally:
        batcher.close()


def test_a_held_back_request_takes_no_row_until_let_go(engine: Engine) -> None:
    batcher = Batcher(engine, slots=2)
    batcher.segment_size = 3
    started: list[int] = []
    batcher.step_listeners.append(started.extend)
    order = SpeechOrder("你好。今天天气很好。我们去公园。", engine.sample_speaker(1), 1)
    batcher.start()
    try:
        got: list[Delivery] = []
        done, held = threading.Event(), threading.Event()

        def deliver(item: Delivery) -> None:
            got.append(item)
            if len(got) == 1:
                batcher.hold_back(ticket, True)  # as a full response buffer does
                held.set()
            if isinstance(item, Finished):
                done.set()

        ticket = batcher.submit(order, deliver)
        assert held.wait(60)
        deadline = time.monotonic() + 60
        while ticket.rows and time.monotonic() < deadline:  # its rows end their segments
            time.sleep(0.01)
        assert ticket.rows == 0 and not done.is_set(), "it went on while held back"
        assert ticket.next_admit < len(ticket.segments)
        batcher.hold_back(ticket, False)
        assert done.wait(60)
        assert isinstance(got[-1], Finished)
    finally:
        batcher.close()


def test_a_cache_one_long_segment_grew_is_dropped_once_idle(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A request with long segments grows every slot's KV cache; once
    the batch is idle that cache is dropped (the next request starts small again, and gets
    the same audio), instead of being held for the server's whole life."""
    import chattts_studio.core.engine.batch.batcher as batcher_module

    # Here any segment of this text outgrows the first size: keep nothing past it.
    monkeypatch.setattr(batcher_module, "KEEP_LENGTH", batcher_module.FIRST_LENGTH)
    order = SpeechOrder("你好，今天天气很好，我们去公园散步吧。", engine.sample_speaker(4), 4)
    batcher = Batcher(engine, slots=2)
    grown: list[int] = []
    batcher.step_listeners.append(lambda _ids: grown.append(batcher.decoder.max_len))
    batcher.start()
    try:
        done, first = _collect(batcher, order)
        assert done.wait(60) and isinstance(first[-1], Finished)
        assert max(grown) > batcher_module.FIRST_LENGTH  # it did grow while decoding
        deadline = time.monotonic() + 10
        while batcher.decoder.max_len > batcher_module.FIRST_LENGTH:
            assert time.monotonic() < deadline, "the grown cache was kept"
            time.sleep(0.01)
        done, again = _collect(batcher, order)
        assert done.wait(60) and np.array_equal(_audio(again), _audio(first))
    finally:
        batcher.close()


@pytest.mark.parametrize("kind", ["torch", "onnx"])
def test_under_int8_each_response_equals_its_solo_run_and_chunks_are_refused(
    demo_model: str, kind: str
) -> None:
    """Int8 quantizes a product's activations with one scale, so rows
    computed together change one another's bits. The batcher keeps one row per product
    under int8 (its default), refuses more, and shares no product even for requests that
    would (no seed): each request's audio, sharing the batch with others, is its audio
    alone."""
    from chattts_studio.core.errors import StudioError

    engine = Engine()
    engine.load(demo_model, "cpu", "int8", engine=kind)
    try:
        with pytest.raises(StudioError, match="cannot be used with int8"):
            Batcher(engine, slots=4, chunk_rows=4)
        # Asked to share products (requests without a seed): under int8 they stay exact.
        orders = [
            SpeechOrder("你好。今天天气很好。", engine.sample_speaker(1), 1, shared=True),
            SpeechOrder("Hello there. Good day.", engine.sample_speaker(2), 2, shared=True),
        ]
        batcher = Batcher(engine, slots=4)
        batcher.segment_size = 3
        batcher.start()
        try:
            together = [_collect(batcher, order) for order in orders]
            for done, _ in together:
                assert done.wait(60)
            for order, (_, got) in zip(orders, together, strict=True):
                done, alone = _collect(batcher, order)
                assert done.wait(60)
                assert np.array_equal(_audio(got), _audio(alone))
        finally:
            batcher.close()
    finally:
        engine.unload()


def _timed_vocode(
    monkeypatch: pytest.MonkeyPatch, engine: Engine, fail_call: int | None = None
) -> list[tuple[str, float, float]]:
    """Wrap the model's vocode: record (thread, start, end) of each call, each made slow
    enough that steps could happen meanwhile; `fail_call`: that call (1-based) raises."""
    model = engine.model
    assert model is not None
    real = model.vocode
    calls: list[tuple[str, float, float]] = []

    def vocode(hiddens: list[torch.Tensor]) -> list[np.ndarray]:
        started = time.perf_counter()
        time.sleep(0.15)
        if fail_call is not None and len(calls) + 1 == fail_call:
            calls.append((threading.current_thread().name, started, time.perf_counter()))
            raise RuntimeError("the vocoder broke")
        out = real(hiddens)
        calls.append((threading.current_thread().name, started, time.perf_counter()))
        return out

    monkeypatch.setattr(model, "vocode", vocode)
    return calls


def test_on_the_cpu_chunks_are_vocoded_beside_the_steps_with_the_same_audio(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The GPT steps on while the vocoder thread makes a chunk (the vocoder was a
    third of 16 clients' time), and the audio is bit for bit what vocoding inline gives."""
    order = SpeechOrder("你好。今天天气很好。我们去公园。", engine.sample_speaker(4), 4)
    inline = Batcher(engine, slots=4)
    assert inline._vocoding is not None  # the CPU's default: a vocoder thread
    inline._vocoding.shutdown()
    inline._vocoding = None
    inline.segment_size = 3
    inline.start()
    try:
        done, before = _collect(inline, order)
        assert done.wait(60) and isinstance(before[-1], Finished)
    finally:
        inline.close()
    calls = _timed_vocode(monkeypatch, engine)
    batcher = Batcher(engine, slots=4)
    batcher.segment_size = 3
    steps: list[float] = []
    batcher.step_listeners.append(lambda _ids: steps.append(time.perf_counter()))
    loop_start = time.perf_counter()
    batcher.start()
    try:
        done, got = _collect(batcher, order)
        assert done.wait(60) and isinstance(got[-1], Finished)
    finally:
        batcher.close()
    assert {name for name, _, _ in calls} == {"batcher-vocoder_0"}
    during = [t for t in steps if any(start < t < end for _, start, end in calls)]
    assert len(during) >= 5, "the steps waited for the vocoder"
    # Busy from the first step to the last chunk's end, the vocoder's time after the last
    # step included (/metrics' RTF is made of it); overlapping time is counted once. (The
    # slack: between two chunks, and after the last, the thread hands the audio on.)
    busy, end = batcher.stats.busy_seconds, calls[-1][2]
    assert end - steps[0] - 0.02 <= busy <= end - loop_start + 0.02, (busy, end - steps[0])
    indices = [c.index for c in got if isinstance(c, AudioChunk)]
    assert indices == sorted(indices) and len(indices) > len(set(indices))  # chunked, in order
    assert np.array_equal(_audio(got), _audio(before))


def test_a_chunk_the_vocoder_fails_fails_its_request_alone(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One vocoder call raises on the vocoder thread: one request gets Failed, last and once
    (nothing of it after), the other its whole audio, as it gets it alone."""
    orders = [
        SpeechOrder("你好。今天天气很好。", engine.sample_speaker(5), 5),
        SpeechOrder("我们。去公园。", engine.sample_speaker(6), 6),
    ]
    batcher = Batcher(engine, slots=4)
    batcher.segment_size = 3
    batcher.start()
    try:
        _timed_vocode(monkeypatch, engine, fail_call=2)
        together = [_collect(batcher, order) for order in orders]
        for done, _ in together:
            assert done.wait(60)
        monkeypatch.undo()
        ends = [got[-1] for _, got in together]
        assert sorted(type(end).__name__ for end in ends) == ["Failed", "Finished"]
        for order, (_, got) in zip(orders, together, strict=True):
            assert sum(isinstance(item, Failed | Finished) for item in got) == 1
            if isinstance(got[-1], Failed):
                assert "the vocoder broke" in str(got[-1].error)
                continue
            done, alone = _collect(batcher, order)
            assert done.wait(60)
            assert np.array_equal(_audio(got), _audio(alone))
        assert batcher.stats.failed == 1
    finally:
        batcher.close()


@pytest.mark.parametrize("refine", [False, True])
def test_a_requests_first_segment_runs_alone_to_its_first_chunk(
    engine: Engine, monkeypatch: pytest.MonkeyPatch, refine: bool
) -> None:
    """A lone request of several segments: its first segment is refined by itself (when
    refine is asked), and it steps as the only row until it has its first chunk's steps; then
    the others are refined together and join it."""
    from chattts_studio.core.engine.decode.streaming import FIRST_AUDIO_STEPS
    from chattts_studio.core.engine.request import RefineSettings

    model = engine.model
    assert model is not None
    rows: list[int] = []  # rows of each step, in order
    calls: list[tuple[int, int]] = []  # (texts refined, steps before the call)
    stock_refine = model.refine

    def refine_counted(texts, *args, **kwargs):  # type: ignore[no-untyped-def]
        calls.append((len(texts), len(rows)))
        return stock_refine(texts, *args, **kwargs)

    monkeypatch.setattr(model, "refine", refine_counted)
    batcher = Batcher(engine, slots=4)
    batcher.segment_size = 3
    batcher.step_listeners.append(lambda ids: rows.append(len(ids)))
    settings = RefineSettings("[oral_2][laugh_0][break_6]", 0.7, 20) if refine else None
    order = SpeechOrder("你好。今天天气很好。我们去公园。散步吧。", engine.sample_speaker(1), 1)
    order = SpeechOrder(order.text, order.speaker, 1, refine=settings)
    assert len(batcher.segments_of(order)) >= 3
    batcher.start()
    try:
        done, got = collect(batcher, order)
        assert done.wait(120)
        assert isinstance(got[-1], Finished), got[-1]
    finally:
        batcher.close()
    joined = next(i for i, n in enumerate(rows) if n > 1)
    assert joined >= FIRST_AUDIO_STEPS and set(rows[:joined]) == {1}, rows[: joined + 1]
    if refine:
        assert calls[0] == (1, 0), calls  # the first segment alone, before any step
        assert calls[1][0] > 1 and calls[1][1] >= FIRST_AUDIO_STEPS, calls
    else:
        assert not calls
