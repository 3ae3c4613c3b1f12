"""Per-row pieces of the decode step: ChatTTS's sampling with per-row random streams, and an
attention whose bits for a row do not depend on the other rows, so a row's codes are those it
draws alone. See docs/architecture.md.
"""

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import torch
import torch.nn.functional as F

from chattts_studio.core import model_imports
from chattts_studio.core.engine.request import Sampling
from chattts_studio.core.errors import BadSettingError

model_imports.ensure()  # before transformers and ChatTTS: see core/model_imports.py
from transformers.generation import TopKLogitsWarper, TopPLogitsWarper  # noqa: E402

REPETITION_WINDOW = 16  # ChatTTS's CustomRepetitionPenaltyLogitsProcessorRepeat past_window
# Rows in every product of an exact CPU step (FastDecoder's `chunk_rows`). Fixed, because a
# BLAS picks its kernel by the row count and a row's last bits change with it (measured on the
# 2-core CPU, torch 2.14: 1, 2 and 3 rows each give other bits than 4..16, which agree; at a
# fixed count a row's bits depend neither on its place nor on its neighbours). One row: a lone
# request then costs what `synth` does. A step at the real dimensions (1 thread, loaded
# machine, best of 5): 1 row 118 ms, 4 rows in one chunk of 4: 166, 16 rows in one chunk of 16:
# 290; 16 rows in chunks of 1: 790, of 4: 472 (chunks of 2 cost what 4 do).
EXACT_CHUNK_ROWS = 1
Warper = Callable[..., torch.Tensor]
# scores [rows * num_vq, codes], num_vq, each row's generator (or None) -> codes [rows * num_vq]
Draw = Callable[[torch.Tensor, int, Sequence[torch.Generator | None] | None], torch.Tensor]


def check_sampling(sampling: Sampling) -> None:
    """BadSettingError (one sentence) for settings sampling cannot run with."""
    if not (
        0 < sampling.temperature < math.inf
        and 0 < sampling.top_p <= 1
        and isinstance(sampling.top_k, int)
        and sampling.top_k >= 1
        and 0 < sampling.repetition_penalty < math.inf
    ):
        raise BadSettingError(
            "Sampling needs a temperature above 0, a top-P above 0 and at most 1, a top-K of "
            f"at least 1 and a repetition penalty above 0 (got {sampling})."
        )


def warpers_for(sampling: Sampling) -> list[Warper]:
    return [
        TopPLogitsWarper(sampling.top_p, min_tokens_to_keep=3),
        TopKLogitsWarper(sampling.top_k, min_tokens_to_keep=3),
    ]


