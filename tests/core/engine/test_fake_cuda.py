"""The engine's CUDA path, checked on every commit without a GPU.

The demo model is loaded for real (ChatTTS's loader, on the CPU), then every parameter and
buffer of its GPT, embeddings, DVAE, decoder and Vocos becomes a fake `cuda:0` tensor (torch's
FakeTensorMode: a device, a shape and a dtype, no values and no GPU). Each path then runs as it
would on a card: the prompt's prefill, one or more decode steps of every decoder form, the
sampler with its repetition window and per-row generators, the vocoder and a streamed chunk, a
voice clone's encoder, the out-of-memory policy's halving, and a whole synthesis through the
Engine. A CUDA tensor meeting a CPU one raises there as it would on a GPU (the first Synthesize
of a GPU user would crash the same way).

What FakeTensorMode cannot see, checked here beside it:
- values: the loop's one read a step, the vocoder's audio and a clone's codes go through
  `core/engine/decode/host_reads.py`, which these tests replace with functions that check the tensor
  that reaches them (device, dtype, shape) and feed values;
- dtypes: a Linear or convolution fed another dtype than its weights passes under fake tensors
  where CUDA raises, so every such module checks its input here (`strict_modules`); the KV
  cache, the logits the sampler reads and the vocoder's input are asserted where they must hold;
- host operands CUDA accepts but a CUDA graph cannot replay (a CPU index tensor): the static
  step a graph captures is run under `NoHostOperands`.
- generators: no CUDA generator can be made here; `seeds.row_generator` records the device
  it is asked for and the tests assert it is the logits' device.

Kept true: every FastDecoder form is in FORMS, and `test_every_decoder_form_is_covered` fails
when a new constructor parameter (a new form) appears until it is added there.
"""

import inspect
from collections.abc import Iterator
from dataclasses import dataclass, field, fields
from typing import Any, ClassVar

import numpy as np
import pytest
import torch
from side_seams import RecordedSide
from torch._subclasses.fake_tensor import FakeTensorMode
from torch.fx.experimental.symbolic_shapes import ShapeEnv
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves

from chattts_studio.core import seeds
from chattts_studio.core.engine.chattts.chat import ChatModel
from chattts_studio.core.engine.decode import host_reads, rowwise
from chattts_studio.core.engine.decode import slots as slot_steps
from chattts_studio.core.engine.decode.job import Job
from chattts_studio.core.engine.decode.loop import FastDecoder
from chattts_studio.core.engine.decode.rowwise import RowSampling, sample_codes
from chattts_studio.core.engine.decode.slots import DecoderShape
from chattts_studio.core.engine.decode.streaming import ChunkVocoder
from chattts_studio.core.engine.request import Sampling
from chattts_studio.core.voices.voice import Voice

pytestmark = pytest.mark.fake_cuda  # the GPU run (.ci/gpu/run.sh) selects these too
CUDA = torch.device("cuda:0")
DTYPES = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}
TEXT = "你好，世界。"
ALL = pytest.mark.parametrize("gpu", list(DTYPES), indirect=True)  # each test in each dtype


class DeviceFakes(FakeTensorMode):
    """FakeTensorMode for a machine with no CUDA: no values are ever kept as constants, since
    under inference mode torch would otherwise run a small tensor's move to CUDA for real
    (`aten.to.dtype_layout` on its constant) and fail for want of a driver. Real tensors that
    meet fake ones are made fake on their own device (a CPU tensor stays a CPU tensor, so it
    fails against a CUDA one as on a GPU); a shape environment lets ChatTTS's boolean-mask
    indexing (data-dependent shapes) through."""

    def __init__(self) -> None:
        super().__init__(allow_non_fake_inputs=True, shape_env=ShapeEnv())

    def may_turn_const(self, t: torch.Tensor) -> bool:
        return False


