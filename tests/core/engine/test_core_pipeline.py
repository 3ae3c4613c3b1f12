"""The pipeline never loses, repeats or pins anything: out of memory injected wherever it can
happen, NaN logits, cancel at every stage, batched vocoding, progress, and segments that are
never cut short."""

import dataclasses
import itertools
import threading
import weakref
from collections.abc import Callable, Iterator

import numpy as np
import pytest
import torch

from chattts_studio.core.engine import producers
from chattts_studio.core.engine.cancel import CancelToken
from chattts_studio.core.engine.chattts.chat import ChatModel, RefinePass
from chattts_studio.core.engine.decode.job import NonFiniteError
from chattts_studio.core.engine.decode.loop import FastDecoder
from chattts_studio.core.engine.decode.streaming import ChunkVocoder
from chattts_studio.core.engine.engine import Engine
from chattts_studio.core.engine.metrics import LiveMetrics
from chattts_studio.core.engine.request import (
    AudioChunk,
    SegmentRestarted,
    SegmentResult,
    SynthesisRequest,
)
from chattts_studio.core.errors import Cancelled, DeviceError, StudioError
from chattts_studio.core.text.prepare import (
    MAX_STEP_CAP,
    PLAN_STEP_LIMIT,
    needed_steps,
)

TEXT = "今天天气很好。我们去公园散步吧！公园里有很多人，有的在跑步，有的在下棋。然后回家。"
OOM = torch.OutOfMemoryError
VOCODE_TOLERANCE = 1e-6


def request(text: str = TEXT, **kw: object) -> SynthesisRequest:
    base: dict[str, object] = {"segment_size": 20, "batch_size": 4, "refine_text": False}
    base.update(kw)
    return SynthesisRequest(text, **base)  # type: ignore[arg-type]


class Listener:
    """What a window does with the events: appends chunks, drops a restarted segment's."""

    def __init__(self) -> None:
        self.chunks: dict[int, list[np.ndarray]] = {}
        self.restarted: list[int] = []

    def __call__(self, event: AudioChunk | SegmentRestarted) -> None:
        if isinstance(event, SegmentRestarted):
            self.restarted.append(event.index)
            self.chunks.pop(event.index, None)
        else:
            self.chunks.setdefault(event.index, []).append(event.audio)

    def audio(self, index: int) -> np.ndarray:
        return np.concatenate(self.chunks[index])


def fail_once(
    owner: object, name: str, when: Callable[..., bool]
) -> tuple[list[int], Callable[..., object]]:
    """A stand-in for owner.name that raises CUDA out-of-memory the first time `when(*args)`
    holds, and a list that records the failure."""
    real = getattr(owner, name)
    failed: list[int] = []

    def wrapper(*args, **kwargs):  # type: ignore[no-untyped-def]
        if not failed and when(*args, **kwargs):
            failed.append(1)
            raise OOM("CUDA out of memory (injected)")
        return real(*args, **kwargs)

    return failed, wrapper


def _steps_counter() -> Callable[..., bool]:
    count = [0]

    def at_step(*_args: object, **_kw: object) -> bool:
        count[0] += 1
        return count[0] == 7

    return at_step


def _second_streamed_chunk() -> Callable[..., bool]:
    """A chunk of the segment that plays next, after one of its chunks went out already."""
    count = [0]

    def second(_self: object, _hiddens: object, final: bool) -> bool:
        count[0] += 0 if final else 1
        return count[0] == 2 and not final

    return second


INJECTIONS: dict[str, tuple[type, str, Callable[[], Callable[..., bool]]]] = {
    # The decoder's first step: its prefill of the first row.
    "first step": (FastDecoder, "_layers", lambda: lambda *_a, **_k: True),
    # Mid-decode, at the 7th sampling step.
    "step k": (FastDecoder, "sample_step", _steps_counter),
    # The vocoder, for segments that finished (several at once).
    "vocoder": (ChatModel, "vocode", lambda: lambda *_a, **_k: True),
    # A streamed chunk of the segment that plays next (not its final one).
    "streamed chunk": (ChunkVocoder, "chunk", lambda: _second_streamed_chunk()),
}


