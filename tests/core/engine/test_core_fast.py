"""Studio's own decode loop: stock's exact tokens, continuous batching, streaming, OOM."""

import numpy as np
import pytest
import torch

from chattts_studio.core.engine.decode.job import Job
from chattts_studio.core.engine.decode.loop import FastDecoder
from chattts_studio.core.engine.engine import Engine
from chattts_studio.core.engine.request import AudioChunk, Sampling, SynthesisRequest
from chattts_studio.core.text.prepare import split_segments

TEXT = "今天天气很好。我们去公园散步吧！公园里有很多人，有的在跑步，有的在下棋。然后回家。"


def _prompt(engine: Engine, text: str, speaker: str) -> torch.Tensor:
    model = engine.model
    assert model is not None
    return model.embed(model.prompt_ids(text, 5, speaker), speaker)


@pytest.mark.parametrize(
    ("static", "late", "fused"),
    [(False, False, 0), (True, False, 0), (True, True, 0), (True, True, 8)],
    ids=["eager", "static", "static-late-flags", "fused-steps"],
)
@pytest.mark.parametrize(("top_k", "temperature"), [(1, 0.3), (20, 0.3), (20, 0.7)])
def test_fast_loop_gives_stock_tokens_and_hidden_states(
    engine: Engine, top_k: int, temperature: float, static: bool, late: bool, fused: int
) -> None:
    """Same inputs and seed: ChatTTS's generate() and ours draw the same codes, step for step
    (greedy top-K 1, and sampled too, since both consume the RNG identically at batch 1;
    ours draws without multinomial, see rowwise.exponential_draw), also when the static step
    reads its flags late (the GPU's default) and when 8 whole steps run as one unit."""
    import ChatTTS

    model = engine.model
    assert model is not None
    chat = model._chat
    speaker = engine.sample_speaker(3)
    text = "今天天气很好我们去公园散步"
    steps = 120
    params = ChatTTS.Chat.InferCodeParams(
        spk_emb=speaker,
        max_new_token=steps,
        min_new_token=steps,
        show_tqdm=False,
        top_K=top_k,
        temperature=temperature,
        ensure_non_empty=False,
    )
    torch.manual_seed(11)
    stock = next(chat._infer_code([text], False, chat.device, True, params))  # type: ignore[attr-defined]
    emb = _prompt(engine, text, speaker)
    decoder = FastDecoder(
        model, 1, emb.shape[1] + steps + 1, static=static, late_flags=late, fused_steps=fused
    )
    assert decoder.ahead == late and decoder.fused_steps == fused
    torch.manual_seed(11)
    done = [
        j
        for j in decoder.run(
            [Job(0, emb, steps, steps)], Sampling(temperature, 0.7, top_k), lambda: False
        )
        if j
    ]
    ours = torch.stack(done[0].tokens)
    assert ours.shape == stock.ids[0].shape == (steps, 4)
    assert torch.equal(ours, stock.ids[0])
    if static:  # the GPU's form: a bucketed, masked span sums in another order
        assert torch.allclose(torch.stack(done[0].hiddens), stock.hiddens[0], atol=1e-5)
    else:
        assert torch.equal(torch.stack(done[0].hiddens), stock.hiddens[0])


def _decode_all(engine: Engine, **options: bool) -> tuple[list[int], list[torch.Tensor]]:
    assert engine.model is not None
    speaker = engine.sample_speaker(1)
    emb = _prompt(engine, "你好", speaker)
    caps = [40, 7, 90, 13, 25, 60]
    jobs = [Job(i, emb, cap, cap) for i, cap in enumerate(caps)]
    decoder = FastDecoder(engine.model, 3, emb.shape[1] + max(caps) + 1, **options)
    torch.manual_seed(0)
    order = [j.key for j in decoder.run(jobs, Sampling(0.3, 0.7, 20), lambda: False) if j]
    return order, [torch.stack(j.tokens) for j in jobs]


