"""The refine-text pass on the studio's own decode pieces (decode/text_pass.py) against
ChatTTS's own refine loop: a lone text's tokens equal stock's with torch's step and with the
exported ONNX Runtime step, a batch draws from one stream as stock does, cancel stops it, and
the engine uses it where the exported step runs. Demo weights (random: noise, never speech)."""

import contextlib
from collections.abc import Iterator

import pytest
import torch

from chattts_studio.core.engine.cancel import CancelToken
from chattts_studio.core.engine.chattts.chat import ChatModel
from chattts_studio.core.engine.decode import text_pass
from chattts_studio.core.engine.decode.job import NonFiniteError
from chattts_studio.core.engine.decode.text_pass import TextSampling, refine_ids
from chattts_studio.core.engine.engine import Engine
from chattts_studio.core.engine.engine_choice import EngineKind
from chattts_studio.core.engine.onnxrt.session import OrtStep
from chattts_studio.core.engine.request import RefineSettings, SynthesisRequest

SETTINGS = RefineSettings("[oral_2][laugh_0][break_6]", 0.7, 20)
GAIN = 5.0  # EOS then ranks first now and then: the three rows end after 12, 6 and 3 tokens
TEXTS = ["你好，今天天气不错。", "我们去公园散步吧，好吗？", "谢谢。"]


@pytest.fixture(scope="module")
def onnx_engine(demo_model: str) -> Iterator[Engine]:
    engine = Engine()
    loaded = engine.load(demo_model, "cpu", "fp32", engine="onnx")
    assert loaded.engine is EngineKind.ONNX
    yield engine
    engine.unload()


def _stock_ids(model: ChatModel, texts: list[str], seed: int, cap: int) -> list[list[int]]:
    from ChatTTS import Chat

    params = Chat.RefineTextParams(
        prompt=SETTINGS.prompt,
        top_P=SETTINGS.top_p,
        top_K=SETTINGS.top_k,
        max_new_token=cap,
        min_new_token=1,
        show_tqdm=False,
        ensure_non_empty=False,
    )
    torch.manual_seed(seed)
    refined = model._chat._refine_text(texts, model._chat.device, params)
    ids = [[int(t) for t in row] for row in refined.ids]
    refined.destroy()
    return ids


def _own_ids(model: ChatModel, texts: list[str], seed: int, cap: int) -> list[list[int]]:
    sampling = TextSampling(0.7, SETTINGS.top_p, SETTINGS.top_k, cap, 1)
    prompts = [model.refine_prompt(t, SETTINGS.prompt) for t in texts]
    torch.manual_seed(seed)
    return [[int(t) for t in row] for row in refine_ids(model, prompts, sampling, CancelToken())]


def _torch_step(model: ChatModel):  # type: ignore[no-untyped-def]
    """The model with torch's own step (the exported one set aside for the block)."""

    class Swap:
        def __enter__(self) -> None:
            self.kept, model.decode_step = model.decode_step, None

        def __exit__(self, *_exc: object) -> None:
            model.decode_step = self.kept

    return Swap()


@pytest.mark.parametrize("seed", [1, 7, 2024])
def test_a_lone_text_gets_stocks_tokens_with_torchs_step(engine: Engine, seed: int) -> None:
    model = engine.model
    assert model is not None and model.decode_step is None
    stock = _stock_ids(model, [TEXTS[1]], seed, 40)
    assert _own_ids(model, [TEXTS[1]], seed, 40) == stock
    assert 1 <= len(stock[0]) <= 40  # something was made, within the cap


@pytest.mark.parametrize("seed", [1, 7, 2024])
def test_a_lone_text_gets_stocks_tokens_on_onnx_runtime(onnx_engine: Engine, seed: int) -> None:
    model = onnx_engine.model
    assert model is not None and model.decode_step is not None
    stock = _stock_ids(model, [TEXTS[0]], seed, 40)
    assert _own_ids(model, [TEXTS[0]], seed, 40) == stock


