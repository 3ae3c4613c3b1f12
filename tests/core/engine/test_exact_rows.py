"""Exact steps on the CPU compute only the chunks of rows that hold a running job, and a job's
codes and hidden states stay those it has alone, bit for bit, whatever runs beside it."""

from collections.abc import Callable

import pytest
import torch

from chattts_studio.core.engine.decode.gpt_rows import Chunk
from chattts_studio.core.engine.decode.job import Job
from chattts_studio.core.engine.decode.loop import FastDecoder
from chattts_studio.core.engine.decode.rowwise import EXACT_CHUNK_ROWS
from chattts_studio.core.engine.engine import Engine
from chattts_studio.core.engine.request import Sampling

SAMPLING = Sampling(0.3, 0.7, 20)
SLOTS = 16
TARGET_STEPS = 40


def _emb(engine: Engine, text: str, seed: int) -> torch.Tensor:
    model = engine.model
    assert model is not None
    speaker = engine.sample_speaker(seed)
    return model.embed(model.prompt_ids(text, 5, speaker), speaker)


def _target(engine: Engine) -> Job:
    return Job(0, _emb(engine, "今天天气很好", 1), TARGET_STEPS, TARGET_STEPS, seed=123)


def _other(engine: Engine, key: int) -> Job:
    # Caps from 3 to 45 steps: rows end before, during and after the target's decode, and the
    # rows they free take the next job mid-decode. Every fifth prompt is long (a KV span past
    # one 256-position bucket).
    cap = 3 + (key * 7) % 43
    text = "你好世界" * (70 if key % 5 == 0 else 1 + key % 4)
    return Job(key, _emb(engine, text, 10 + key), cap, cap, seed=key)


def _decode(
    engine: Engine, arrivals: dict[int, list[Job]], slots: int = SLOTS, chunk: int | None = None
) -> tuple[Job, list[list[int]], list[int]]:
    """Jobs arrive before the step of their key in `arrivals`; returns the target, the slots
    that held a job at each step, and the target's slot at each of its steps."""
    assert engine.model is not None
    decoder = FastDecoder(engine.model, slots, 256, exact=True, chunk_rows=chunk)
    assert decoder.chunked and decoder.chunk == (chunk or EXACT_CHUNK_ROWS)
    waiting: list[Job] = list(arrivals.get(0, []))
    busy: list[list[int]] = []
    at: list[int] = []

    def on_step(_keys: list[int]) -> None:
        busy.append([s for s, job in enumerate(decoder.active) if job is not None])
        at.extend(s for s, job in enumerate(decoder.active) if job is not None and job.key == 0)
        waiting.extend(arrivals.get(len(busy), []))

    source: Callable[[], Job | None] = lambda: waiting.pop(0) if waiting else None  # noqa: E731
    torch.manual_seed(0)  # the global RNG must not matter to seeded jobs
    jobs = list(decoder.run(source, SAMPLING, lambda: False, on_step))
    target = next(j for j in jobs if j is not None and j.key == 0)
    return target, busy, at


_ALONE: dict[tuple[int, int], Job] = {}


def _alone(engine: Engine, chunk: int, slots: int = SLOTS) -> Job:
    """The target decoded alone (slot 0), once per chunk size and slot count."""
    if (chunk, slots) not in _ALONE:
        target, busy, _at = _decode(engine, {0: [_target(engine)]}, slots, chunk)
        assert target.steps == TARGET_STEPS and all(rows == [0] for rows in busy)
        _ALONE[chunk, slots] = target
    return _ALONE[chunk, slots]


# (others, when each comes, the target's slot, the most rows busy at once). The others' caps
# (see _other) end rows before, during and after the target's decode; late arrivals take the
# rows they free, mid-decode.
Arrivals = Callable[[Job, list[Job]], dict[int, list[Job]]]
CASES: dict[str, tuple[int, Arrivals, int, int]] = {
    "1 other, beside it": (1, lambda t, o: {0: [o[0], t]}, 1, 2),
    "3 others, last row of the first chunk of 4": (3, lambda t, o: {0: [*o, t]}, 3, 4),
    "7 others, joins at step 5, one more joins after": (
        7,
        lambda t, o: {0: o[:6], 5: [t], 8: o[6:]},
        6,
        8,
    ),
    "15 others, joins at step 3; a freed row taken at step 9": (
        15,
        lambda t, o: {0: o[:14], 3: [t], 9: o[14:]},
        14,
        15,
    ),
}
RUNS = [(case, EXACT_CHUNK_ROWS) for case in CASES] + [(case, 4) for case in list(CASES)[2:]]


