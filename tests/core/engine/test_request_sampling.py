"""Per-request control in the continuous batch: each request's own sampling inside a
shared step, its own segment size, and ChatTTS's refine pass batched across requests."""

import numpy as np
import pytest
import torch

from chattts_studio.core.engine.batch.batcher import Batcher
from chattts_studio.core.engine.batch.refine import REFINE_BATCH, REFINE_FAILED
from chattts_studio.core.engine.batch.tickets import (
    Delivery,
    Failed,
    Finished,
    SpeechOrder,
    Ticket,
    collect,
)
from chattts_studio.core.engine.cancel import CancelToken
from chattts_studio.core.engine.chattts.chat import ChatModel
from chattts_studio.core.engine.decode.job import Job
from chattts_studio.core.engine.decode.loop import FastDecoder
from chattts_studio.core.engine.decode.rowwise import RowSampling, sample_codes
from chattts_studio.core.engine.engine import Engine
from chattts_studio.core.engine.request import AudioChunk, RefineSettings, Sampling
from chattts_studio.core.errors import BadSettingError
from chattts_studio.core.text.prepare import needed_steps

DEFAULT = Sampling(0.3, 0.7, 20)  # the batcher's own
COOL = Sampling(0.5, 0.8, 20)
WILD = Sampling(0.9, 0.5, 5)
HOPPY = Sampling(0.7, 0.9, 12, repetition_penalty=1.3)
SAMPLES_PER_STEP = 512  # one GPT step is 512 samples of audio at 24 kHz
REFINE_X = RefineSettings("[oral_2][laugh_0][break_6]", 0.7, 20)
REFINE_Y = RefineSettings("[oral_5][laugh_1][break_3]", 0.7, 20)


def _audio(got: list[Delivery]) -> np.ndarray:
    assert isinstance(got[-1], Finished), got[-1]
    return np.concatenate([c.audio for c in got if isinstance(c, AudioChunk)])


def _run(batcher: Batcher, orders: list[SpeechOrder]) -> list[list[Delivery]]:
    """Submit all of them before the batcher's thread looks (so they share its first steps),
    then gather what each gets."""
    together = [collect(batcher, order) for order in orders]
    if not batcher._thread.is_alive():
        batcher.start()
    for done, _ in together:
        assert done.wait(120)
    return [got for _, got in together]


# -- per-row sampling inside one step ---------------------------------------------------------


def test_grouped_sampling_draws_for_each_row_what_it_draws_alone() -> None:
    """Five rows with three samplings in one step: each row's codes and non-finite flag are
    those of the one-Sampling path run on that row alone with its own settings and stream;
    rows of one Sampling draw exactly what the one-Sampling path draws for them together."""
    num_vq, num_codes, count = 4, 626, 5
    torch.manual_seed(3)
    logits = torch.randn(count * num_vq, num_codes) * 4
    logits[2 * num_vq] = float("nan")  # row 2's numbers went bad
    history = torch.randint(0, num_codes, (count * num_vq, 16))
    steps = torch.tensor([0, 3, 20, 7, 30])
    min_steps = torch.tensor([5, 1, 1, 10, 1])
    samplings = [COOL, WILD, COOL, HOPPY, WILD]
    seeds = [11, 12, 13, 14, 15]
    rows = RowSampling(num_vq, logits.device)
    rows.regroup(samplings)
    assert len(rows.groups) == 3
    gens = [torch.Generator().manual_seed(s) for s in seeds]
    codes, bad = rows.sample(logits.clone(), history, steps, min_steps, gens)
    assert bad.tolist() == [False, False, True, False, False]
    for n, sampling in enumerate(samplings):
        vq = slice(n * num_vq, (n + 1) * num_vq)
        alone_rows = RowSampling(num_vq, logits.device)
        alone_rows.regroup([sampling])
        alone, alone_bad = sample_codes(
            logits[vq].clone(),
            history[vq],
            steps[n : n + 1],
            min_steps[n : n + 1],
            sampling,
            alone_rows.groups[0].warpers,
            num_vq,
            [torch.Generator().manual_seed(seeds[n])],
        )
        assert torch.equal(codes[n], alone[0]), n
        assert bool(bad[n]) == bool(alone_bad[0])
    # The codes really depend on the row's sampling: WILD's rows drawn with COOL differ.
    as_cool = RowSampling(num_vq, logits.device)
    as_cool.regroup([COOL] * count)
    gens = [torch.Generator().manual_seed(s) for s in seeds]
    cool_codes, _ = as_cool.sample(logits.clone(), history, steps, min_steps, gens)
    assert torch.equal(cool_codes[[0, 2]], codes[[0, 2]])
    assert not torch.equal(cool_codes[[1, 3, 4]], codes[[1, 3, 4]])
    # One Sampling: the very path the step ran before (nothing gathered).
    same = RowSampling(num_vq, logits.device)
    same.regroup([WILD] * count)
    assert same.groups[0].rows is None
    gens = [torch.Generator().manual_seed(s) for s in seeds]
    grouped, _ = same.sample(logits.clone(), history, steps, min_steps, gens)
    gens = [torch.Generator().manual_seed(s) for s in seeds]
    scalar, _ = sample_codes(
        logits.clone(), history, steps, min_steps, WILD, same.groups[0].warpers, num_vq, gens
    )
    assert torch.equal(grouped, scalar)


