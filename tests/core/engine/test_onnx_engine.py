"""The ONNX Runtime engine: the exported step computes what torch's step computes, the decode
through it gives torch's codes for a seed, exact steps keep a row's bits whatever runs beside
it, and int8 stays close. Demo weights (random: noise, never speech)."""

from collections.abc import Iterator

import pytest
import torch

from chattts_studio.core.engine import engine_choice as choice
from chattts_studio.core.engine.decode.job import Job, NonFiniteError
from chattts_studio.core.engine.decode.loop import FastDecoder
from chattts_studio.core.engine.devices import resolve_device
from chattts_studio.core.engine.engine import Engine
from chattts_studio.core.engine.engine_choice import EngineKind, check_engine
from chattts_studio.core.engine.onnxrt.graph import DecodeStep
from chattts_studio.core.engine.onnxrt.session import OrtStep
from chattts_studio.core.engine.request import Precision, Sampling, SynthesisRequest
from chattts_studio.core.errors import DeviceError

SAMPLING = Sampling(0.3, 0.7, 20)


@pytest.fixture(scope="module")
def onnx_engine(demo_model: str) -> Iterator[Engine]:
    engine = Engine()
    loaded = engine.load(demo_model, "cpu", "fp32", engine="onnx")
    assert loaded.engine is EngineKind.ONNX
    yield engine
    engine.unload()


def _jobs(engine: Engine, seeds: list[int], steps: int = 30) -> list[Job]:
    model = engine.model
    assert model is not None
    jobs = []
    for key, seed in enumerate(seeds):
        speaker = model.sample_speaker(seed)
        ids = model.prompt_ids(model.normalize("你好，今天天气不错。" * (key + 1)), 5, speaker)
        jobs.append(Job(key, model.embed(ids, speaker), steps - key, steps - key, seed=seed))
    return jobs


def _decode(
    engine: Engine, runner: OrtStep | None, seeds: list[int], slots: int, exact: bool = False
) -> dict[int, tuple[torch.Tensor, torch.Tensor]]:
    model = engine.model
    assert model is not None
    kept = model.decode_step
    model.decode_step = runner
    try:
        jobs = _jobs(engine, seeds)
        decoder = FastDecoder(model, slots, max(j.length for j in jobs) + 1, exact=exact)
        done = [j for j in decoder.run(jobs, SAMPLING, lambda: False) if j is not None]
    finally:
        model.decode_step = kept
    return {j.key: (torch.stack(j.tokens), torch.stack(j.hiddens)) for j in done}


def test_the_exported_module_computes_torchs_step(onnx_engine: Engine) -> None:
    """DecodeStep (what is exported) against the decoder's own torch step, same cache."""
    model = onnx_engine.model
    assert model is not None
    kept, model.decode_step = model.decode_step, None
    try:
        decoder = FastDecoder(model, 3, 40)
    finally:
        model.decode_step = kept
    torch.manual_seed(0)
    decoder.k_cache.normal_()
    decoder.v_cache.normal_()
    codes = torch.randint(0, model.num_codes - 1, (3, model.num_vq))
    pos = torch.tensor([4, 17, 30])
    layers = range(decoder.k_cache.shape[0])
    step = DecodeStep(model.gpt, model.code_heads())
    with torch.inference_mode():
        hidden, logits, keys, _values = step(
            decoder._embed_codes(codes)[:, 0],
            pos,
            [decoder.k_cache[i].clone() for i in layers],
            [decoder.v_cache[i].clone() for i in layers],
        )
        x = decoder._embed_codes(codes)
        rows = torch.arange(3)
        ours = decoder._layers(x, rows, pos.view(-1, 1), 31, slice(None))[:, 0].float()
    assert torch.allclose(hidden, ours, atol=1e-5), float((hidden - ours).abs().max())
    for layer, cached in enumerate(keys):  # each row's new key at its position, nothing else
        written = decoder.k_cache[layer, rows, :, pos]
        assert torch.allclose(cached[rows, :, pos], written, atol=1e-5)
        assert torch.equal(cached[0, :, 5:], decoder.k_cache[layer, 0, :, 5:])
    heads = torch.nn.functional.linear(ours, model.code_heads().float())
    assert torch.allclose(logits, heads, atol=1e-4)


def test_onnx_fp32_gives_torchs_codes_for_a_seed(onnx_engine: Engine) -> None:
    """Three jobs on two rows (the third takes a freed row, its cache holding the first's)."""
    runner = onnx_engine.model.decode_step if onnx_engine.model else None
    assert isinstance(runner, OrtStep) and runner.precision == "fp32"
    torch_run = _decode(onnx_engine, None, [3, 4, 5], 2)
    onnx_run = _decode(onnx_engine, runner, [3, 4, 5], 2)
    assert set(onnx_run) == {0, 1, 2}
    for key, (codes, hiddens) in torch_run.items():
        assert torch.equal(onnx_run[key][0], codes), f"job {key}: codes differ"
        assert float((onnx_run[key][1] - hiddens).abs().max()) < 1e-4