@pytest.mark.parametrize(("case", "chunk"), RUNS)
def test_a_job_is_the_same_bits_with_others_as_alone(engine: Engine, case: str, chunk: int) -> None:
    """The target alone, and with 1, 3, 7 and 15 others that end and are replaced while it
    runs: the same codes and hidden states, bit for bit; from the slot the case names, and
    (chunks of 4) in a chunk it shares with others, past the first chunk."""
    count, arrivals, slot, peak = CASES[case]
    others = [_other(engine, key) for key in range(1, count + 1)]
    target, busy, at = _decode(engine, arrivals(_target(engine), others), chunk=chunk)
    alone = _alone(engine, chunk)
    assert torch.equal(torch.stack(target.tokens), torch.stack(alone.tokens))
    assert torch.equal(torch.stack(target.hiddens), torch.stack(alone.hiddens))
    assert set(at) == {slot} and max(len(rows) for rows in busy) == peak
    first = slot - slot % chunk
    beside = {s for rows in busy for s in rows if s != slot and s - s % chunk == first}
    assert beside or chunk == 1


def test_a_lone_job_computes_one_chunk_and_a_crowd_only_the_chunks_in_use(
    engine: Engine,
) -> None:
    """Every layer product of a step sees exactly one chunk's rows, and a step runs only the
    chunks that hold a running job: one for a lone job, not the 16 slots."""
    assert engine.model is not None
    for chunk in (EXACT_CHUNK_ROWS, 4):
        decoder = FastDecoder(engine.model, SLOTS, 256, exact=True, chunk_rows=chunk)
        shapes: list[list[int]] = []
        real = decoder._chunk_layer

        def spy(
            li: int,
            chunks: list[Chunk],
            real: Callable[..., None] = real,
            shapes: list[list[int]] = shapes,
        ) -> None:
            shapes.append([ch.x.shape[0] for ch in chunks])
            real(li, chunks)

        decoder._chunk_layer = spy  # type: ignore[method-assign]
        lone = [Job(0, _emb(engine, "你好", 1), 12, 12, seed=1)]
        list(decoder.run(lone, SAMPLING, lambda: False))
        assert shapes and all(rows == [chunk] for rows in shapes)
        shapes.clear()
        crowd = [Job(k, _emb(engine, "你好", k), 12, 12, seed=k) for k in range(6)]  # slots 0-5
        list(decoder.run(crowd, SAMPLING, lambda: False))
        assert shapes and all(rows == [chunk] * -(-6 // chunk) for rows in shapes)


def test_slots_not_a_multiple_of_the_chunk_keep_every_row_exact(engine: Engine) -> None:
    """Six slots in chunks of 4: the last chunk is padded with rows that never hold a job, so
    a job in slot 5 still runs in a chunk of 4 rows, beside another, and matches its decode
    alone."""
    others = [_other(engine, key) for key in range(1, 6)]
    target, _busy, at = _decode(engine, {0: [*others, _target(engine)]}, slots=6, chunk=4)
    alone = _alone(engine, 4, slots=6)
    assert set(at) == {5}
    assert torch.equal(torch.stack(target.tokens), torch.stack(alone.tokens))
    assert torch.equal(torch.stack(target.hiddens), torch.stack(alone.hiddens))


def _shared(job: Job) -> Job:
    job.shared = True
    return job


@pytest.mark.parametrize("chunk", [EXACT_CHUNK_ROWS, 4])
def test_a_job_keeps_its_bits_beside_shared_jobs(engine: Engine, chunk: int) -> None:
    """The promise: 15 shared jobs (one product among them) that end and are replaced
    while an exact job runs; the exact job's codes and hidden states are those it has alone,
    bit for bit, in a chunk of its own (1) and in a chunk of 4 that holds shared rows."""
    others = [_shared(_other(engine, key)) for key in range(1, 16)]
    arrivals = {0: others[:14], 3: [_target(engine)], 9: others[14:]}
    target, busy, at = _decode(engine, arrivals, chunk=chunk)
    alone = _alone(engine, chunk)
    assert torch.equal(torch.stack(target.tokens), torch.stack(alone.tokens))
    assert torch.equal(torch.stack(target.hiddens), torch.stack(alone.hiddens))
    # The exact job takes the lowest free row, shared ones fill from the top: in chunks of 4
    # its chunk (rows 0-3) holds shared rows 2 and 3, which that chunk computes too.
    assert set(at) == {0} and max(len(rows) for rows in busy) == 15
    assert chunk == 1 or {2, 3} <= set(busy[3])


def test_shared_jobs_step_as_one_product_side_by_side(engine: Engine) -> None:
    """Two exact jobs and six shared ones: each step runs the exact ones in chunks of one
    and the shared ones as one product of six rows, in the six highest slots."""
    assert engine.model is not None
    decoder = FastDecoder(engine.model, SLOTS, 256, exact=True)
    chunks: list[list[int]] = []
    products: list[list[int]] = []
    real_chunk, real_shared = decoder._chunk_layer, decoder._shared_step

    def chunk_spy(li: int, step: list[Chunk]) -> None:
        if li == 0:
            chunks.append([ch.start for ch in step if ch.x.shape[0] == 1])
        real_chunk(li, step)

    def shared_spy(slots: list[int], *rest: object) -> None:
        products.append(list(slots))
        real_shared(slots, *rest)  # type: ignore[arg-type]

    decoder._chunk_layer = chunk_spy  # type: ignore[method-assign]
    decoder._shared_step = shared_spy  # type: ignore[method-assign]
    exact = [Job(k, _emb(engine, "你好", k), 10, 10, seed=k) for k in range(2)]
    crowd = [_shared(Job(k, _emb(engine, "你好", k), 10, 10, seed=k)) for k in range(2, 8)]
    done = [j for j in decoder.run([*exact, *crowd], SAMPLING, lambda: False) if j]
    assert sorted(j.key for j in done) == list(range(8))
    assert all(j.steps == 10 for j in done)
    assert chunks and all(step == [0, 1] for step in chunks)
    assert products and all(slots == list(range(10, 16)) for slots in products)


def test_a_lone_shared_job_has_the_bits_of_an_exact_one(engine: Engine) -> None:
    """A client alone gets what `synth` does: a lone shared row is a product of one row, the
    same ops as an exact chunk of one (only from a slot of its own: the highest)."""
    target, _busy, at = _decode(engine, {0: [_shared(_target(engine))]})
    alone = _alone(engine, EXACT_CHUNK_ROWS)
    assert set(at) == {SLOTS - 1}
    assert torch.equal(torch.stack(target.tokens), torch.stack(alone.tokens))
    assert torch.equal(torch.stack(target.hiddens), torch.stack(alone.hiddens))


def test_shared_jobs_compute_their_own_decode_to_rounding(engine: Engine) -> None:
    """Sharing a product changes last bits only: each of four shared jobs decoded together
    has, until its first code that differs, the hidden states of its exact decode alone to
    within rounding (a wrong key, value or row would be far off)."""
    assert engine.model is not None
    texts = ["你好世界", "今天天气很好", "Hello there.", "一二三四五六七八九十"]

    def job(k: int) -> Job:
        return Job(k, _emb(engine, texts[k], 20 + k), 20, 20, seed=50 + k)

    decoder = FastDecoder(engine.model, SLOTS, 256, exact=True)
    together = {j.key: j for j in decoder.run([_shared(job(k)) for k in range(4)], SAMPLING,
                                               lambda: False) if j}  # fmt: skip
    compared = 0
    for k in range(4):
        alone = next(j for j in decoder.run([job(k)], SAMPLING, lambda: False) if j)
        same = 0
        while same < 20 and torch.equal(together[k].tokens[same], alone.tokens[same]):
            same += 1
        got = torch.stack(together[k].hiddens[: same + 1])
        want = torch.stack(alone.hiddens[: same + 1])
        assert torch.allclose(got, want, rtol=1e-4, atol=1e-4), float((got - want).abs().max())
        compared += same + 1
    assert compared >= 8  # the first step's hidden states at least, and some after


def test_under_bf16_a_job_keeps_its_bits_beside_shared_jobs(demo_model: str) -> None:
    """The promise under bf16 too (PyTorch; ONNX Runtime runs fp32 and int8, tested in
    test_onnx_engine and test_batcher): seven shared jobs beside an exact one, which keeps
    the codes and hidden states it has alone."""
    bf16 = Engine()
    bf16.load(demo_model, "cpu", "bf16")
    try:
        others = [_shared(_other(bf16, key)) for key in range(1, 8)]
        target, _busy, at = _decode(bf16, {0: others[:6], 2: [_target(bf16)], 7: others[6:]})
        alone, _busy, _at = _decode(bf16, {0: [_target(bf16)]})
        assert set(at) == {0} and target.steps == TARGET_STEPS
        assert torch.equal(torch.stack(target.tokens), torch.stack(alone.tokens))
        assert torch.equal(torch.stack(target.hiddens), torch.stack(alone.hiddens))
    finally:
        bf16.unload()
