"""The first segment first: its own refine pass and its first chunk's steps before anything
else, and rows joining a running batch with the codes they would have had at its start."""

from collections.abc import Iterator

import pytest
import torch

from chattts_studio.core.engine.chattts.chat import RefinePass
from chattts_studio.core.engine.decode.job import Job
from chattts_studio.core.engine.decode.loop import FastDecoder
from chattts_studio.core.engine.decode.streaming import FIRST_AUDIO_STEPS
from chattts_studio.core.engine.engine import Engine
from chattts_studio.core.engine.metrics import LiveMetrics
from chattts_studio.core.engine.request import (
    AudioChunk,
    Sampling,
    SegmentRestarted,
    SynthesisRequest,
)

TEXT = "今天天气很好。我们去公园散步吧！公园里有很多人，有的在跑步，有的在下棋。然后回家。" * 3
SAMPLING = Sampling(0.3, 0.7, 20)


@pytest.fixture(scope="module")
def onnx_engine(demo_model: str) -> Iterator[Engine]:
    engine = Engine()
    assert engine.load(demo_model, "cpu", "fp32", engine="onnx").engine.value == "onnx"
    yield engine
    engine.unload()


def test_the_first_segment_decodes_alone_to_its_first_audio_then_the_rest_join(
    onnx_engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On ONNX Runtime (the studio's own refine pass, a step at a time): the first text's pass,
    the first row alone for its first chunk's steps, the first audio, then the next group's
    pass whole (stepping a lone row between its steps cost the job more than it gave), then
    the batch."""
    events: list[str] = []
    real_step = RefinePass.step

    def step(self: RefinePass) -> bool:
        events.append(f"refine {len(self.texts_in)}")
        return real_step(self)

    real_add = LiveMetrics.add_steps

    def add_steps(self: LiveMetrics, keys: list[int]) -> None:
        events.append("decode " + ",".join(map(str, sorted(keys))))
        real_add(self, keys)

    monkeypatch.setattr(RefinePass, "step", step)
    monkeypatch.setattr(LiveMetrics, "add_steps", add_steps)
    first_audio: list[int] = []

    def listen(event: AudioChunk | SegmentRestarted) -> None:
        if isinstance(event, AudioChunk) and not first_audio:
            first_audio.append(len(events))

    request = SynthesisRequest(TEXT, segment_size=25, batch_size=3, refine_text=True)
    results = list(onnx_engine.synthesize(request, listen))
    assert len(results) >= 4
    head = events[: first_audio[0]]
    passes = head.count("refine 1")
    assert passes > 10 and head[:passes] == ["refine 1"] * passes  # step by step, alone
    assert head[passes:] == ["decode 0"] * FIRST_AUDIO_STEPS
    after = events[first_audio[0] :]
    joined = next(n for n, e in enumerate(after) if e.startswith("decode 0,"))
    assert after[:joined] == ["refine 3"] * joined and joined > 10  # whole, then they join
    assert after[joined] == "decode 0,1,2"
    assert onnx_engine.live.snapshot().refined == len(results)


@pytest.mark.parametrize("kind", ["engine", "onnx_engine"])
def test_a_row_that_joins_a_running_batch_gets_the_codes_it_gets_at_the_start(
    kind: str, request: pytest.FixtureRequest
) -> None:
    """Exact rows with their own seeds: a job admitted at step 17 of a running decode draws
    the same codes as when it starts with the others."""
    engine: Engine = request.getfixturevalue(kind)
    model = engine.model
    assert model is not None

    def job(key: int, text: str, seed: int) -> Job:
        speaker = engine.sample_speaker(seed)
        return Job(key, model.embed(model.prompt_ids(text, 5, speaker), speaker), 40, 40, seed=seed)

    texts = ["今天天气很好", "我们去公园", "有的在下棋"]
    together = [job(k, t, 10 + k) for k, t in enumerate(texts)]
    decoder = FastDecoder(model, 3, 256, exact=True)
    list(decoder.run(together, SAMPLING, lambda: False))
    late = [job(k, t, 10 + k) for k, t in enumerate(texts)]
    waiting = list(late)
    steps = [0]

    def source() -> Job | None:
        if waiting and (waiting[0].key == 0 or steps[0] >= 17):
            return waiting.pop(0)
        return None

    def on_step(_keys: list[int]) -> None:
        steps[0] += 1

    decoder = FastDecoder(model, 3, 256, exact=True)
    list(decoder.run(source, SAMPLING, lambda: False, on_step))
    for alone, joined in zip(together, late, strict=True):
        assert alone.steps == joined.steps == 40
        assert torch.equal(torch.stack(alone.tokens), torch.stack(joined.tokens))