class NoHostOperands(TorchDispatchMode):
    """Records every op where a CUDA tensor meets a CPU tensor of one or more dimensions: CUDA
    runs some of them (an index tensor is copied over, waiting for the host), a CUDA graph
    replays none of them correctly."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[str] = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
        tensors = [t for t in tree_leaves((args, kwargs or {})) if isinstance(t, torch.Tensor)]
        devices = {t.device.type for t in tensors if t.dim() > 0}
        if "cuda" in devices and "cpu" in devices:
            self.found.append(str(func))
        return func(*args, **(kwargs or {}))


def _fake_module(module: torch.nn.Module, mode: FakeTensorMode) -> None:
    """Every parameter and buffer of `module` as a fake CUDA tensor of the same dtype."""
    for sub in module.modules():
        for name, param in list(sub._parameters.items()):
            if param is not None:
                with mode:
                    moved = mode.from_tensor(param.detach()).to(CUDA)
                sub._parameters[name] = torch.nn.Parameter(moved, requires_grad=False)
        for name, buf in list(sub._buffers.items()):
            if buf is not None:
                with mode:
                    sub._buffers[name] = mode.from_tensor(buf).to(CUDA)


@dataclass
class FakeGpu:
    """The demo model on fake CUDA, its mode, and what the host-read seams saw."""

    model: ChatModel
    mode: DeviceFakes
    speaker: str
    dtype: torch.dtype
    flag_reads: list[torch.Tensor] = field(default_factory=list)
    audio_reads: list[torch.Tensor] = field(default_factory=list)
    code_reads: list[torch.Tensor] = field(default_factory=list)
    generator_devices: list[torch.device] = field(default_factory=list)
    late_reads: int = 0  # flag reads started before the next step was queued
    generator_draws: int = 0  # rows drawn from their own generators
    # What the next step reads say ended: a list per step, popped as the loop reads; when
    # none is left, every row ends at each `end_every`-th read (None: no row ends).
    ended: list[list[bool]] = field(default_factory=list)
    end_every: int | None = None


def _load_fake(dtype: torch.dtype) -> tuple[ChatModel, DeviceFakes, str]:
    from chattts_studio.core.engine.devices import torch_dtype
    from chattts_studio.core.engine.loading import apply_precision
    from chattts_studio.core.engine.request import Precision
    from chattts_studio.core.weights import models
    from chattts_studio.core.weights.demo_weights import build_config

    info = models.ensure("demo")
    model = ChatModel.load(
        str(info.folder), build_config(info.dims), torch.device("cpu"), False, "demo"
    )
    apply_precision(model, {torch_dtype(v): v for v in Precision if v is not Precision.INT8}[dtype])
    speaker = model.sample_speaker(3)  # host work (a string), drawn before the move
    mode = DeviceFakes()
    chat: Any = model._chat
    for part in (chat.gpt, chat.embed, chat.dvae, chat.decoder, chat.vocos):
        _fake_module(part, mode)
        # What ChatTTS's loader records of the device it built a part for (the GPT's
        # `device` and `device_gpt`, the mel features' `device`): as a GPU load leaves them.
        for sub in part.modules():
            for name in ("device", "device_gpt"):
                if isinstance(vars(sub).get(name), torch.device | str):
                    setattr(sub, name, CUDA)
    chat.device = chat.device_gpt = CUDA
    return model, mode, speaker


_LOADED: dict[torch.dtype, tuple[ChatModel, DeviceFakes, str]] = {}


@pytest.fixture
def gpu(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeGpu]:
    """The fake-CUDA model in the precision the test is parametrized with (`gpu`: fp32, fp16
    or bf16, indirect), with the host reads fed, every module's input checked, and the mode
    entered for the test. Each precision's model is made once for the module's tests."""
    dtype = DTYPES[request.param]
    if dtype not in _LOADED:
        _LOADED[dtype] = _load_fake(dtype)
    model, mode, speaker = _LOADED[dtype]
    fake = FakeGpu(model, mode, speaker, dtype)

    def step_flags(flags: torch.Tensor) -> list[list[bool]]:
        assert flags.device == CUDA and flags.dtype == torch.bool and flags.dim() == 2
        fake.flag_reads.append(flags)
        rows = int(flags.shape[1])
        every = fake.end_every
        if fake.ended:
            ended = fake.ended.pop(0)
        else:
            ended = [every is not None and len(fake.flag_reads) % every == 0] * rows
        assert len(ended) == rows
        # A fused unit's read holds two kinds a step: rows end only at its last step.
        steps = int(flags.shape[0]) // 2
        return [[False] * rows] * (2 * steps - 2) + [list(ended), [False] * rows]

    def audio(wavs: torch.Tensor) -> np.ndarray:
        assert wavs.device == CUDA and wavs.dtype == torch.float32 and wavs.dim() == 2
        fake.audio_reads.append(wavs)
        return np.zeros(tuple(int(n) for n in wavs.shape), np.float32)

    def codes(tokens: torch.Tensor) -> np.ndarray:
        assert tokens.device == CUDA and not tokens.dtype.is_floating_point
        fake.code_reads.append(tokens)
        return np.zeros(tuple(int(n) for n in tokens.shape), np.int64)

    def row_generator(device: torch.device, seed: int) -> torch.Generator:
        fake.generator_devices.append(torch.device(device))
        return torch.Generator().manual_seed(seed)  # no CUDA generator can be made here

    def step_flags_later(flags: torch.Tensor):  # type: ignore[no-untyped-def]
        # No pinned memory or event without a card: the same checked read, made when asked.
        fake.late_reads += 1
        return lambda: step_flags(flags)

    real_draw = rowwise.exponential_draw

    def exponential_draw(scores: torch.Tensor, num_vq: int, generators: Any) -> torch.Tensor:
        # Fake tensors refuse a generator in exponential_ (and this one is a CPU stand-in):
        # the draw runs on the card with the global stream instead, each row's generator
        # checked to be there. tests/core/engine/test_device_step.py checks the real draw.
        assert scores.device == CUDA and scores.dtype == torch.float32
        if generators:
            assert all(g is None or isinstance(g, torch.Generator) for g in generators)
            fake.generator_draws += sum(g is not None for g in generators)
        return real_draw(scores, num_vq, None)

    monkeypatch.setattr(host_reads, "step_flags", step_flags)
    monkeypatch.setattr(host_reads, "step_flags_later", step_flags_later)
    monkeypatch.setattr(rowwise, "exponential_draw", exponential_draw)
    monkeypatch.setattr(host_reads, "audio", audio)
    monkeypatch.setattr(host_reads, "codes", codes)
    monkeypatch.setattr(seeds, "row_generator", row_generator)
    remove = torch.nn.modules.module.register_module_forward_pre_hook(_same_dtype_and_device)
    try:
        with mode:
            yield fake
    finally:
        remove.remove()
        model.decode_step = None


def _same_dtype_and_device(module: torch.nn.Module, args: tuple[Any, ...]) -> None:
    """CUDA refuses a Linear or a convolution whose input's dtype or device is not its
    weights'; fake tensors let the dtype through, so it is checked here."""
    if not isinstance(module, torch.nn.Linear | torch.nn.Conv1d | torch.nn.ConvTranspose1d):
        return
    weight = module.weight
    for arg in args:
        if isinstance(arg, torch.Tensor) and arg.is_floating_point():
            assert arg.dtype == weight.dtype, (
                f"{type(module).__name__} with {weight.dtype} weights fed {arg.dtype}"
            )
            assert arg.device == weight.device, (
                f"{type(module).__name__} on {weight.device} fed a tensor on {arg.device}"
            )