def test_exact_onnx_steps_keep_a_rows_bits_in_any_company(onnx_engine: Engine) -> None:
    """Exact steps run whole chunks through the graph: a job's codes and hidden states alone
    equal those it has beside others, bit for bit (the server's promise, on this engine)."""
    runner = onnx_engine.model.decode_step if onnx_engine.model else None
    together = _decode(onnx_engine, runner, [7, 8, 9, 10], 4, exact=True)
    alone = _decode(onnx_engine, runner, [7], 4, exact=True)
    assert torch.equal(together[0][0], alone[0][0])
    assert torch.equal(together[0][1], alone[0][1])


def test_a_whole_synthesis_runs_on_onnx_and_matches_torch_in_length(
    onnx_engine: Engine, engine: Engine
) -> None:
    text = "你好。今天天气不错，我们去公园散步吧。"
    ours = list(onnx_engine.synthesize(SynthesisRequest(text, seed=2, batch_size=2)))
    theirs = list(engine.synthesize(SynthesisRequest(text, seed=2, batch_size=2)))
    assert [r.steps for r in ours] == [r.steps for r in theirs]
    assert [len(r.audio) for r in ours] == [len(r.audio) for r in theirs]


def test_int8_loads_and_stays_close(demo_model: str, onnx_engine: Engine) -> None:
    engine = Engine()
    engine.load(demo_model, "cpu", "int8", engine="onnx")
    try:
        runner = engine.model.decode_step if engine.model else None
        assert isinstance(runner, OrtStep) and runner.precision == "int8"
        assert engine.model is not None
        weights = next(engine.model.gpt.parameters())
        assert weights.dtype == torch.float32  # the torch GPT (prefill) stays fp32
        int8 = _decode(engine, runner, [3], 1)[0][1]
        fp32 = _decode(engine, None, [3], 1)[0][1]
        cosine = torch.nn.functional.cosine_similarity(int8[0], fp32[0], dim=0)
        assert float(cosine) > 0.99
    finally:
        engine.unload()


