"""The first segment first: refine passes a step at a time between the decoder's steps (on ONNX
Runtime, where the studio's own pass runs), and rows joining a running batch with the codes they
would have had at its start."""

import itertools
from collections.abc import Iterator

import pytest
import torch

from chattts_studio.core.engine.chattts.chat import RefinePass
from chattts_studio.core.engine.decode.job import Job
from chattts_studio.core.engine.decode.loop import FastDecoder
from chattts_studio.core.engine.decode.rowwise import Sampling
from chattts_studio.core.engine.engine import Engine
from chattts_studio.core.engine.metrics import LiveMetrics
from chattts_studio.core.engine.request import AudioChunk, SegmentRestarted, SynthesisRequest

TEXT = "今天天气很好。我们去公园散步吧！公园里有很多人，有的在跑步，有的在下棋。然后回家。" * 3
SAMPLING = Sampling(0.3, 0.7, 20)


@pytest.fixture(scope="module")
def onnx_engine(demo_model: str) -> Iterator[Engine]:
    engine = Engine()
    assert engine.load(demo_model, "cpu", "fp32", engine="onnx").engine.value == "onnx"
    yield engine
    engine.unload()


def test_the_next_texts_are_refined_between_the_first_segments_steps(
    onnx_engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
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
    assert set(head) == {"refine 1", "decode 0"}  # its pass, then its steps alone
    after = events[first_audio[0] :]
    joined = next(n for n, e in enumerate(after) if e.startswith("decode 0,"))
    between = after[:joined]
    # One step of the next pass between two of the first segment's steps, many times over.
    pairs = sum(a == "decode 0" and b == "refine 3" for a, b in itertools.pairwise(between))
    assert pairs >= 10, between[:20]
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
