"""The decode step without the host: a sampler that reads nothing back from the
device yet draws torch.multinomial's codes, and a static step that queues the next GPT step
before it reads which rows ended, with the codes of the step that waits."""

from typing import Any, ClassVar

import pytest
import torch
from torch.utils._python_dispatch import TorchDispatchMode

from chattts_studio.core.engine.decode import fused as fused_module
from chattts_studio.core.engine.decode import host_reads, rowwise
from chattts_studio.core.engine.decode import slots as slot_steps
from chattts_studio.core.engine.decode.job import Job
from chattts_studio.core.engine.decode.loop import FastDecoder
from chattts_studio.core.engine.decode.rowwise import sample_codes
from chattts_studio.core.engine.engine import Engine
from chattts_studio.core.engine.request import Sampling

NUM_VQ, NUM_CODES = 4, 626


def _scores(rows: int, seed: int, zeros: bool) -> torch.Tensor:
    """Probabilities [rows * NUM_VQ, NUM_CODES], peaked as sampling's are, with most of each
    line zero after top-K when `zeros`."""
    gen = torch.Generator().manual_seed(seed)
    logits = torch.randn(rows * NUM_VQ, NUM_CODES, generator=gen) * 4
    if zeros:
        keep = logits.topk(20, dim=-1).indices
        logits = torch.full_like(logits, -torch.inf).scatter(1, keep, logits.gather(1, keep))
    return torch.softmax(logits, -1)


@pytest.mark.parametrize("zeros", [False, True], ids=["dense", "top-k"])
def test_the_exponential_draw_is_multinomials_draw(zeros: bool) -> None:
    """Same generator states in, the same codes out and the same states after, for per-row
    generators and for torch's global RNG (stock's way at batch 1)."""
    for trial in range(40):
        scores = _scores(3, trial, zeros)
        seeds = [trial * 3 + n for n in range(3)]
        ref = [torch.Generator().manual_seed(s) for s in seeds]
        ours = [torch.Generator().manual_seed(s) for s in seeds]
        expected = rowwise.multinomial_draw(scores, NUM_VQ, list(ref))
        drawn = rowwise.exponential_draw(scores, NUM_VQ, list(ours))
        assert torch.equal(drawn, expected)
        assert all(
            torch.equal(a.get_state(), b.get_state()) for a, b in zip(ref, ours, strict=True)
        )
        torch.manual_seed(trial)
        expected = rowwise.multinomial_draw(scores, NUM_VQ, None)
        after_ref = torch.get_rng_state()
        torch.manual_seed(trial)
        assert torch.equal(rowwise.exponential_draw(scores, NUM_VQ, None), expected)
        assert torch.equal(torch.get_rng_state(), after_ref)


class HostReads(TorchDispatchMode):
    """Records the ops that need the host to know a device value: a scalar read, an output
    whose shape depends on values, or multinomial (whose checks read the device twice)."""

    NEED_HOST: ClassVar[set[str]] = {
        "_local_scalar_dense",
        "nonzero",
        "masked_select",
        "multinomial",
        "item",
    }

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[str] = []

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        name = func.overloadpacket.__name__
        if name in self.NEED_HOST:
            self.seen.append(name)
        return func(*args, **(kwargs or {}))


@pytest.mark.parametrize("penalty", [1.0, 1.05])
def test_sampling_asks_the_device_nothing(penalty: float) -> None:
    """The whole sampling pipeline (non-finite guard, temperature, repetition window, top-P,
    top-K, EOS hold, the draw) with per-row generators and without: no op that makes the host
    wait, so a CUDA step's sampling queues behind its kernels (and could be captured). The
    reference draw is caught, so the check can fail."""
    logits = torch.randn(3 * NUM_VQ, NUM_CODES)
    history = torch.randint(0, NUM_CODES, (3 * NUM_VQ, rowwise.REPETITION_WINDOW))
    steps, min_steps = torch.tensor([0, 5, 30]), torch.tensor([1, 1, 40])
    sampling = Sampling(0.3, 0.7, 20, repetition_penalty=penalty)
    warpers = rowwise.warpers_for(sampling)
    gens: list[torch.Generator | None] = [torch.Generator().manual_seed(n) for n in range(3)]
    for generators in (None, gens):
        with HostReads() as mode:
            sample_codes(logits, history, steps, min_steps, sampling, warpers, NUM_VQ, generators)
        assert mode.seen == []
    with HostReads() as mode:
        sample_codes(
            logits, history, steps, min_steps, sampling, warpers, NUM_VQ, gens,
            rowwise.multinomial_draw,
        )  # fmt: skip
    assert "multinomial" in mode.seen