def _prompt(gpu: FakeGpu, text: str = TEXT, voice: Voice | None = None) -> torch.Tensor:
    speaker = voice or Voice(embedding=gpu.speaker)
    return gpu.model.embed(gpu.model.prompt_ids(text, 5, speaker), speaker)


class Watched(FastDecoder):
    """A decoder that records what its sampler reads."""

    logits_seen: list[torch.Tensor]

    def sample_step(  # type: ignore[override]
        self, logits: torch.Tensor, history: torch.Tensor, *args: Any, **kwargs: Any
    ) -> tuple[torch.Tensor, torch.Tensor]:
        self.logits_seen.append(logits)
        assert history.device == CUDA and history.dtype == torch.long
        return super().sample_step(logits, history, *args, **kwargs)


def _run_steps(decoder: FastDecoder, jobs: list[Job], steps: int, sampling: Sampling) -> list[Job]:
    """`steps` decode steps, then cancelled; the jobs that ended on the way."""
    made = [0]

    def cancelled() -> bool:
        return made[0] >= steps

    ended = []
    for job in decoder.run(jobs, sampling, cancelled):
        if job is None:
            made[0] += 1
        else:
            ended.append(job)
    return ended


class TorchStep:
    """Stands in for ONNX Runtime's OrtStep: the exported computation (DecodeStep), run by
    torch on the decoder's tensors, writing each row's key and value into the cache views it
    is given as OrtStep's in-place binding does. The decoder's side of slot ranges (its
    buffers, index tensors and copies back) then runs on fake CUDA."""

    def __init__(self, model: ChatModel) -> None:
        from chattts_studio.core.engine.onnxrt.graph import DecodeStep

        self.step = DecodeStep(model.gpt, model.code_heads())
        self.calls: list[tuple[int, int]] = []

    def run(
        self,
        embeds: torch.Tensor,
        pos: torch.Tensor,
        past_k: list[torch.Tensor],
        past_v: list[torch.Tensor],
    ) -> tuple[torch.Tensor, torch.Tensor]:
        for t in (embeds, pos, *past_k, *past_v):
            assert t.device == CUDA
        hidden, logits, keys, values = self.step(embeds, pos, past_k, past_v)
        for cache, new in zip((*past_k, *past_v), (*keys, *values), strict=True):
            cache.copy_(new)
        self.calls.append((int(embeds.shape[0]), int(past_k[0].shape[2])))
        return hidden, logits


@dataclass(frozen=True)
class Form:
    """One FastDecoder form: its constructor's arguments, and how it is run."""

    static: bool = False
    graphs: bool = False
    exact: bool = False
    chunk_rows: int | None = None
    late_flags: bool | None = None  # None: the decoder's default (on for CUDA's static step)
    fused_steps: int = 0
    compiled: bool = False
    chunked: bool = False  # exact steps in chunks (the CPU's form), forced onto CUDA
    onnx: bool = False  # slot ranges through the engine's step runner
    fp32_only: bool = False  # the ONNX engine's GPT is fp32


FORMS = {
    "plain": Form(),
    "static": Form(static=True),
    "graphs": Form(graphs=True),
    "exact": Form(exact=True),
    "exact-graphs": Form(exact=True, graphs=True),  # the speech API's form on a GPU
    "static-flags-first": Form(static=True, late_flags=False),  # a lever's off position
    "fused-graphs": Form(graphs=True, fused_steps=8),  # whole steps as one unit, replayed
    # Inductor cannot compile fake tensors: the form checks the eager fallback's devices.
    "compiled": Form(static=True, compiled=True),
    "exact-chunks": Form(exact=True, chunked=True, chunk_rows=2),
    "slot-ranges": Form(onnx=True, fp32_only=True),
    "slot-ranges-exact": Form(onnx=True, exact=True, fp32_only=True),
}