def sample_codes(
    logits: torch.Tensor,
    history: torch.Tensor,
    steps: torch.Tensor,
    min_steps: torch.Tensor,
    sampling: Sampling,
    warpers: list[Warper],
    num_vq: int,
    generators: list[torch.Generator | None] | None = None,
    draw: Draw | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """logits [B * num_vq, codes] (EOS last) -> codes [B, num_vq] and a per-row flag [B] for
    logits that were not finite. Such rows sample from uniform logits instead (a draw must
    never see NaN); the caller fails the job once it reads the flag. `generators`: each row's
    own stream, or None for torch's global RNG. `draw`: exponential_draw (the default: no
    read of the device, so the whole step can run ahead of the host) or multinomial_draw.
    Nothing here reads the device: a CUDA step's sampling queues behind its GPT kernels."""
    draw = draw or exponential_draw
    num_codes = logits.shape[1]
    eos = num_codes - 1
    bad = ~torch.isfinite(logits).view(-1, num_vq * num_codes).all(1)
    logits = torch.where(bad.repeat_interleave(num_vq).view(-1, 1), 0.0, logits)
    logits = logits / sampling.temperature
    if sampling.repetition_penalty != 1.0:
        # Counts of each code over the row's last 16 codes (fewer while it is young).
        # The window fills from the right; a young row has only its last `filled` codes.
        filled = torch.clamp(steps, max=REPETITION_WINDOW).repeat_interleave(num_vq)
        window = torch.arange(REPETITION_WINDOW, device=logits.device).view(1, -1)
        valid = window >= REPETITION_WINDOW - filled.view(-1, 1)
        freq = torch.zeros_like(logits).scatter_add_(1, history, valid.to(logits.dtype))
        alpha = torch.pow(sampling.repetition_penalty, freq)
        logits = torch.where(logits < 0, logits * alpha, logits / alpha)
    for warp in warpers:
        logits = warp(None, logits)
    hold = (steps < min_steps).repeat_interleave(num_vq)
    # torch.where, not boolean-mask indexing: a mask index asks the device for its count.
    logits[:, eos] = torch.where(hold, -torch.inf, logits[:, eos])
    scores = F.softmax(logits, dim=-1)
    return draw(scores, num_vq, generators).view(-1, num_vq), bad


def exponential_draw(
    scores: torch.Tensor, num_vq: int, generators: Sequence[torch.Generator | None] | None
) -> torch.Tensor:
    """One code per row of `scores` [rows * num_vq, codes] (probabilities): the codes
    torch.multinomial(scores, 1) draws from the same random state, bit for bit, without asking
    the device anything. multinomial's one-sample path is argmax(p / q) with q ~ Exp(1)
    drawn by `exponential_` over a tensor shaped like p (ATen's Distributions.cpp, on every
    device; vLLM samples this way too); this is that computation without multinomial's
    validity checks, which read the device twice a call (a synchronisation each on CUDA, per
    row with per-row generators) and cannot be captured in a CUDA graph. The checks are not
    needed here: sample_codes has already made every row finite and its softmax sums to 1.
    `generators`: each row's own stream (num_vq lines of `scores` each), or None for torch's
    global RNG, as multinomial over all the lines at once would use it."""
    noise = torch.empty_like(scores)
    if not generators or all(g is None for g in generators):
        noise.exponential_(1)
    else:
        # One call per row from its own stream: a row's codes depend only on its own scores
        # and generator, never on how many rows sit beside it.
        for n, generator in enumerate(generators):
            noise[n * num_vq : (n + 1) * num_vq].exponential_(1, generator=generator)
    return torch.argmax(scores / noise, dim=-1)


def multinomial_draw(
    scores: torch.Tensor, num_vq: int, generators: Sequence[torch.Generator | None] | None
) -> torch.Tensor:
    """The reference `exponential_draw` must equal: torch.multinomial as ChatTTS calls it (the
    GPU run's lever table measures the sampler with it, and the tests compare)."""
    if not generators or all(g is None for g in generators):
        return torch.multinomial(scores, num_samples=1).view(-1)
    codes = [
        torch.multinomial(scores[n * num_vq : (n + 1) * num_vq], num_samples=1, generator=g)
        for n, g in enumerate(generators)
    ]
    return torch.cat(codes).view(-1)


@dataclass(frozen=True)
class RowGroup:
    """The rows of a step that share one Sampling. `rows`: their places among the step's rows,
    `logit_rows`: their rows of the step's logits (num_vq each); None when the group is every
    row (nothing to gather)."""

    sampling: Sampling
    warpers: list[Warper]
    members: list[int]
    rows: torch.Tensor | None = None
    logit_rows: torch.Tensor | None = None


@dataclass
class RowSampling:
    """The step's rows grouped by their Sampling, made again only when the rows change, with
    warpers kept per Sampling."""

    num_vq: int
    device: torch.device
    groups: list[RowGroup] = field(default_factory=list)
    draw: Draw | None = None  # sample_codes's default (exponential_draw) when None
    kept: dict[Sampling, list[Warper]] = field(default_factory=dict)  # warpers per Sampling

    def regroup(self, samplings: Sequence[Sampling]) -> None:
        """`samplings`: each running row's, in the step's row order."""
        members: dict[Sampling, list[int]] = {}
        for n, sampling in enumerate(samplings):
            members.setdefault(sampling, []).append(n)
        # Only the samplings in use: a long-running decode sees many over time.
        self.kept = {s: self.kept.get(s) or warpers_for(s) for s in members}
        if len(members) == 1:
            sampling, rows = next(iter(members.items()))
            self.groups = [RowGroup(sampling, self.kept[sampling], rows)]
            return
        vq = torch.arange(self.num_vq)
        self.groups = []
        for sampling, rows in members.items():
            index = torch.tensor(rows)
            logit_rows = (index.view(-1, 1) * self.num_vq + vq).view(-1)
            self.groups.append(
                RowGroup(
                    sampling,
                    self.kept[sampling],
                    rows,
                    index.to(self.device),
                    logit_rows.to(self.device),
                )
            )

    def sample(
        self,
        logits: torch.Tensor,
        history: torch.Tensor,
        steps: torch.Tensor,
        min_steps: torch.Tensor,
        generators: list[torch.Generator | None] | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """sample_codes over rows that may differ in Sampling: each group on its own, its
        codes and flags written back into the step's row order."""
        if len(self.groups) == 1:  # one Sampling: no gathering at all
            group = self.groups[0]
            return sample_codes(
                logits,
                history,
                steps,
                min_steps,
                group.sampling,
                group.warpers,
                self.num_vq,
                generators,
                self.draw,
            )
        count = steps.shape[0]
        codes = torch.empty(count, self.num_vq, dtype=torch.long, device=logits.device)
        bad = torch.empty(count, dtype=torch.bool, device=logits.device)
        for group in self.groups:
            assert group.rows is not None and group.logit_rows is not None
            group_codes, group_bad = sample_codes(
                logits[group.logit_rows],
                history[group.logit_rows],
                steps[group.rows],
                min_steps[group.rows],
                group.sampling,
                group.warpers,
                self.num_vq,
                [generators[n] for n in group.members] if generators else None,
                self.draw,
            )
            codes.index_copy_(0, group.rows, group_codes)
            bad.index_copy_(0, group.rows, group_bad)
        return codes, bad


def exact_attention(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask: torch.Tensor, scale: float, heads: int
) -> torch.Tensor:
    """One-query attention whose result for a row is the same bits whatever the other rows
    hold and however long the span is. Measured on this CPU (2 cores, torch 2.14): SDPA's
    kernel gives a row different last bits when its neighbours or the span change (up to
    2e-6 at the real dimensions, and a sampled code can flip on such a difference); plain
    matmuls do not (batched products run per row; masked keys add exact zeros)."""
    if k.shape[1] != heads:  # grouped-query attention: each key head serves several queries
        k = k.repeat_interleave(heads // k.shape[1], 1)
        v = v.repeat_interleave(heads // v.shape[1], 1)
    scores = torch.matmul(q, k.transpose(-1, -2)) * scale
    scores = scores.masked_fill(~mask, -torch.inf)
    return torch.matmul(torch.softmax(scores, -1), v)