def test_static_steps_give_the_eager_loops_tokens_with_rows_coming_and_going(
    engine: Engine,
) -> None:
    """The GPU's fixed-shape step (all slots, bucketed span, positions on the device) draws
    the same codes as the eager loop while rows end and new segments take their slots."""
    eager = _decode_all(engine)
    static = _decode_all(engine, static=True)
    assert static[0] == eager[0]
    assert all(torch.equal(a, b) for a, b in zip(static[1], eager[1], strict=True))


def test_the_graph_path_feeds_its_static_buffers(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """CUDA graphs cannot be captured here; a stand-in that runs the step on the graph's own
    static buffers (as a replay would) proves the decoder fills and reads them right, and a
    failed capture falls back to the eager step."""
    import chattts_studio.core.engine.decode.slots

    spans: list[int] = []

    class Replay:
        def __init__(self, step, slots, num_vq, device):  # type: ignore[no-untyped-def]
            self.step = step
            self.codes = torch.zeros(slots, num_vq, dtype=torch.long)
            self.pos = torch.zeros(slots, dtype=torch.long)

        def run(self, codes, pos, span):  # type: ignore[no-untyped-def]
            self.codes.copy_(codes)
            self.pos.copy_(pos)
            spans.append(span)
            return self.step(self.codes, self.pos, span).clone()

    monkeypatch.setattr(chattts_studio.core.engine.decode.slots, "StepGraphs", Replay)
    eager = _decode_all(engine)
    graphed = _decode_all(engine, graphs=True)
    assert graphed[0] == eager[0]
    assert all(torch.equal(a, b) for a, b in zip(graphed[1], eager[1], strict=True))
    # Every replay attends over a bucketed span: a multiple of the bucket, or the whole cache.
    max_len = _prompt(engine, "你好", engine.sample_speaker(1)).shape[1] + 91
    assert spans and {
        min(max_len, -(-s // chattts_studio.core.engine.decode.slots.SPAN_BUCKET) * 256)
        for s in spans
    } == set(spans)

    class Failing(Replay):
        def run(self, codes, pos, span):  # type: ignore[no-untyped-def]
            return None  # capture failed

    monkeypatch.setattr(chattts_studio.core.engine.decode.slots, "StepGraphs", Failing)
    fallen = _decode_all(engine, graphs=True)
    assert all(torch.equal(a, b) for a, b in zip(fallen[1], eager[1], strict=True))


def test_a_decoder_with_graphs_is_freed_without_a_garbage_collection(engine: Engine) -> None:
    """The graphs hold the decoder's step weakly: a reference cycle would keep the KV cache
    and the graph pool on the GPU until a collection (the window collects only on a timer),
    and the next job's cache would pile up beside it."""
    import gc
    import weakref

    assert engine.model is not None
    decoder = FastDecoder(engine.model, 2, 300, static=True, graphs=True)
    assert decoder._graphs is not None
    gone = weakref.ref(decoder)
    cache = weakref.ref(decoder.k_cache)
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        del decoder
        assert gone() is None and cache() is None
    finally:
        if was_enabled:
            gc.enable()


def test_real_weights_stop_at_eos_and_rows_refill(engine: Engine) -> None:
    """Without the demo's EOS hold-off, rows end at their own EOS or cap and the freed row
    takes the next job (continuous batching): every job comes back exactly once."""
    speaker = engine.sample_speaker(1)
    emb = _prompt(engine, "你好", speaker)
    caps = [40, 7, 90, 13, 25, 60]
    jobs = [Job(i, emb, cap, 1) for i, cap in enumerate(caps)]
    assert engine.model is not None
    decoder = FastDecoder(engine.model, 3, emb.shape[1] + max(caps) + 1)
    torch.manual_seed(0)
    order = [j.key for j in decoder.run(jobs, Sampling(0.3, 0.7, 20), lambda: False) if j]
    assert sorted(order) == list(range(len(caps)))
    for job in jobs:
        assert 0 <= job.steps <= job.cap
        eos = 625
        assert all(not bool(t.eq(eos).any()) for t in job.tokens)
    assert order[0] == 1  # the 7-step job ends first and its row is reused


def test_fast_and_stock_paths_give_the_same_segments(engine: Engine) -> None:
    base = SynthesisRequest(TEXT, segment_size=20, batch_size=3, refine_text=False)
    fast = list(engine.synthesize(base))
    from dataclasses import replace

    stock = list(engine.synthesize(replace(base, decoder="stock")))
    assert [(r.index, r.text, r.steps) for r in fast] == [(r.index, r.text, r.steps) for r in stock]
    for a, b in zip(fast, stock, strict=True):
        assert abs(len(a.audio) - len(b.audio)) <= 256


def test_streamed_chunks_come_early_in_order_and_make_the_result(engine: Engine) -> None:
    chunks: list[AudioChunk] = []
    request = SynthesisRequest(TEXT, segment_size=20, batch_size=2, refine_text=False)
    results = list(engine.synthesize(request, chunks.append))  # type: ignore[arg-type]
    indices = [c.index for c in chunks]
    assert indices == sorted(indices)
    assert [c.index for c in chunks if c.final] == [r.index for r in results]
    first = [c for c in chunks if c.index == 0]
    assert len(first) > 2, "the first segment should arrive in several pieces"
    assert len(first[0].audio) < len(results[0].audio) / 4
    for result in results:
        joined = np.concatenate([c.audio for c in chunks if c.index == result.index])
        assert np.array_equal(joined, result.audio)
    # Streamed audio is the whole-segment decode up to float rounding (context and hold cover
    # the vocoder's receptive field; measured 1e-7): no seams at the joins.
    again = list(engine.synthesize(request))
    whole = again[0].audio
    assert len(whole) == len(results[0].audio)
    assert np.abs(whole - results[0].audio).max() <= 1e-4 * np.abs(whole).max()
    summary = engine.last_summary
    assert summary is not None and summary.first_audio_seconds is not None


def test_out_of_memory_halves_the_batch_and_finishes(engine: Engine, inject_oom: list[int]) -> None:
    failures = inject_oom
    notes = []
    request = SynthesisRequest(TEXT, segment_size=20, batch_size=4, refine_text=False)
    results = []
    for result in engine.synthesize(request):
        notes.append(engine.live.snapshot().note)
        results.append(result)
    assert failures == [4]  # 4 segments (the first sentence apart): batch 4, then 2
    assert [r.index for r in results] == list(range(len(split_segments(TEXT, 20, None, True))))
    assert {r.batch_size for r in results} == {2}
    assert "out of memory: batch size lowered to 2" in notes[0]


def test_audition_reads_one_text_with_every_speaker_in_one_pass(engine: Engine) -> None:
    speakers = [engine.sample_speaker(seed) for seed in (1, 2, 3)]
    request = SynthesisRequest(
        "你好。Hello there.", segment_size=5, refine_text=False, pause_seconds=0.1
    )
    rows: list[int] = []
    real = FastDecoder.__init__

    def spy(self, model, slots, max_len, **kwargs):  # type: ignore[no-untyped-def]
        rows.append(slots)
        real(self, model, slots, max_len, **kwargs)

    import pytest as _pytest

    with _pytest.MonkeyPatch.context() as patch:
        patch.setattr(FastDecoder, "__init__", spy)
        voices = engine.audition(request, speakers)
    segments = engine.plan(request).segments
    assert rows == [len(speakers) * len(segments)]  # every speaker x segment in one decoder
    expected = sum(s.step_cap for s in segments) * 512 + (len(segments) - 1) * 2400
    for voice in voices:
        assert expected - 256 * len(segments) <= len(voice) <= expected
    assert not np.array_equal(voices[0][:10000], voices[1][:10000])