def _emb(engine: Engine, text: str, seed: int) -> torch.Tensor:
    model = engine.model
    assert model is not None
    speaker = engine.sample_speaker(seed)
    return model.embed(model.prompt_ids(text, 5, speaker), speaker)


def test_a_job_that_takes_a_freed_row_at_once_samples_with_its_own_settings(
    engine: Engine,
) -> None:
    """The decoder: a job with other sampling takes the row a finished job left, in the same
    step (the running rows look unchanged); its codes are those it draws alone."""
    assert engine.model is not None

    def late() -> Job:
        return Job(2, _emb(engine, "我们", 2), 20, 20, seed=2, sampling=WILD)

    def decode(jobs: list[Job]) -> Job:
        decoder = FastDecoder(engine.model, 2, 256, exact=True)  # type: ignore[arg-type]
        busy: list[list[int]] = []
        on_step = lambda _keys: busy.append([j.key for j in decoder.active if j])  # noqa: E731
        ended = [j for j in decoder.run(jobs, DEFAULT, lambda: False, on_step) if j]
        if len(jobs) > 1:  # job 2 took job 0's row between two steps
            assert [0, 1] in busy and [2, 1] in busy and [1] not in busy[: busy.index([2, 1])]
        return next(j for j in ended if j.key == 2)

    crowd = [
        Job(0, _emb(engine, "你好", 0), 6, 6, seed=0, sampling=COOL),
        Job(1, _emb(engine, "好的", 1), 40, 40, seed=1),
        late(),
    ]
    together, alone = decode(crowd), decode([late()])
    assert torch.equal(torch.stack(together.tokens), torch.stack(alone.tokens))


def test_requests_with_different_sampling_share_steps_and_each_equals_its_solo_run(
    engine: Engine,
) -> None:
    orders = [
        SpeechOrder("你好。", engine.sample_speaker(1), 1, sampling=COOL),
        SpeechOrder("我们。", engine.sample_speaker(2), 2, sampling=WILD),
        SpeechOrder("好的。", engine.sample_speaker(3), 3),  # the batcher's own
    ]
    batcher = Batcher(engine, slots=4)
    shared: list[int] = []
    batcher.step_listeners.append(lambda ids: shared.append(len(set(ids))))
    try:
        together = _run(batcher, orders)
        assert max(shared) == 3, "the requests never decoded side by side"
        for order, got in zip(orders, together, strict=True):
            (alone,) = _run(batcher, [order])
            assert np.array_equal(_audio(got), _audio(alone))
    finally:
        batcher.close()


def test_a_requests_sampling_changes_its_draw_and_the_default_sampling_does_not(
    engine: Engine,
) -> None:
    speaker = engine.sample_speaker(4)
    plain = SpeechOrder("你好。", speaker, 4)
    batcher = Batcher(engine, slots=2)
    try:
        explicit = SpeechOrder("你好。", speaker, 4, sampling=DEFAULT)
        default, as_default = (_audio(got) for got in _run(batcher, [plain, explicit]))
        (wild,) = _run(batcher, [SpeechOrder("你好。", speaker, 4, sampling=WILD)])
        assert batcher.sampling == DEFAULT
        assert np.array_equal(as_default, default)
        assert _audio(wild).shape == default.shape
        assert not np.array_equal(_audio(wild), default)
    finally:
        batcher.close()