def test_auto_picks_onnx_on_the_cpu_and_torch_where_onnx_cannot_run(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    cpu = resolve_device("cpu")
    assert check_engine(cpu, Precision.FP32, "auto") is EngineKind.ONNX
    assert check_engine(cpu, Precision.INT8, "auto") is EngineKind.ONNX
    assert check_engine(cpu, Precision.BF16, "auto") is EngineKind.TORCH
    with pytest.raises(DeviceError, match="fp32 or int8, not bf16"):
        check_engine(cpu, Precision.BF16, "onnx")
    with pytest.raises(DeviceError, match="Unknown engine 'tensorrt'"):
        check_engine(cpu, Precision.FP32, "tensorrt")
    monkeypatch.setattr(choice.importlib.util, "find_spec", lambda _name: None)
    assert check_engine(cpu, Precision.FP32, "auto") is EngineKind.TORCH
    with pytest.raises(DeviceError) as caught:
        check_engine(cpu, Precision.FP32, "onnx")
    message = str(caught.value)
    assert "chattts-studio[onnx]" in message and "\n" not in message


def test_switching_engines_keeps_the_model_and_changes_the_step(demo_model: str) -> None:
    engine = Engine()
    try:
        engine.load(demo_model, "cpu", "fp32", engine="torch")
        model = engine.model
        assert model is not None and model.decode_step is None
        loaded = engine.load(demo_model, "cpu", "fp32", engine="onnx")
        assert engine.model is model and isinstance(model.decode_step, OrtStep)
        assert loaded.engine is EngineKind.ONNX
        engine.load(demo_model, "cpu", "int8", engine="torch")
        assert model.decode_step is None
        engine.load(demo_model, "cpu", "fp32", engine="torch")  # int8 undone
        assert next(model.gpt.parameters()).dtype == torch.float32
        assert all(type(m) is not torch.ao.nn.quantized.dynamic.Linear for m in model.gpt.modules())
    finally:
        engine.unload()


def test_non_finite_onnx_logits_fail_the_job_with_one_sentence(
    onnx_engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = OrtStep.run
    calls = [0]

    def poisoned(self: OrtStep, *args: object) -> tuple[torch.Tensor, ...]:
        hidden, logits = real(self, *args)  # type: ignore[arg-type]
        calls[0] += 1
        if calls[0] == 5:
            logits[0] = float("nan")  # one row's numbers go bad
        return hidden, logits

    monkeypatch.setattr(OrtStep, "run", poisoned)
    with pytest.raises(NonFiniteError) as caught:
        text = "你好。今天天气不错。"  # refine off: every step's call is the decoder's
        list(onnx_engine.synthesize(SynthesisRequest(text, batch_size=2, refine_text=False)))
    assert "\n" not in str(caught.value)
    monkeypatch.undo()
    assert list(onnx_engine.synthesize(SynthesisRequest("你好。")))  # the engine goes on


def _decode_jobs(
    engine: Engine, jobs: list[Job], slots: int
) -> tuple[dict[int, Job], list[tuple[list[int], list[int] | None]]]:
    """Exact ONNX decode of `jobs` in their order; the jobs done, and every graph call's
    (slots, chunks) as the decoder asked for it."""
    model = engine.model
    assert model is not None
    decoder = FastDecoder(model, slots, max(j.length for j in jobs) + 1, exact=True)
    calls: list[tuple[list[int], list[int] | None]] = []
    real = decoder._onnx_step

    def spy(stepping: list[int], codes: torch.Tensor, pos: torch.Tensor, chunks: object) -> None:
        calls.append((list(stepping), None if chunks is None else list(chunks)))  # type: ignore[call-overload]
        real(stepping, codes, pos, chunks)  # type: ignore[arg-type]

    decoder._onnx_step = spy  # type: ignore[method-assign]
    step = lambda _keys: calls.append(([], []))  # noqa: E731  (a step's calls follow its mark)
    done = {j.key: j for j in decoder.run(jobs, SAMPLING, lambda: False, step) if j is not None}
    return done, calls


def test_exact_onnx_rows_keep_their_bits_inside_the_shared_rows_range(
    onnx_engine: Engine,
) -> None:
    """Shared rows (requests without a seed) run as one range of the graph; exact
    rows their own chunks, after it. Here an exact job takes a row freed in the middle of the
    shared rows, so the range spans it and writes its key and value too: its own chunk writes
    them again, and it keeps the bits it has alone, as does the exact job beside them."""
    jobs = _jobs(onnx_engine, [7, 8, 9, 10, 11])
    for job in jobs[1:4]:
        job.shared = True
    jobs[2].cap = jobs[2].min_steps = 5  # ends early: its row (2) goes to job 4, exact
    done, calls = _decode_jobs(onnx_engine, [jobs[1], jobs[2], jobs[3], jobs[0], jobs[4]], 4)
    assert sorted(done) == [0, 1, 2, 3, 4]
    spanned = [c for c in calls if c[1] is None and c[0] == [1, 3]]
    assert spanned, calls  # shared rows 1 and 3, one range over 1..3, exact row 2 inside
    assert all(chunks is None or len(chunks) == len(s) for s, chunks in calls)
    # Each step runs the range before the exact rows' chunks. (On this CPU ONNX Runtime gives
    # a row the same bits in a range of any length, measured at the real dimensions too, so
    # the bits below hold either way; on a CPU whose kernels differ by row count only this
    # order keeps them.)
    kinds = "".join("|" if s == [] else "r" if c is None else "c" for s, c in calls)
    assert all("cr" not in step for step in kinds.split("|")), kinds
    for key in (0, 4):
        again = _jobs(onnx_engine, [7, 8, 9, 10, 11])[key]
        alone, _calls = _decode_jobs(onnx_engine, [again], 4)
        assert torch.equal(torch.stack(done[key].tokens), torch.stack(alone[key].tokens))
        assert torch.equal(torch.stack(done[key].hiddens), torch.stack(alone[key].hiddens))


def test_a_lone_shared_onnx_row_has_the_bits_of_an_exact_one(onnx_engine: Engine) -> None:
    """One client alone gets `synth`'s cost and bits: a range of one row is a chunk of one."""
    job = _jobs(onnx_engine, [7])[0]
    job.shared = True
    shared, calls = _decode_jobs(onnx_engine, [job], 4)
    exact, _calls = _decode_jobs(onnx_engine, _jobs(onnx_engine, [7]), 4)
    assert all(c in (([3], None), ([], [])) for c in calls) and ([3], None) in calls
    assert torch.equal(torch.stack(shared[0].tokens), torch.stack(exact[0].tokens))
    assert torch.equal(torch.stack(shared[0].hiddens), torch.stack(exact[0].hiddens))


def test_the_vocoder_runs_in_onnx_runtime_and_gives_torchs_audio(
    onnx_engine: Engine, engine: Engine
) -> None:
    """The ONNX engine's vocoder (DVAE decoder and Vocos up to its ISTFT, exported beside the
    step) gives torch's waveform to float rounding, for one segment and for two at once."""
    model, reference = onnx_engine.model, engine.model
    assert model is not None and reference is not None
    assert model.vocoder_front is not None and reference.vocoder_front is None
    generator = torch.Generator().manual_seed(3)
    hiddens = [torch.randn(n, model.hidden_size, generator=generator) * 0.5 for n in (40, 40)]
    for batch in ([hiddens[0]], hiddens):
        ours, theirs = model.vocode(batch), reference.vocode(batch)
        for got, want in zip(ours, theirs, strict=True):
            assert got.shape == want.shape
            peak = float(abs(want).max())
            assert float(abs(got - want).max()) <= 1e-4 * peak, float(abs(got - want).max())