class ScriptedEnds(FastDecoder):
    """Ends chosen jobs by EOS at chosen steps (random weights hold EOS off), through the
    sampler's output, as a real EOS would arrive."""

    ends: dict[int, int]  # job key -> the step (1-based) whose code is EOS

    def sample_step(self, logits: torch.Tensor, *args: Any, **kwargs: Any) -> Any:
        codes, bad = super().sample_step(logits, *args, **kwargs)
        for n, slot in enumerate(self._slots_now()):
            job = self.active[slot]
            assert job is not None
            if self.ends.get(job.key) == len(job.tokens) + 1:
                codes[n, 0] = self.eos
        return codes, bad

    def _slots_now(self) -> list[int]:
        return [slot for slot, job in enumerate(self.active) if job is not None]


def _run(engine: Engine, late: bool, exact: bool) -> tuple[list[int], list[Job], int]:
    model = engine.model
    assert model is not None
    speaker = engine.sample_speaker(2)
    emb = model.embed(model.prompt_ids("你好", 5, speaker), speaker)
    caps = [12, 5, 20, 8, 10, 14]
    jobs = [Job(i, emb, cap, 1, seed=(100 + i) if exact else None) for i, cap in enumerate(caps)]
    decoder = ScriptedEnds(
        model, 3, emb.shape[1] + max(caps) + 1, static=True, exact=exact, late_flags=late
    )
    # EOS mid-run, beside cap ends (jobs 1, 3, and 2, the last to run, alone at the end).
    decoder.ends = {0: 4, 4: 2, 5: 9}
    assert decoder.ahead == late
    torch.manual_seed(5)
    order = [j.key for j in decoder.run(jobs, Sampling(0.3, 0.7, 20), lambda: False) if j]
    return order, jobs, decoder.max_len