@contextlib.contextmanager
def _eos_after(model: ChatModel, tokens: list[int], gain: float) -> Iterator[None]:
    """The text head's EOS row made the sum of `tokens`' rows (their weight norm's directions,
    at `gain`), so that EOS ranks high where those tokens did: random weights rarely draw EOS,
    and the rows of a batch should end at different steps here."""
    weight = model._chat.embed.head_text.parametrizations.weight
    scale, direction = weight.original0, weight.original1
    eos = model.text_eos
    kept = scale[eos].clone(), direction[eos].clone()
    with torch.no_grad():
        rows = direction[tokens] / direction[tokens].norm(dim=1, keepdim=True)
        scale[eos], direction[eos] = scale[tokens].mean() * gain, rows.sum(0)
    try:
        yield
    finally:
        with torch.no_grad():
            scale[eos], direction[eos] = kept


def test_a_batch_draws_from_one_stream_as_stock_does(onnx_engine: Engine) -> None:
    """Rows of different lengths, ending at different steps: each row's tokens are those it
    draws at its place in stock's batch, and the global generator ends where stock's does."""
    model = onnx_engine.model
    assert model is not None
    drawn = [t for row in _own_ids(model, TEXTS, 5, 30) for t in row]
    with _eos_after(model, drawn, GAIN):
        with _torch_step(model):
            own = _own_ids(model, TEXTS, 5, 30)
            after_own = torch.get_rng_state()
        stock = _stock_ids(model, TEXTS, 5, 30)
        after_stock = torch.get_rng_state()
        ort = _own_ids(model, TEXTS, 5, 30)
    assert [len(r) for r in own] == [len(r) for r in stock]
    assert len({len(r) for r in stock}) > 1 and max(len(r) for r in stock) < 30, stock
    # Stock pads the batch on the left and runs it as one product; a row here runs at its own
    # positions: the logits differ in their last bits, so the tokens agree where the top
    # choices are not a near tie. All of them, for this seed:
    assert own == stock
    assert ort == own
    assert torch.equal(after_own, after_stock)


def test_cancel_returns_what_was_made(onnx_engine: Engine) -> None:
    model = onnx_engine.model
    assert model is not None
    cancel = CancelToken()
    steps = []
    real = text_pass.step_rows

    def counting(*args, **kwargs):  # type: ignore[no-untyped-def]
        steps.append(1)
        if len(steps) == 3:
            cancel.cancel()
        return real(*args, **kwargs)

    sampling = TextSampling(0.7, 0.7, 20, 60, 1)
    prompts = [model.refine_prompt(t, SETTINGS.prompt) for t in TEXTS[:2]]
    torch.manual_seed(3)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(text_pass, "step_rows", counting)
        out = refine_ids(model, prompts, sampling, cancel)
    assert len(steps) == 3
    assert all(len(row) <= 4 for row in out) and any(len(row) == 4 for row in out)


def test_the_engine_refines_on_its_own_pass_where_the_step_is_exported(
    onnx_engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = onnx_engine.model
    assert model is not None
    torch.manual_seed(11)
    stock = model.refine(TEXTS[:1], SETTINGS, CancelToken(), stock=True)

    def refused(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("stock refine ran")

    monkeypatch.setattr(model._chat, "_refine_text", refused)
    torch.manual_seed(11)
    assert model.refine(TEXTS[:1], SETTINGS, CancelToken()) == stock
    assert stock[0]  # decoded text, not empty


def test_a_cancel_before_the_pass_returns_at_once_with_nothing(onnx_engine: Engine) -> None:
    model = onnx_engine.model
    assert model is not None
    cancel = CancelToken()
    cancel.cancel()
    assert model.refine(TEXTS, SETTINGS, cancel) == ["", "", ""]


def test_non_finite_numbers_in_the_pass_fail_it_with_one_sentence(
    onnx_engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = OrtStep.run
    calls = [0]

    def poisoned(self: OrtStep, *args: object) -> tuple[torch.Tensor, ...]:
        hidden, logits = real(self, *args)  # type: ignore[arg-type]
        calls[0] += 1
        if calls[0] == 2:
            hidden[0] = float("nan")
        return hidden, logits

    monkeypatch.setattr(OrtStep, "run", poisoned)
    model = onnx_engine.model
    assert model is not None
    prompts = [model.refine_prompt(t, SETTINGS.prompt) for t in TEXTS[:2]]
    with pytest.raises(NonFiniteError) as caught:
        refine_ids(model, prompts, TextSampling(0.7, 0.7, 20, 30, 1), CancelToken())
    assert calls[0] == 2 and "\n" not in str(caught.value)
    monkeypatch.undo()
    assert list(onnx_engine.synthesize(SynthesisRequest("你好。")))  # the engine goes on