def test_sampling_a_step_cannot_run_with_is_refused_at_submit(engine: Engine) -> None:
    batcher = Batcher(engine, slots=2)
    speaker = engine.sample_speaker(1)
    for bad in (Sampling(0.0, 0.7, 20), Sampling(0.3, 1.5, 20), Sampling(0.3, 0.7, 0)):
        with pytest.raises(BadSettingError, match="temperature above 0"):
            batcher.submit(SpeechOrder("你好。", speaker, sampling=bad), lambda _item: None)
    assert batcher.stats.requests == 0


# -- segment size -----------------------------------------------------------------------------


def test_a_requests_segment_size_changes_its_segments(engine: Engine) -> None:
    batcher = Batcher(engine, slots=2)
    speaker = engine.sample_speaker(5)
    text = "你好。我们走吧。今天很好。"
    # The batcher's 50: the first sentence apart (an early first audio), the rest together.
    assert len(batcher.segments_of(SpeechOrder(text, speaker))) == 2
    small = SpeechOrder(text, speaker, 5, segment_size=4)
    assert [s.text for s in batcher.segments_of(small)] == ["你好。", "我们走吧。", "今天很好。"]
    try:
        (got,) = _run(batcher, [small])
        assert {c.index for c in got if isinstance(c, AudioChunk)} == {0, 1, 2}
        assert _audio(got).size
    finally:
        batcher.close()


# -- refine, batched across requests ------------------------------------------------------------


class RefineSpy:
    """Stands in for ChatModel.refine (the demo weights' refine writes 40 random characters a
    text, which would make every segment long): each text gets a pause that makes its segment
    need more steps than planned, one more per text of the call; `fail` settings raise."""

    def __init__(self, fail: RefineSettings | None = None) -> None:
        self.calls: list[tuple[list[str], RefineSettings]] = []
        self.fail = fail
        self.draws: list[int] = []

    def __call__(
        self, texts: list[str], settings: RefineSettings, cancel: CancelToken
    ) -> list[str]:
        assert not cancel.cancelled
        self.calls.append((list(texts), settings))
        if settings == self.fail:
            raise RuntimeError("refine broke")
        self.draws.append(int(torch.randint(0, 1000, ())))  # what seeding decides
        return [f"{t}[lbreak]{'[uv_break]' * n}" for n, t in enumerate(texts)]