class GraphReplay:
    """Stands in for StepGraphs (no CUDA graph can be captured here): runs the static step on
    its own static buffers, as a replay reads them, and records any host operand in it."""

    instances: ClassVar[list["GraphReplay"]] = []

    def __init__(self, step: Any, slots: int, num_vq: int, device: torch.device) -> None:
        self.step = step
        self.codes = torch.zeros(slots, num_vq, dtype=torch.long, device=device)
        self.pos = torch.zeros(slots, dtype=torch.long, device=device)
        self.host_operands: list[str] = []
        self.spans: list[int] = []
        GraphReplay.instances.append(self)

    def run(self, codes: torch.Tensor, pos: torch.Tensor, span: int) -> torch.Tensor:
        self.codes.copy_(codes)
        self.pos.copy_(pos)
        self.spans.append(span)
        with NoHostOperands() as watch:
            out = self.step(self.codes, self.pos, span)
        self.host_operands += watch.found
        return out


def _decoder(
    gpu: FakeGpu, form: Form, slots: int, max_len: int, monkeypatch: pytest.MonkeyPatch
) -> Watched:
    if form.chunked:
        monkeypatch.setattr(slot_steps, "chunks_here", lambda device: True)
    if form.graphs:
        GraphReplay.instances = []
        monkeypatch.setattr(slot_steps, "StepGraphs", GraphReplay)
    if form.onnx:
        gpu.model.decode_step = TorchStep(gpu.model)  # type: ignore[assignment]
    decoder = Watched(
        gpu.model,
        slots,
        max_len,
        static=form.static,
        graphs=form.graphs,
        exact=form.exact,
        chunk_rows=form.chunk_rows,
        late_flags=form.late_flags,
        fused_steps=form.fused_steps,
        compiled=form.compiled,
    )
    decoder.logits_seen = []
    return decoder