@pytest.mark.parametrize("where", list(INJECTIONS))
def test_out_of_memory_anywhere_loses_and_repeats_nothing(
    engine: Engine, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    owner, name, when = INJECTIONS[where]
    failed, wrapper = fail_once(owner, name, when())
    monkeypatch.setattr(owner, name, wrapper)
    listener = Listener()
    plan = engine.plan(request())
    results = list(engine.synthesize(plan, listener))
    assert failed, f"out of memory was not injected at the {where}"
    # Every segment exactly once, in order.
    assert [r.index for r in results] == [s.index for s in plan.segments]
    # What the listener kept (after dropping restarted segments) is exactly what was saved.
    assert sorted(listener.chunks) == [r.index for r in results]
    for result in results:
        assert np.array_equal(listener.audio(result.index), result.audio), result.index
    # The job says it finished on a smaller batch.
    summary = engine.last_summary
    assert summary is not None and summary.batch_size < min(plan.batch_size, len(plan.segments))
    assert "out of memory" in engine.live.snapshot().note
    if where == "streamed chunk":
        assert listener.restarted == [0]  # it had streamed part of segment 0


def test_mps_out_of_memory_backs_off_too(engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    """On MPS the vocoder runs on the GPU and says 'MPS backend out of memory' as a
    RuntimeError: the same policy applies. Any other RuntimeError is not swallowed."""
    real = ChatModel.vocode
    calls = [0]

    def mps_full(self, hiddens):  # type: ignore[no-untyped-def]
        calls[0] += 1
        if calls[0] == 1:
            raise RuntimeError("MPS backend out of memory (MPS allocated: 9 GB) (injected)")
        return real(self, hiddens)

    monkeypatch.setattr(ChatModel, "vocode", mps_full)
    plan = engine.plan(request())
    results = list(engine.synthesize(plan))
    assert [r.index for r in results] == [s.index for s in plan.segments]
    assert "out of memory" in engine.live.snapshot().note

    def broken(self, hiddens):  # type: ignore[no-untyped-def]
        raise RuntimeError("a different fault")

    monkeypatch.setattr(ChatModel, "vocode", broken)
    with pytest.raises(RuntimeError, match="a different fault"):
        list(engine.synthesize(request()))


def test_out_of_memory_in_audition_still_gives_every_voice(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    failed, wrapper = fail_once(FastDecoder, "sample_step", _steps_counter())
    monkeypatch.setattr(FastDecoder, "sample_step", wrapper)
    speakers = [engine.sample_speaker(seed) for seed in (1, 2, 3)]
    voices = engine.audition(request("你好。Hello there.", segment_size=5), speakers)
    assert failed and len(voices) == 3
    segments = engine.plan(request("你好。Hello there.", segment_size=5)).segments
    expected = sum(s.step_cap for s in segments) * 512 + (len(segments) - 1) * 6000
    for voice in voices:
        assert expected - 256 * len(segments) <= len(voice) <= expected


def test_a_failed_decoder_is_freed_once_the_error_is_out(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Out of memory at every size: the DeviceError that reaches the caller pins neither the
    failed decoder nor its KV cache (no __context__, no traceback into the decoder)."""
    caches: list[weakref.ref[torch.Tensor]] = []

    def always(self, *_args, **_kwargs):  # type: ignore[no-untyped-def]
        caches.append(weakref.ref(self.k_cache))
        raise OOM("CUDA out of memory (injected)")

    monkeypatch.setattr(FastDecoder, "sample_step", always)
    with pytest.raises(DeviceError) as caught:
        list(engine.synthesize(request(batch_size=2)))
    error = caught.value  # kept, as the window keeps its last error
    assert error.__context__ is None and error.__cause__ is None
    assert len(caches) == 2  # batch 2, then batch 1
    assert all(ref() is None for ref in caches), "a failed KV cache is still alive"
    del error


def test_nan_logits_fail_the_job_with_one_sentence_not_multinomial(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = FastDecoder._logits
    calls = [0]

    def poisoned(self, hidden):  # type: ignore[no-untyped-def]
        logits = real(self, hidden)
        calls[0] += 1
        if calls[0] == 5:
            logits[0] = float("nan")  # one row's codebook goes bad (fp16 overflow)
        return logits

    monkeypatch.setattr(FastDecoder, "_logits", poisoned)
    with pytest.raises(NonFiniteError) as caught:
        list(engine.synthesize(request(batch_size=2)))
    assert isinstance(caught.value, StudioError)
    assert "fp32 precision" in str(caught.value) and "\n" not in str(caught.value)
    monkeypatch.undo()
    assert list(engine.synthesize(request("你好。")))  # the engine goes on


def test_nan_on_the_stock_path_stops_before_sampling(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert engine.model is not None
    remove = engine.model.on_step(lambda hidden: hidden.fill_(float("nan")))
    try:
        with pytest.raises(NonFiniteError):
            list(engine.synthesize(request("你好。", decoder="stock")))
    finally:
        remove()
    assert list(engine.synthesize(request("你好。", decoder="stock")))


def _cancel_inside(monkeypatch: pytest.MonkeyPatch, owner: object, name: str, token: CancelToken):  # type: ignore[no-untyped-def]
    real = getattr(owner, name)

    def wrapper(*args, **kwargs):  # type: ignore[no-untyped-def]
        token.cancel()
        return real(*args, **kwargs)

    monkeypatch.setattr(owner, name, wrapper)


@pytest.mark.parametrize(
    ("stage", "owner", "name"),
    [
        ("refine", RefinePass, "step"),
        ("decode", FastDecoder, "sample_step"),
        ("vocoder", ChatModel, "vocode"),
        ("stock decode", ChatModel, "stock_codes"),
    ],
)
def test_cancel_at_each_stage_leaves_nothing_for_the_next_job(
    engine: Engine, monkeypatch: pytest.MonkeyPatch, stage: str, owner: object, name: str
) -> None:
    token = CancelToken()
    with monkeypatch.context() as patch:
        _cancel_inside(patch, owner, name, token)
        job = request(
            refine_text=stage == "refine", decoder="stock" if "stock" in stage else "fast"
        )
        with pytest.raises(Cancelled):
            list(engine.synthesize(job, cancel=token))
    assert engine.live.snapshot().stage == "cancelled"
    plan = engine.plan(request())
    results = list(engine.synthesize(plan))  # a fresh token: runs fully
    assert [r.index for r in results] == [s.index for s in plan.segments]


def test_engine_cancel_reaches_only_the_running_job(engine: Engine) -> None:
    """Engine.cancel() from another thread stops the job that runs, and nothing else."""
    stop = threading.Timer(0.3, engine.cancel)
    stop.start()
    with pytest.raises(Cancelled):
        list(engine.synthesize(request(TEXT * 4, batch_size=1)))
    stop.join()
    assert len(list(engine.synthesize(request("你好。")))) == 1


def test_batched_vocoding_equals_one_at_a_time(engine: Engine) -> None:
    model = engine.model
    assert model is not None
    torch.manual_seed(0)
    hiddens = [torch.randn(40, model.hidden_size) for _ in range(3)]
    together = model.vocode(hiddens)
    for hidden, wav in zip(hiddens, together, strict=True):
        # Batched convolution kernels round differently in the last bits (measured: < 1e-7
        # on signals of about 0.05); the same length means no padding enters the audio.
        assert np.abs(model.vocode([hidden])[0] - wav).max() <= VOCODE_TOLERANCE


def test_vocoding_is_chattts_own_decode_bit_for_bit(engine: Engine) -> None:
    """ChatModel.vocode runs ChatTTS's `_decode_to_wavs` step for step on the device and reads
    the audio back through host_reads (the seam the fake-CUDA tests feed): the same bits as
    ChatTTS's own, unequal lengths (zero padding) included."""
    model = engine.model
    assert model is not None
    torch.manual_seed(1)
    hiddens = [torch.randn(n, model.hidden_size) for n in (40, 33, 40)]
    ours = model.vocode(hiddens)
    stock = model._chat._decode_to_wavs([h.clone() for h in hiddens], True)  # type: ignore[attr-defined]
    assert len(ours) == len(stock) == 3
    for mine, theirs in zip(ours, stock, strict=True):
        assert mine.dtype == np.float32 and np.array_equal(mine, theirs)


def test_finished_segments_share_vocoder_calls_with_identical_audio(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = engine.model
    assert model is not None
    calls: list[tuple[list[torch.Tensor], list[np.ndarray]]] = []
    real = ChatModel.vocode

    def spy(self, hiddens):  # type: ignore[no-untyped-def]
        out = real(self, hiddens)
        calls.append(([h.clone() for h in hiddens], out))
        return out

    monkeypatch.setattr(ChatModel, "vocode", spy)
    # Six equal sentences: equal step caps, so the decoder finishes them at equal lengths.
    results = list(engine.synthesize(request("今天天气很好。" * 6, segment_size=7, batch_size=6)))
    assert len(results) == 6
    batched = [c for c in calls if len(c[0]) > 1]
    assert batched, "finished segments were vocoded one at a time"
    assert len(calls) < len(results)
    monkeypatch.undo()
    for hiddens, wavs in batched:
        for hidden, wav in zip(hiddens, wavs, strict=True):
            assert np.abs(model.vocode([hidden])[0] - wav).max() <= VOCODE_TOLERANCE


def _watch(engine: Engine, run: Callable[[], list[SegmentResult]]) -> tuple[list[float], float]:
    """The progress fraction after every decode step (recorded by the metrics themselves, so
    the test does not depend on a sampling thread's timing), and the fraction at the end."""
    seen: list[float] = []
    live = engine.live
    real = live.add_steps

    def recording(keys: list[int]) -> None:
        real(keys)
        seen.append(live._snap.fraction)

    live.add_steps = recording  # type: ignore[method-assign]
    try:
        run()
    finally:
        del live.add_steps
    return seen, live.snapshot().fraction


def test_progress_reaches_exactly_100_percent_when_rows_stop_early_at_eos(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    # As real weights: no EOS hold-off, so random weights end rows at random early steps.
    assert engine.loaded is not None
    info = dataclasses.replace(engine.loaded.info, random_weights=False)
    monkeypatch.setattr(engine, "loaded", dataclasses.replace(engine.loaded, info=info))
    plan = engine.plan(request(TEXT * 2, batch_size=2))
    results: list[SegmentResult] = []
    seen, final = _watch(engine, lambda: results.extend(engine.synthesize(plan)) or results)
    assert sum(r.steps for r in results) < sum(s.step_cap for s in plan.segments)
    assert final == 1.0
    assert seen and all(f < 1.0 for f in seen)


def test_progress_is_monotonic_and_complete_on_demo_weights(engine: Engine) -> None:
    seen, final = _watch(engine, lambda: list(engine.synthesize(request(TEXT * 2, batch_size=2))))
    assert len(seen) >= 3 and final == 1.0
    assert all(f < 1.0 for f in seen)
    assert seen == sorted(seen)


def test_a_long_unbroken_chinese_paragraph_is_never_cut_short(engine: Engine) -> None:
    """5,000 characters, no punctuation, the largest segment size: every segment is split to
    fit the step cap and gets every step its text needs."""
    text = ("天气很好我们去公园散步然后回家吃饭" * 300)[:5000]
    plan = engine.plan(request(text, segment_size=500, batch_size=16))
    assert sum(len(s.text) for s in plan.segments) == 5000
    for segment in plan.segments:
        assert needed_steps(segment.text) <= PLAN_STEP_LIMIT < MAX_STEP_CAP
        assert segment.step_cap == needed_steps(segment.text)  # never clamped
    results = list(engine.synthesize(plan))
    for result, segment in zip(results, plan.segments, strict=True):
        assert result.steps == segment.step_cap  # demo weights: the whole cap, all of it
        assert not result.hit_cap


def test_the_plan_is_made_once_and_carries_the_batch(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    import chattts_studio.core.engine.engine

    calls = [0]
    real = chattts_studio.core.engine.engine.split_segments

    def counting(*args: object) -> Iterator[object]:
        calls[0] += 1
        return real(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(chattts_studio.core.engine.engine, "split_segments", counting)
    plan = engine.plan(request(batch_size=0))  # automatic
    assert plan.batch_size == min(16, len(plan.segments))
    list(engine.synthesize(plan))
    assert calls[0] == 1


def test_batched_vocoding_on_the_real_dimensions(demo_model: str) -> None:
    """demo-full has the real Decoder and Vocos shapes (12 and 8 blocks of kernel 7): equal
    lengths vocoded together match one-at-a-time within 1e-5 (measured: identical)."""
    full = Engine()
    full.load("demo-full", "cpu", "fp32")
    try:
        model = full.model
        assert model is not None
        torch.manual_seed(0)
        hiddens = [torch.randn(120, model.hidden_size) * 0.5 for _ in range(3)]
        for hidden, wav in zip(hiddens, model.vocode(hiddens), strict=True):
            assert np.abs(model.vocode([hidden])[0] - wav).max() <= 1e-5
    finally:
        full.unload()


def test_cancel_keeps_what_was_streamed_of_the_segment_in_progress(engine: Engine) -> None:
    """Cancel mid-segment: the finished segments and the part of the current one already
    streamed (heard) come back, the latter marked partial; nothing else."""
    listener = Listener()
    token = CancelToken()
    results: list[SegmentResult] = []

    def listen(event: AudioChunk | SegmentRestarted) -> None:
        listener(event)
        if isinstance(event, AudioChunk) and event.index == 1 and len(listener.chunks[1]) == 2:
            token.cancel()  # two chunks of segment 1 heard

    with pytest.raises(Cancelled):
        for result in engine.synthesize(request(TEXT * 2, batch_size=1), listen, token):
            results.append(result)
    assert [r.index for r in results] == [0, 1]
    assert not results[0].partial and results[1].partial
    assert np.array_equal(results[1].audio, listener.audio(1))
    assert 0 < results[1].steps < results[1].audio.size


def test_the_first_segment_is_refined_alone_and_plays_before_the_others_are_refined(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With refine on, the first segment is refined alone and decodes alone until its first
    audio; the next texts are refined a step at a time between the decoder's steps, and their
    rows join the running batch; each segment is refined once; the panel counts them."""
    events: list[str] = []
    real_begin, real_step = RefinePass.__init__, RefinePass.step

    def begin(self, model, texts, *args, **kwargs):  # type: ignore[no-untyped-def]
        events.append(f"refine {len(texts)}")
        real_begin(self, model, texts, *args, **kwargs)

    def step(self):  # type: ignore[no-untyped-def]
        events.append("refine step")
        return real_step(self)

    real_add = LiveMetrics.add_steps

    def add_steps(self, keys):  # type: ignore[no-untyped-def]
        events.append("decode " + ",".join(map(str, sorted(keys))))
        real_add(self, keys)

    monkeypatch.setattr(RefinePass, "__init__", begin)
    monkeypatch.setattr(RefinePass, "step", step)
    monkeypatch.setattr(LiveMetrics, "add_steps", add_steps)

    def listen(event: AudioChunk | SegmentRestarted) -> None:
        if isinstance(event, AudioChunk) and "audio" not in events:
            events.append("audio")

    plan = engine.plan(request(TEXT * 3, refine_text=True, batch_size=3, segment_size=25))
    results = list(engine.synthesize(plan, listen))
    assert len(results) == len(plan.segments) >= 4
    passes = [e for e in events if e.startswith("refine ") and e != "refine step"]
    assert passes[0] == "refine 1" and passes[1] == "refine 3", passes
    assert sum(int(e.split()[1]) for e in passes) == len(plan.segments)  # each once
    audio = events.index("audio")
    assert events.index("refine 3") > audio  # the second pass starts after the first audio
    before = [e for e in events[:audio] if e.startswith("decode")]
    assert before and set(before) == {"decode 0"}  # the first segment alone until then
    # Its rows join the running batch (on ONNX Runtime its steps run between the decoder's:
    # test_head_first.py; ChatTTS's own loop runs whole at its first step).
    joined = next(e for e in events if e.startswith("decode") and e != "decode 0")
    assert joined.startswith("decode 0,1"), joined
    assert engine.live.snapshot().refined == len(plan.segments)


def test_the_whole_first_batch_starts_together_without_head_first(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The former scheduling, kept as the benchmark's baseline: the first batch is refined in
    one pass before any decode step, and its rows start together."""
    sizes: list[int] = []
    real_begin = RefinePass.__init__

    def begin(self, model, texts, *args, **kwargs):  # type: ignore[no-untyped-def]
        sizes.append(len(texts))
        real_begin(self, model, texts, *args, **kwargs)

    monkeypatch.setattr(RefinePass, "__init__", begin)
    engine.head_first = False
    try:
        plan = engine.plan(request(TEXT * 3, refine_text=True, batch_size=3, segment_size=25))
        results = list(engine.synthesize(plan, Listener()))
    finally:
        engine.head_first = True
    assert len(results) == len(plan.segments)
    assert sizes[0] == 3 and sum(sizes) == len(plan.segments)


def test_a_refined_text_longer_than_planned_grows_the_kv_cache(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Refine adds pauses after the KV cache was sized: the cache grows, and every segment
    still gets its whole (larger) step cap."""
    from chattts_studio.core.text.prepare import step_cap

    def padded(self):  # type: ignore[no-untyped-def]
        return [t + "[uv_break]" * 40 + "[lbreak]" * 10 for t in self.texts_in]

    monkeypatch.setattr(RefinePass, "texts", padded)
    grown: list[int] = []
    real_grow = FastDecoder._grow

    def spy(self, max_len):  # type: ignore[no-untyped-def]
        grown.append(max_len)
        real_grow(self, max_len)

    monkeypatch.setattr(FastDecoder, "_grow", spy)
    plan = engine.plan(request("你好。今天天气很好。", refine_text=True, batch_size=2))
    results = list(engine.synthesize(plan))
    assert grown
    for result, segment in zip(results, plan.segments, strict=True):
        model_text = engine.model.normalize(segment.text) + "[uv_break]" * 40 + "[lbreak]" * 10  # type: ignore[union-attr]
        assert result.steps == step_cap(model_text) > segment.step_cap


def test_time_left_decreases_steadily_within_20_percent_on_a_uniform_text(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The live estimate on a simulated clock: 48 equal segments, 4 rows, 50 ms a step and a
    0.2 s vocoder pause whenever rows end. After the first 10% of the job the time left stays
    within 20% of the truth and falls steadily."""
    import chattts_studio.core.engine.metrics
    from chattts_studio.core.engine.metrics import LiveMetrics

    clock = [100.0]
    monkeypatch.setattr(chattts_studio.core.engine.metrics.time, "perf_counter", lambda: clock[0])
    monkeypatch.setattr(chattts_studio.core.engine.metrics, "memory_snapshot", lambda _device: None)
    live = LiveMetrics()
    cap, rows, count = 88, 4, 48
    live.start("decode", [cap] * count, [cap] * count)
    estimates: list[tuple[float, float | None]] = []
    for first in range(0, count, rows):
        keys = list(range(first, first + rows))
        for _ in range(cap):
            clock[0] += 0.05
            live.add_steps(keys)
            estimates.append((clock[0], live.snapshot().seconds_left))
        clock[0] += 0.2  # the vocoder, between steps
        live.vocoded(cap * rows, 0.2)
        for key in keys:
            live.segment_done(key)
    end = clock[0]
    assert live.snapshot().fraction == 1.0
    total = end - 100.0
    checked = [(t, left) for t, left in estimates if t - 100.0 > 0.1 * total]
    for t, left in checked:
        assert left is not None and abs(left - (end - t)) <= 0.2 * (end - t) + 0.25, (t, left)
    lefts = [left for _, left in checked]
    # Steady: it may tick up after a pause (the average takes the pause in), never by more
    # than 5% (the former 1.5-second rate window jumped by 50% and more).
    assert all(b <= a * 1.05 for a, b in itertools.pairwise(lefts))


def test_finished_segments_drop_their_per_step_states(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Once a segment's audio exists its GPT states are let go: a long text must not hold
    every finished segment's states until the job ends (memory would grow with the text)."""
    seen: list[list[object]] = []
    real = producers._jobs

    def spy(ctx, units):  # type: ignore[no-untyped-def]
        seen.append(real(ctx, units))
        return seen[-1]

    monkeypatch.setattr(producers, "_jobs", spy)
    results = list(engine.synthesize(request(TEXT * 2, batch_size=2)))
    assert seen and len(seen[0]) == len(results)
    assert all(job.hiddens == [] and job.tokens == [] for job in seen[0])  # type: ignore[attr-defined]
    assert all(r.steps > 0 and r.audio.size for r in results)
