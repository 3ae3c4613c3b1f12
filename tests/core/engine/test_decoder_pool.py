"""Decoders kept for the loaded model's life: reused across jobs with no state
leaking from one job to the next, let go on unload, precision change, out of memory and
release_memory; rows from free memory on CUDA."""

import dataclasses
import gc
import inspect
import weakref
from collections.abc import Iterator

import pytest
import torch

from chattts_studio.core.engine import decoder_pool
from chattts_studio.core.engine.batch.batcher import Batcher
from chattts_studio.core.engine.batch.tickets import Failed, Finished, SpeechOrder, collect
from chattts_studio.core.engine.decode.job import Job, NonFiniteError
from chattts_studio.core.engine.decode.loop import FastDecoder
from chattts_studio.core.engine.decode.slots import DecoderShape, SlotDecoder
from chattts_studio.core.engine.decoder_pool import DecoderPool, kv_row_bytes, rows_that_fit
from chattts_studio.core.engine.devices import Device
from chattts_studio.core.engine.engine import Engine
from chattts_studio.core.engine.pipeline import release_memory
from chattts_studio.core.engine.request import Sampling, SynthesisRequest
from chattts_studio.core.errors import Cancelled

SAMPLING = Sampling(0.7, 0.7, 20)
STEPS = 24


def _jobs(engine: Engine, texts: list[str], first_key: int = 0) -> list[Job]:
    model = engine.model
    assert model is not None
    jobs = []
    for n, text in enumerate(texts):
        speaker = engine.sample_speaker(n + 1)
        emb = model.embed(model.prompt_ids(text, 5, speaker), speaker)
        job = Job(first_key + n, emb, STEPS, STEPS)
        job.seed = 100 + first_key + n
        jobs.append(job)
    return jobs


def _decode(decoder: FastDecoder, jobs: list[Job], failed=None) -> dict[int, Job]:  # type: ignore[no-untyped-def]
    torch.manual_seed(5)
    return {j.key: j for j in decoder.run(jobs, SAMPLING, bool, None, failed) if j is not None}


def _same(a: dict[int, Job], b: dict[int, Job]) -> None:
    assert a.keys() == b.keys() and a
    for key in a:
        assert torch.equal(torch.stack(a[key].tokens), torch.stack(b[key].tokens)), key
        assert torch.equal(torch.stack(a[key].hiddens), torch.stack(b[key].hiddens)), key


FORMS = {"eager": {}, "static": {"static": True}, "exact": {"exact": True}}


@pytest.mark.parametrize("form", list(FORMS))
def test_a_reused_decoder_gives_what_fresh_decoders_give(engine: Engine, form: str) -> None:
    model = engine.model
    assert model is not None
    pool = DecoderPool()
    options = FORMS[form]
    first = ["今天天气很好", "我们去公园散步吧"]
    second = ["明天见", "有的在跑步，有的在下棋", "然后回家"]
    kept = pool.decoder(model, DecoderShape(2, **options), 200)
    got_first = _decode(kept, _jobs(engine, first))
    again = pool.decoder(model, DecoderShape(2, **options), 200)
    assert again is kept and pool.built == 1  # no new cache, no new capture
    got_second = _decode(again, _jobs(engine, second, 10))
    _same(got_first, _decode(FastDecoder(model, 2, 512, **options), _jobs(engine, first)))
    _same(got_second, _decode(FastDecoder(model, 2, 512, **options), _jobs(engine, second, 10)))


def test_a_shape_is_the_constructor_s_options_and_asks_the_pool_for_one_decoder(
    engine: Engine,
) -> None:
    """DecoderShape's fields are SlotDecoder's own options, in order (a new option is added
    to both or the shape cannot build it); a decoder built from a shape has that form, and
    the pool keeps graphs and exact steps under the static shape they are."""
    model = engine.model
    assert model is not None
    params = list(inspect.signature(SlotDecoder.__init__).parameters)
    options = [p for p in params if p not in ("self", "model", "max_len")]
    assert [f.name for f in dataclasses.fields(DecoderShape)] == options
    shape = DecoderShape(3, exact=True, chunk_rows=2, late_flags=True)
    built = FastDecoder.shaped(model, shape, 64)
    assert (built.slots, built.max_len, built.exact, built.static) == (3, 64, True, True)
    assert built.chunked and built.chunk == 2 and not built.ahead  # chunked: no steps ahead
    pool = DecoderPool()
    kept = pool.decoder(model, DecoderShape(2, exact=True), 100)
    assert pool.decoder(model, DecoderShape(2, static=True, exact=True), 100) is kept
    assert pool.decoder(model, DecoderShape(2), 100) is not kept and pool.built == 2