@pytest.mark.parametrize(
    ("name", "gpu"),
    [
        (name, dtype)
        for name, form in FORMS.items()
        for dtype in DTYPES
        if dtype == "fp32" or not form.fp32_only
    ],
    indirect=["gpu"],
)
def test_each_decoder_form_prefills_and_steps_on_cuda(
    gpu: FakeGpu, name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Three jobs on two rows, two of them with their own seeds and samplings (so the rows
    sample in two groups): prefill, steps with every row running, a row that ends and takes the
    third job (prefilled mid-run), a row that ends with nothing to follow (the others step on
    alone). Everything stays on the card, in the dtypes it must have."""
    form = FORMS[name]
    emb = _prompt(gpu)
    assert emb.device == CUDA and emb.dtype == torch.float32
    decoder = _decoder(gpu, form, 2, int(emb.shape[1]) + 16, monkeypatch)
    assert decoder.k_cache.device == CUDA and decoder.k_cache.dtype == gpu.dtype
    assert decoder.v_cache.device == CUDA and decoder.v_cache.dtype == gpu.dtype
    warm, cool = Sampling(0.7, 0.7, 20), Sampling(0.3, 0.5, 5, repetition_penalty=1.2)
    jobs = [
        Job(0, emb, 8, 1, seed=11, sampling=warm),
        Job(1, emb, 8, 1, seed=12, sampling=cool),
        Job(2, emb, 8, 1, seed=13, sampling=cool),
    ]
    # Step 1-2 everyone runs; step 3 row 0 ends (job 2 takes its row); step 5 row 1 ends.
    gpu.ended = [[False, False], [False, False], [True, False], [False, False], [False, True]]
    ended = _run_steps(decoder, jobs, 7, Sampling(0.3, 0.7, 20))
    assert [job.key for job in ended] == [0, 1]
    assert len(gpu.flag_reads) == 7  # one read a step, and only that
    # CUDA's static steps read it late (after queueing the next step) unless told not to.
    late = (form.static or form.graphs or form.exact) and not (form.chunked or form.onnx)
    assert decoder.ahead == (late and form.late_flags is not False)
    assert gpu.late_reads == (7 if decoder.ahead else 0)
    # Fused units keep a generator a slot (a graph holds it), reseeded for the third job.
    assert gpu.generator_devices == [CUDA] * (2 if form.fused_steps else 3)
    assert gpu.generator_draws >= 7  # every step drew from the rows' own streams
    for logits in decoder.logits_seen:
        assert logits.device == CUDA and logits.dtype == torch.float32
        assert logits.shape[1] == gpu.model.num_codes
    if form.fused_steps:  # once one Sampling is left, units run (eagerly: no capture here)
        assert decoder._fused is not None and decoder._fused.units > 0
    else:  # a step with one row alone: its logits are that row's only
        assert int(decoder.logits_seen[-1].shape[0]) == gpu.model.num_vq
    for job in ended:
        assert job.hiddens and all(h.device == CUDA for h in job.hiddens)
        assert all(h.dtype == torch.float32 for h in job.hiddens)  # the vocoder's input
        assert all(t.device == CUDA and t.dtype == torch.long for t in job.tokens)
    if form.graphs:
        replays = GraphReplay.instances
        assert replays and replays[0].spans, "the graph path was not taken"
        assert replays[0].host_operands == []
    if form.onnx:
        runner = gpu.model.decode_step
        assert isinstance(runner, TorchStep) and runner.calls


@ALL
@pytest.mark.parametrize("name", ["static", "exact"])
def test_the_static_step_reads_nothing_from_the_host(
    gpu: FakeGpu, name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The step a CUDA graph captures: with graphs off it runs eagerly, and it must still be
    capturable, so no host tensor may meet the device ones in it."""
    emb = _prompt(gpu)
    decoder = _decoder(gpu, FORMS[name], 3, int(emb.shape[1]) + 8, monkeypatch)
    watch = NoHostOperands()
    real = decoder._static_step

    def watched(codes: torch.Tensor, pos: torch.Tensor, span: int) -> torch.Tensor:
        with watch:
            return real(codes, pos, span)

    monkeypatch.setattr(decoder, "_static_step", watched)
    _run_steps(decoder, [Job(0, emb, 4, 1)], 3, Sampling(0.3, 0.7, 20))
    assert len(gpu.flag_reads) == 3
    assert watch.found == []


def test_every_decoder_form_is_covered() -> None:
    """A new decoder form (a new constructor parameter of FastDecoder, or a new field of the
    pool's DecoderShape) must be added to FORMS above, with its device checked, before this
    passes."""
    params = set(inspect.signature(FastDecoder.__init__).parameters) - {
        "self",
        "model",
        "slots",
        "max_len",
    }
    covered = {f.name for f in fields(Form)} - {"chunked", "onnx", "fp32_only"}
    assert params == covered, f"FastDecoder forms not in FORMS: {params ^ covered}"
    assert {f.name for f in fields(DecoderShape)} - {"slots"} <= covered | {"static"}
    defaults = {f.name: f.default for f in fields(Form)}
    for field_name in covered:
        assert any(getattr(form, field_name) != defaults[field_name] for form in FORMS.values())


@ALL
@pytest.mark.parametrize("penalty", [1.0, 1.05], ids=["no-window", "repetition-window"])
def test_the_sampler_runs_on_the_card(gpu: FakeGpu, penalty: float) -> None:
    """ChatTTS's sampling pipeline on CUDA logits: temperature, the repetition window over
    the last 16 codes, top-P and top-K, EOS held off, multinomial; with the global RNG, with
    per-row generators, and in two groups of settings."""
    num_vq, num_codes, rows = gpu.model.num_vq, gpu.model.num_codes, 3
    logits = torch.randn(rows * num_vq, num_codes, device=CUDA)
    history = torch.randint(0, num_codes, (rows * num_vq, rowwise.REPETITION_WINDOW), device=CUDA)
    steps = torch.tensor([0, 5, 30], device=CUDA)
    min_steps = torch.tensor([1, 1, 40], device=CUDA)
    sampling = Sampling(0.3, 0.7, 20, repetition_penalty=penalty)
    warpers = rowwise.warpers_for(sampling)
    for generators in (None, [seeds.row_generator(CUDA, n) for n in range(rows)]):
        codes, bad = sample_codes(
            logits, history, steps, min_steps, sampling, warpers, num_vq, generators
        )
        assert (
            codes.device == CUDA
            and codes.dtype == torch.long
            and tuple(codes.shape) == (rows, num_vq)
        )
        assert bad.device == CUDA and bad.dtype == torch.bool and tuple(bad.shape) == (rows,)
    assert gpu.generator_devices == [CUDA] * rows
    groups = RowSampling(num_vq, CUDA)
    groups.regroup([sampling, Sampling(0.7, 0.5, 5), sampling])
    assert len(groups.groups) == 2
    codes, bad = groups.sample(logits, history, steps, min_steps)
    assert codes.device == CUDA and bad.device == CUDA


@ALL
def test_the_vocoder_and_a_streamed_chunk_run_on_the_card(gpu: FakeGpu) -> None:
    """DVAE decoder + Vocos for two segments at once, and a segment's early chunks: fp32
    hidden states in, fp32 audio out, read back once a call."""
    decoder_inputs: list[torch.Tensor] = []
    chat: Any = gpu.model._chat
    hook = chat.decoder.register_forward_pre_hook(lambda _m, args: decoder_inputs.append(args[0]))
    try:
        hidden = gpu.model.hidden_size
        segments = [torch.randn(40, hidden, device=CUDA), torch.randn(40, hidden, device=CUDA)]
        wavs = gpu.model.vocode(segments)
        assert len(wavs) == 2 and len(gpu.audio_reads) == 1
        stream = ChunkVocoder(gpu.model)
        steps = [torch.randn(hidden, device=CUDA) for _ in range(48)]
        assert stream.ready(len(steps))
        stream.chunk(steps, False)
        stream.chunk(steps, True)
        assert len(gpu.audio_reads) == 3
    finally:
        hook.remove()
    assert len(decoder_inputs) == 3
    for batch in decoder_inputs:
        assert batch.device == CUDA and batch.dtype == torch.float32


@ALL
def test_a_voice_clone_encodes_and_prompts_on_the_card(gpu: FakeGpu) -> None:
    """The DVAE encoder's pass over a clip, then a prompt built from the cloned sample (its
    codes decoded on the host, placed in the ids on the card) and prefilled."""
    clip = np.zeros(24000, np.float32)
    sample = gpu.model.encode_sample(clip)
    assert len(gpu.code_reads) == 1
    voice = Voice(sample=sample, transcript="你好")
    emb = _prompt(gpu, voice=voice)
    assert emb.device == CUDA and emb.dtype == torch.float32
    decoder = FastDecoder(gpu.model, 1, int(emb.shape[1]) + 4)
    _run_steps(decoder, [Job(0, emb, 2, 1)], 2, Sampling(0.3, 0.7, 20))
    assert len(gpu.flag_reads) == 2


def _fake_engine(gpu: FakeGpu, monkeypatch: pytest.MonkeyPatch) -> Any:
    """An Engine holding the fake-CUDA model, as Engine.load leaves one on a GPU; CUDA's
    memory queries answer for an 80 GB card."""
    from chattts_studio.core.engine.devices import Device, torch_dtype
    from chattts_studio.core.engine.engine import Engine
    from chattts_studio.core.engine.loading import LoadedModel
    from chattts_studio.core.engine.request import Precision
    from chattts_studio.core.weights import models

    total = 80 << 30
    monkeypatch.setattr(torch.cuda, "mem_get_info", lambda device=None: (total // 2, total))

    class Properties:
        total_memory = total

    monkeypatch.setattr(torch.cuda, "get_device_properties", lambda device=None: Properties())
    precision = {torch_dtype(v): v for v in Precision if v is not Precision.INT8}[gpu.dtype]
    engine = Engine()
    engine.model = gpu.model
    engine.loaded = LoadedModel(
        models.ensure("demo"), Device("cuda:0", "Fake GPU"), precision, False, 0.0
    )
    engine.cuda_graphs = False  # no graph can be captured here (the graph path: FORMS)
    return engine


@ALL
def test_a_whole_synthesis_runs_on_the_card(gpu: FakeGpu, monkeypatch: pytest.MonkeyPatch) -> None:
    """What a GPU user's first Synthesize runs: the plan (the batch from free memory), the
    pooled static decoder, streamed chunks of the segment that plays next, the vocoder queue
    and the results, for three segments."""
    from chattts_studio.core.engine.request import SynthesisRequest

    engine = _fake_engine(gpu, monkeypatch)
    # Rows end (as by EOS) after 26 steps: past the first streamed chunk (24 steps).
    gpu.end_every = 26
    text = "今天天气很好。我们去公园散步吧！然后回家。"
    request = SynthesisRequest(text, speaker=gpu.speaker, refine_text=False, segment_size=8)
    chunks: list[Any] = []
    results = list(engine.synthesize(request, listener=chunks.append))
    assert len(results) >= 3 and [r.index for r in results] == list(range(len(results)))
    assert all(r.steps > 0 for r in results)
    assert gpu.flag_reads and gpu.audio_reads
    assert any(not c.final for c in chunks), "no chunk was streamed before its segment ended"
    assert [c.index for c in chunks if c.final] == [r.index for r in results]
    pooled = next(iter(engine.decoders._decoders.values()))
    assert pooled.static and pooled.k_cache.device == CUDA and pooled.k_cache.dtype == gpu.dtype


@pytest.mark.parametrize("gpu", ["bf16"], indirect=True)
def test_rows_join_a_captured_graph_batch_on_the_card(
    gpu: FakeGpu, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first segment first on a GPU's static step through a CUDA graph stand-in: the
    first row steps alone in the captured batch until its first chunk's steps, then the
    others join it in their free rows, replayed by the same graph (no capture for a new row
    count: a static step holds every slot), with no host operand in any replay."""
    from chattts_studio.core.engine.decode.streaming import FIRST_AUDIO_STEPS
    from chattts_studio.core.engine.request import SynthesisRequest

    engine = _fake_engine(gpu, monkeypatch)
    engine.cuda_graphs = True
    GraphReplay.instances = []
    monkeypatch.setattr(slot_steps, "StepGraphs", GraphReplay)
    rows: list[int] = []
    monkeypatch.setattr(engine.live, "add_steps", lambda keys: rows.append(len(keys)))
    gpu.end_every = FIRST_AUDIO_STEPS + 6
    text = "今天天气很好。我们去公园散步吧！然后回家。"
    request = SynthesisRequest(text, speaker=gpu.speaker, refine_text=False, segment_size=8)
    chunks: list[Any] = []
    results = list(engine.synthesize(request, listener=chunks.append))
    assert len(results) >= 3 and [r.index for r in results] == list(range(len(results)))
    joined = next(i for i, n in enumerate(rows) if n > 1)
    assert joined == FIRST_AUDIO_STEPS and set(rows[:joined]) == {1}, rows
    assert len(GraphReplay.instances) == 1, "a row joining made the step capture again"
    replays = GraphReplay.instances[0].spans
    assert len(replays) == len(rows) and not GraphReplay.instances[0].host_operands
    assert chunks and not chunks[0].final and chunks[0].index == 0


@dataclass
class SideSeams:
    """What the side stream's stand-ins saw (no CUDA stream can be made here)."""

    asked: list[tuple[torch.device, bool]] = field(default_factory=list)
    side: RecordedSide = field(default_factory=RecordedSide)
    later: list[torch.Tensor] = field(default_factory=list)  # audio read through audio_later


def _side_stream_seams(monkeypatch: pytest.MonkeyPatch) -> SideSeams:
    """vocoding.side_stream replaced by a stand-in recording the blocks run 'on the side
    stream', and host_reads.audio_later by a check that the audio it gets is the card's,
    read inside such a block (a pinned copy behind an event there, on a GPU)."""
    from chattts_studio.core.engine.decode import vocoding

    seen = SideSeams()

    def side_stream(device: torch.device, wanted: bool) -> RecordedSide | None:
        seen.asked.append((device, wanted))
        return seen.side if wanted else None

    def audio_later(wavs: torch.Tensor) -> host_reads.LaterAudio:
        assert wavs.device == CUDA and wavs.dtype == torch.float32 and wavs.dim() == 2
        assert seen.side.inside, "audio read outside the side stream's block"
        seen.later.append(wavs)
        host = np.zeros(tuple(int(n) for n in wavs.shape), np.float32)
        return host_reads.LaterAudio(lambda: True, lambda: host)

    monkeypatch.setattr(vocoding, "side_stream", side_stream)
    monkeypatch.setattr(host_reads, "audio_later", audio_later)
    return seen


@ALL
def test_the_vocoder_runs_on_a_side_stream_on_the_card(
    gpu: FakeGpu, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The vocoder_stream lever's form (decode/vocoding.py): finished units are vocoded inside
    the side stream's block and their audio comes back through audio_later, never through
    the blocking read."""
    from chattts_studio.core.engine.request import SynthesisRequest

    engine = _fake_engine(gpu, monkeypatch)
    engine.vocoder_stream = True
    gpu.end_every = 26
    seen = _side_stream_seams(monkeypatch)
    text = "今天天气很好。我们去公园散步吧！然后回家。"
    request = SynthesisRequest(text, speaker=gpu.speaker, refine_text=False, segment_size=8)
    results = list(engine.synthesize(request))  # no listener: every unit through the queue
    assert len(results) >= 3 and [r.index for r in results] == list(range(len(results)))
    assert all(r.steps > 0 and len(r.audio) > 0 for r in results)
    assert seen.asked == [(CUDA, True)]
    assert seen.later and len(seen.side.blocks) == len(seen.later)
    assert not gpu.audio_reads  # the blocking read was never used


@ALL
def test_out_of_memory_halves_the_batch_on_the_card(
    gpu: FakeGpu, monkeypatch: pytest.MonkeyPatch, inject_oom: list[int]
) -> None:
    """The out-of-memory policy as far as it computes: the first decoder of more than one row
    fails, the pool and memory are let go, and every segment is made again at half the batch
    on the card."""
    from chattts_studio.core.engine.request import SynthesisRequest

    engine = _fake_engine(gpu, monkeypatch)
    gpu.end_every = 4
    emptied: list[bool] = []
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "empty_cache", lambda: emptied.append(True))
    for name in ("memory_allocated", "memory_reserved", "max_memory_allocated"):
        monkeypatch.setattr(torch.cuda, name, lambda device=None: 0)
    monkeypatch.setattr(torch.cuda, "reset_peak_memory_stats", lambda device=None: None)
    text = "今天天气很好。我们去公园散步吧！然后回家。"
    request = SynthesisRequest(
        text, speaker=gpu.speaker, refine_text=False, segment_size=8, batch_size=4
    )
    results = list(engine.synthesize(request))
    assert inject_oom == [min(4, len(results))]
    assert emptied, "memory was not given back to the device"
    assert {r.batch_size for r in results} == {inject_oom[0] // 2}


@ALL
@pytest.mark.parametrize("vocoder_stream", [False, True])
def test_the_speech_api_batcher_runs_on_the_card(
    gpu: FakeGpu, monkeypatch: pytest.MonkeyPatch, vocoder_stream: bool
) -> None:
    """The speech API's continuous batch on its own thread (the mode entered there too): two
    requests with their own seeds and samplings share the exact static step through a graph
    stand-in, each streamed back in order and finished; with the vocoder_stream lever, every
    chunk vocoded on the side stream (stand-in seams) and none through the blocking read."""
    from chattts_studio.core.engine.batch.batcher import Batcher
    from chattts_studio.core.engine.batch.tickets import Failed, Finished, SpeechOrder, collect

    engine = _fake_engine(gpu, monkeypatch)
    engine.cuda_graphs = True
    GraphReplay.instances = []
    monkeypatch.setattr(slot_steps, "StepGraphs", GraphReplay)
    real_loop = Batcher._loop

    def loop_on_the_card(self: Batcher) -> None:
        with gpu.mode:  # a dispatch mode is the thread's own
            real_loop(self)

    monkeypatch.setattr(Batcher, "_loop", loop_on_the_card)
    gpu.end_every = 6
    engine.vocoder_stream = vocoder_stream
    seen = _side_stream_seams(monkeypatch)
    batcher = Batcher(engine, slots=2)
    batcher.start()
    try:
        orders = [
            SpeechOrder("你好。", gpu.speaker, seed=1, sampling=Sampling(0.7, 0.7, 20)),
            SpeechOrder("再见。", gpu.speaker, seed=2, sampling=Sampling(0.3, 0.5, 5)),
        ]
        waits = [collect(batcher, order) for order in orders]
        for done, _got in waits:
            assert done.wait(120), "a request never finished"
    finally:
        batcher.close()
    for _done, got in waits:
        assert not any(isinstance(item, Failed) for item in got), got
        assert isinstance(got[-1], Finished) and got[-1].steps > 0
    assert len(gpu.generator_devices) >= 2 and set(gpu.generator_devices) == {CUDA}
    assert GraphReplay.instances and all(not g.host_operands for g in GraphReplay.instances)
    assert seen.asked == [(CUDA, vocoder_stream)]
    assert bool(seen.later) == vocoder_stream and bool(gpu.audio_reads) != vocoder_stream


@ALL
def test_project_takes_run_on_the_card(gpu: FakeGpu, monkeypatch: pytest.MonkeyPatch) -> None:
    """The segment editor's takes (Engine.make_takes, core/engine/takes.py): seeded rows of
    the exact static step over every slot, each take vocoded alone."""
    from chattts_studio.core.engine.cancel import CancelToken
    from chattts_studio.core.engine.takes import MadeTake, TakeOrder

    engine = _fake_engine(gpu, monkeypatch)
    gpu.end_every = 5
    voice = Voice(embedding=gpu.speaker)
    orders = [TakeOrder(n, "你好。", voice, 10 + n, Sampling(0.3, 0.7, 20)) for n in range(3)]
    made: list[MadeTake] = []
    rows = engine.make_takes(orders, CancelToken(), made.append)
    assert (rows.slots, rows.product_rows, rows.chunk_rows) == (3, 3, None)  # a GPU's form
    assert sorted(m.order.key for m in made) == [0, 1, 2]
    assert gpu.generator_devices == [CUDA, CUDA, CUDA]
    assert len(gpu.audio_reads) == 3  # one vocoder call a take
    pooled = next(iter(engine.decoders._decoders.values()))
    assert pooled.exact and pooled.static and pooled.k_cache.device == CUDA


def _break(monkeypatch: pytest.MonkeyPatch, where: str) -> None:
    """One CUDA path made wrong on purpose, as a careless change would."""
    if where == "decode mask":

        def host_mask(self: Any, pos: torch.Tensor, span: int) -> torch.Tensor:
            keys = torch.arange(span)  # on the CPU: the bug
            return keys.view(1, 1, 1, span) <= pos.view(-1, 1, 1, 1)

        monkeypatch.setattr(FastDecoder, "_decode_mask", host_mask)
    elif where == "step counts":
        real_sample = rowwise.sample_codes

        def host_steps(
            logits: torch.Tensor, history: torch.Tensor, steps: torch.Tensor, *rest: Any
        ) -> Any:
            # The rows' step counts kept on the host: the repetition window's bug.
            return real_sample(logits, history, steps.cpu(), *rest)

        monkeypatch.setattr(rowwise, "sample_codes", host_steps)
    elif where == "input dtype":
        real_layers = FastDecoder._layers

        def wrong_dtype(self: Any, x: torch.Tensor, *rest: Any) -> torch.Tensor:
            return real_layers(self, x.double(), *rest)  # not the weights' dtype: the bug

        monkeypatch.setattr(FastDecoder, "_layers", wrong_dtype)


@ALL
@pytest.mark.parametrize("where", ["decode mask", "step counts", "input dtype"])
def test_a_tensor_on_the_wrong_device_or_dtype_fails(
    gpu: FakeGpu, where: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The checks above can fail: a mask built on the CPU, a repetition window built on the
    CPU, or the step's input cast to another dtype than the weights' each stop the decode."""
    emb = _prompt(gpu)
    decoder = FastDecoder(gpu.model, 1, int(emb.shape[1]) + 4)
    _break(monkeypatch, where)
    with pytest.raises((RuntimeError, AssertionError), match=r"device|dtype|fed"):
        _run_steps(decoder, [Job(0, emb, 3, 1)], 3, Sampling(0.3, 0.7, 20))