def _spy_prompts(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    texts: list[str] = []
    real = ChatModel.prompt_ids

    def spy(self: ChatModel, text: str, speed: int, speaker: object):  # type: ignore[no-untyped-def]
        texts.append(text)
        return real(self, text, speed, speaker)  # type: ignore[arg-type]

    monkeypatch.setattr(ChatModel, "prompt_ids", spy)
    return texts


def test_refine_runs_for_the_first_segments_of_every_waiting_request_then_the_rest(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two requests with refine (two segments each) and one without, queued together: one
    refine call for both first segments (a request's first audio waits for no other segment of
    its own), then one for both second segments; the refined texts, not the plain ones, reach
    the prompts, and a refined segment decodes for the steps its text needs."""
    refine = RefineSpy()
    monkeypatch.setattr(engine.model, "refine", refine)
    prompts = _spy_prompts(monkeypatch)
    model = engine.model
    assert model is not None
    orders = [
        SpeechOrder("你好。我们。", engine.sample_speaker(6), 6, refine=REFINE_X, segment_size=3),
        SpeechOrder("好的。再见。", engine.sample_speaker(7), 7, refine=REFINE_X, segment_size=3),
        SpeechOrder("谢谢。", engine.sample_speaker(8), 8),
    ]
    batcher = Batcher(engine, slots=4)
    try:
        results = _run(batcher, orders)
    finally:
        batcher.close()
    plain = ["你好。", "好的。", "我们。", "再见。"]
    calls = [plain[:2], plain[2:]]
    assert refine.calls == [([model.normalize(t) for t in call], REFINE_X) for call in calls]
    refined = [
        f"{model.normalize(t)}[lbreak]{'[uv_break]' * n}"
        for call in calls
        for n, t in enumerate(call)
    ]
    assert sorted(prompts) == sorted([*refined, model.normalize("谢谢。")])
    for order, got in zip(orders, results, strict=True):
        texts = [refined[plain.index(s.text)] for s in batcher.segments_of(order) if order.refine]
        steps = sum(needed_steps(t) for t in texts) or needed_steps("谢谢。")
        # Demo weights run to the cap (EOS held off): the refined text's, grown past the plan.
        assert abs(len(_audio(got)) - steps * SAMPLES_PER_STEP) <= 256 * 2
    assert needed_steps(refined[0]) > batcher.segments_of(orders[0])[0].step_cap


def test_a_failed_refine_fails_only_the_requests_it_was_for(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    refine = RefineSpy(fail=REFINE_X)
    monkeypatch.setattr(engine.model, "refine", refine)
    orders = [
        SpeechOrder("你好。", engine.sample_speaker(1), 1, refine=REFINE_X),
        SpeechOrder("我们。", engine.sample_speaker(2), 2, refine=REFINE_Y),
        SpeechOrder("好的。", engine.sample_speaker(3), 3),
    ]
    batcher = Batcher(engine, slots=4)
    try:
        failed, refined, plain = _run(batcher, orders)
        # The client gets a sentence, not the library's own words (those go to the log).
        assert isinstance(failed[-1], Failed) and str(failed[-1].error) == REFINE_FAILED
        assert not any(isinstance(c, AudioChunk) for c in failed)
        assert _audio(refined).size and _audio(plain).size
        assert [settings for _, settings in refine.calls] == [REFINE_X, REFINE_Y]
        assert batcher.stats.failed == 1 and batcher.stats.completed == 2
        (alone,) = _run(batcher, [orders[2]])  # the rest of the batch went on as it would
        assert np.array_equal(_audio(plain), _audio(alone))
    finally:
        batcher.close()


def test_a_refine_call_is_seeded_from_its_first_requests_seed(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The refine call draws from torch's global RNG seeded from the first request's seed:
    the same company refines the same way every time, whatever ran before."""
    refine = RefineSpy()
    monkeypatch.setattr(engine.model, "refine", refine)
    batcher = Batcher(engine, slots=4)

    def refine_for(seed: int) -> None:
        order = SpeechOrder("你好。", engine.sample_speaker(1), seed, refine=REFINE_X)
        ticket = Ticket(1, order, batcher.segments_of(order), lambda _item: None)
        torch.manual_seed(100 + len(refine.draws))  # whatever the RNG held before
        batcher._refine([(ticket, 0)])
        assert ticket.refined[0].endswith("[lbreak]")

    for seed in (1, 1, 2):
        refine_for(seed)
    assert refine.draws[0] == refine.draws[1] != refine.draws[2]


def test_a_text_that_cannot_be_normalised_fails_its_own_request_and_calls_stay_small(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A segment whose normalisation raises fails its request alone (it is picked for a refine
    call with others); and no refine call takes more than REFINE_BATCH segments, whatever
    the slots (every other stream waits while one runs)."""
    refine = RefineSpy()
    monkeypatch.setattr(engine.model, "refine", refine)
    assert engine.model is not None
    real = engine.model.normalize

    def normalize(text: str) -> str:
        if "坏" in text:
            raise ValueError("a normaliser bug")
        return real(text)

    monkeypatch.setattr(engine.model, "normalize", normalize)
    texts = ["坏。", *[f"第{n}句。" for n in range(REFINE_BATCH + 3)]]
    orders = [SpeechOrder(t, engine.sample_speaker(1), 1, refine=REFINE_X) for t in texts]
    batcher = Batcher(engine, slots=16)
    try:
        results = _run(batcher, orders)
    finally:
        batcher.close()
    assert isinstance(results[0][-1], Failed)
    assert all(isinstance(got[-1], Finished) for got in results[1:])
    assert refine.calls and max(len(texts) for texts, _ in refine.calls) <= REFINE_BATCH
    assert sum(len(texts) for texts, _ in refine.calls) == len(texts) - 1