def test_a_job_after_a_non_finite_row_is_unchanged(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A row whose numbers went NaN (its cache too, as an fp16 overflow leaves it) fails its
    job alone; the next job through that row of the kept decoder is as on a fresh one."""
    model = engine.model
    assert model is not None
    pool = DecoderPool()
    kept = pool.decoder(model, DecoderShape(2, exact=True), 256)
    real = FastDecoder._logits
    calls = [0]

    def poisoned(self: FastDecoder, hidden: torch.Tensor) -> torch.Tensor:
        logits = real(self, hidden)
        calls[0] += 1
        if self is kept and calls[0] == 4:
            logits[: self.num_vq] = float("nan")
            self.v_cache[:, 0] = float("nan")
        return logits

    monkeypatch.setattr(FastDecoder, "_logits", poisoned)
    failures: list[int] = []
    done = _decode(
        kept, _jobs(engine, ["今天天气很好", "我们去公园"]), lambda j, e: failures.append(j.key)
    )
    assert failures == [0] and list(done) == [1]
    monkeypatch.setattr(FastDecoder, "_logits", real)
    after = _jobs(engine, ["明天见", "然后回家"], 10)
    reused = pool.decoder(model, DecoderShape(2, exact=True), 256)
    assert reused is kept
    _same(
        _decode(reused, after),
        _decode(FastDecoder(model, 2, 256, exact=True), _jobs(engine, ["明天见", "然后回家"], 10)),
    )


@pytest.fixture
def own_engine(demo_model: str) -> Iterator[Engine]:
    engine = Engine()
    engine.load(demo_model, "cpu", "fp32")
    yield engine
    engine.unload()


def _synthesize(engine: Engine, batch: int = 2) -> list[object]:
    request = SynthesisRequest(
        "你好。今天天气很好。", segment_size=5, refine_text=False, batch_size=batch
    )
    return list(engine.synthesize(request))


def _kept(engine: Engine) -> weakref.ReferenceType[FastDecoder]:
    (decoder,) = engine.decoders._decoders.values()
    return weakref.ref(decoder)


def test_jobs_reuse_the_engines_decoder(own_engine: Engine) -> None:
    first = _synthesize(own_engine)
    kept = _kept(own_engine)
    second = _synthesize(own_engine)
    assert own_engine.decoders.built == 1 and _kept(own_engine)() is kept()
    for a, b in zip(first, second, strict=True):
        assert (a.audio == b.audio).all()  # type: ignore[attr-defined]


@pytest.mark.parametrize("how", ["unload", "precision", "release_memory"])
def test_the_decoder_is_let_go(own_engine: Engine, demo_model: str, how: str) -> None:
    _synthesize(own_engine)
    kept = _kept(own_engine)
    if how == "unload":
        own_engine.unload()
    elif how == "precision":
        own_engine.load(demo_model, "cpu", "bf16")
    else:
        release_memory("cpu")
    gc.collect()
    assert kept() is None and len(own_engine.decoders) == 0


def test_out_of_memory_lets_go_of_the_big_decoder(
    own_engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    _synthesize(own_engine)
    big = _kept(own_engine)
    real = FastDecoder._logits
    seen: list[int] = []

    def failing(self: FastDecoder, hidden: torch.Tensor) -> torch.Tensor:
        if self.slots > 1:
            seen.append(self.slots)
            raise torch.OutOfMemoryError("CUDA out of memory (injected)")
        return real(self, hidden)

    monkeypatch.setattr(FastDecoder, "_logits", failing)
    results = _synthesize(own_engine)
    assert seen == [2] and len(results) == 2  # both sentences, whole
    assert own_engine.last_summary is not None and own_engine.last_summary.batch_size == 1
    gc.collect()
    assert big() is None
    assert [d.slots for d in own_engine.decoders._decoders.values()] == [1]


def test_a_batch_out_of_memory_drops_the_batchers_decoder(
    own_engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    batcher = Batcher(own_engine, slots=2)
    kept = weakref.ref(batcher.decoder)
    real = FastDecoder._logits
    raised: list[int] = []

    def failing(self: FastDecoder, hidden: torch.Tensor) -> torch.Tensor:
        if not raised:
            raised.append(1)
            raise torch.OutOfMemoryError("CUDA out of memory (injected)")
        return real(self, hidden)

    monkeypatch.setattr(FastDecoder, "_logits", failing)
    batcher.start()
    try:
        done, got = collect(batcher, SpeechOrder("你好。", own_engine.sample_speaker(1), 1))
        assert done.wait(60) and isinstance(got[-1], Failed)
        gc.collect()
        assert kept() is None  # let go, with its cache
        done, got = collect(batcher, SpeechOrder("你好。", own_engine.sample_speaker(1), 1))
        assert done.wait(60) and isinstance(got[-1], Finished)  # on a fresh decoder
        assert batcher.decoder.slots == 2
    finally:
        batcher.close()


def test_the_pool_keeps_no_more_than_its_cap(engine: Engine) -> None:
    model = engine.model
    assert model is not None
    one = kv_row_bytes(model, 256)
    pool = DecoderPool(max_bytes=3 * one)
    with pool.lend(model, DecoderShape(2), 100):
        pass
    with pool.lend(model, DecoderShape(1), 100):
        pass  # 3 rows: at the cap
    assert len(pool) == 2
    with pool.lend(model, DecoderShape(3), 100):
        pass
    assert [d.slots for d in pool._decoders.values()] == [3]
    with pool.lend(model, DecoderShape(3), 300) as grown:
        assert grown.max_len == 512  # a longer job: a larger one, rounded to the bucket
    assert len(pool) == 0  # over the cap alone: not kept after its job


# -- rows from free memory on CUDA -------------------------------------------------------------
def test_rows_from_free_memory(engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    model = engine.model
    assert model is not None
    row = kv_row_bytes(model, decoder_pool.SIZING_LENGTH)
    cfg = model.gpt.config
    head_dim = cfg.hidden_size // cfg.num_attention_heads
    assert row == 2 * cfg.num_hidden_layers * cfg.num_key_value_heads * 1024 * head_dim * 4
    assert rows_that_fit(0, row) == 1
    assert rows_that_fit(10**15, row) == decoder_pool.MAX_ROWS
    assert rows_that_fit(100 * row, row) == 80  # the margin for activations

    free = 37 * row
    monkeypatch.setattr(torch.cuda, "mem_get_info", lambda device=None: (free, 10 * free))
    loaded = engine.loaded
    assert loaded is not None
    cuda = dataclasses.replace(loaded, device=Device("cuda:0", "Fake GPU", 10 * free))
    monkeypatch.setattr(engine, "loaded", cuda)
    monkeypatch.setattr(engine, "cuda_graphs", False)  # the model is on the CPU really
    expected = int(37 * decoder_pool.MEMORY_SHARE)
    assert engine.max_rows() == expected
    plan = engine.plan(SynthesisRequest("你好。" * 60, segment_size=5, refine_text=False))
    assert plan.batch_size == expected  # the fast path's largest batch
    assert Batcher(engine).slots == expected  # the server's rows
    assert Batcher(engine, slots=3).slots == 3  # an explicit --slots wins


def test_rows_stay_fixed_on_the_cpu(engine: Engine) -> None:
    assert engine.max_rows() == 16 and Batcher(engine).slots == 16


@pytest.mark.parametrize(("error", "kept"), [(Cancelled, True), (NonFiniteError, False)])
def test_a_job_that_raises_leaves_the_pool_its_decoder_only_when_cancelled(
    engine: Engine, error: type[Exception], kept: bool
) -> None:
    model = engine.model
    assert model is not None
    pool = DecoderPool()
    with pytest.raises(error), pool.lend(model, DecoderShape(2), 100) as decoder:
        raise error("stop")
    assert (pool.decoder(model, DecoderShape(2), 100) is decoder) is kept