@pytest.mark.parametrize("exact", [False, True], ids=["static", "static-exact"])
def test_late_flags_give_the_codes_of_a_step_that_waits(
    engine: Engine, exact: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rows ending by EOS and by their cap, next jobs taking their rows mid-run: with the next
    step queued before the flags are read, every job's codes, hidden states, length and end
    equal those of the decoder that reads first (the wasted step of an ended row changes
    nothing), and the late read is the one used."""
    # Spans of a few positions: a step that attends over too few (the host's positions left
    # behind) changes the codes, where the usual 256 would cover the whole test.
    monkeypatch.setattr(slot_steps, "SPAN_BUCKET", 4)
    late_reads: list[int] = []
    real = host_reads.step_flags_later

    def counted(flags: torch.Tensor):  # type: ignore[no-untyped-def]
        late_reads.append(int(flags.shape[1]))
        return real(flags)

    monkeypatch.setattr(host_reads, "step_flags_later", counted)
    waiting = _run(engine, late=False, exact=exact)
    assert late_reads == []
    ahead = _run(engine, late=True, exact=exact)
    assert late_reads, "the late read was not used"
    assert ahead[0] == waiting[0]
    for a, b in zip(ahead[1], waiting[1], strict=True):
        assert len(a.tokens) == len(b.tokens) and a.ended_by_eos == b.ended_by_eos
        assert torch.equal(torch.stack(a.tokens), torch.stack(b.tokens))
        assert torch.equal(torch.stack(a.hiddens), torch.stack(b.hiddens))
    lengths = {j.key: len(j.tokens) for j in ahead[1]}
    # The scripted EOS steps keep no state; a random weight may end another row by itself.
    assert lengths[0] == 3 and lengths[4] == 1 and lengths[1] <= 5


def test_late_flags_stay_off_where_rows_are_picked_on_the_host(engine: Engine) -> None:
    """The CPU's chunked exact step and the plain step choose their rows from the flags, so
    they read first whatever is asked; a static step on the CPU reads first by default."""
    model = engine.model
    assert model is not None
    assert not FastDecoder(model, 2, 64, exact=True, late_flags=True).ahead
    assert not FastDecoder(model, 2, 64, late_flags=True).ahead
    assert not FastDecoder(model, 2, 64, static=True).ahead
    assert FastDecoder(model, 2, 64, static=True, late_flags=True).ahead


def _fused_run(
    engine: Engine, fused: int, exact: bool, slots: int, monkeypatch: pytest.MonkeyPatch
) -> tuple[list[int], list[Job], list[int]]:
    """Six jobs, three of which may end by EOS in their last 5 steps; seeded when `exact`.
    Returns the order they ended in, the jobs, and the size of every fused unit that ran."""
    model = engine.model
    assert model is not None
    sizes: list[int] = []
    real = fused_module.FusedSteps.run

    def counted(self, size, *args, **kwargs):  # type: ignore[no-untyped-def]
        sizes.append(size)
        return real(self, size, *args, **kwargs)

    monkeypatch.setattr(fused_module.FusedSteps, "run", counted)

    def eos_likely(logits: torch.Tensor, *args: Any, **kwargs: Any) -> Any:
        # Random weights almost never draw EOS; this makes it likely as soon as min_steps
        # allows, in both paths alike, so rows end by EOS where a unit must not run past.
        logits = logits.clone()
        logits[:, -1] += 4.0
        return sample_codes(logits, *args, **kwargs)

    monkeypatch.setattr(rowwise, "sample_codes", eos_likely)
    monkeypatch.setattr(fused_module, "sample_codes", eos_likely)
    speaker = engine.sample_speaker(4)
    emb = model.embed(model.prompt_ids("你好", 5, speaker), speaker)
    caps = [30, 9, 40, 14, 22, 35]
    seeds = [(200 + i) if exact else None for i in range(len(caps))]
    # Odd jobs hold EOS off to their cap; even ones may draw it in their last 5 steps.
    mins = [cap if i % 2 else cap - 5 for i, cap in enumerate(caps)]
    jobs = [Job(i, emb, cap, mins[i], seed=seeds[i]) for i, cap in enumerate(caps)]
    decoder = FastDecoder(
        model,
        slots,
        emb.shape[1] + max(caps) + 1,
        static=True,
        exact=exact,
        late_flags=True,
        fused_steps=fused,
    )
    torch.manual_seed(9)
    order = [j.key for j in decoder.run(jobs, Sampling(0.7, 0.7, 20), lambda: False) if j]
    return order, jobs, sizes


@pytest.mark.parametrize(
    ("exact", "slots"), [(True, 3), (False, 2)], ids=["seeded-exact", "global-rng"]
)
def test_fused_units_give_the_codes_of_one_step_at_a_time(
    engine: Engine, exact: bool, slots: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Units of up to 8 whole steps (heads, sampling, GPT step) while no row can end or be
    joined, single steps near the ends, rows coming and going, spans of 8 positions (a unit
    never crosses one): every job's codes, hidden states and end equal the one-step loop's.
    Seeded rows sample from their slots' generators, reseeded per job; rows on torch's global
    RNG go as units only while every slot runs."""
    monkeypatch.setattr(slot_steps, "SPAN_BUCKET", 8)
    one, one_jobs, none = _fused_run(engine, 0, exact, slots, monkeypatch)
    assert none == []
    order, jobs, sizes = _fused_run(engine, 8, exact, slots, monkeypatch)
    assert order == one and max(sizes) > 1 and 1 in sizes
    assert any(j.ended_by_eos for j in jobs) and not all(j.ended_by_eos for j in jobs)
    for a, b in zip(jobs, one_jobs, strict=True):
        assert len(a.tokens) == len(b.tokens) and a.ended_by_eos == b.ended_by_eos
        assert torch.equal(torch.stack(a.tokens), torch.stack(b.tokens))
        assert torch.equal(torch.stack(a.hiddens), torch.stack(b.hiddens))


def test_a_unit_holds_no_step_after_which_a_row_could_end() -> None:
    """(steps made, min_steps, cap): EOS is drawn from min_steps on and a cap ends its row,
    and either may end a row only at a unit's last step."""
    assert fused_module.unit_size([(0, 100, 100)], 8) == 8
    assert fused_module.unit_size([(0, 100, 100), (95, 100, 100)], 8) == 4  # cap in 5
    assert fused_module.unit_size([(10, 12, 100)], 8) == 2  # EOS possible from step 12 on
    assert fused_module.unit_size([(12, 12, 100)], 8) == 1
    assert fused_module.unit_size([(0, 100, 100)], 3) == 2  # the caller's bound
