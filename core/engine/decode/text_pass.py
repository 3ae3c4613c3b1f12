"""ChatTTS's refine-text pass on the studio's decode pieces instead of ChatTTS's loop.

Each text is a row of GptRows' cache; its steps run where the decoder's run (the exported graph
takes an embedding, so the text embedding goes in and the text head reads `hidden`). Sampling is
stock's step for step, one `torch.multinomial` over every row from the global generator, so with
torch's step a lone text's tokens are stock's. As in stock, a text's refinement depends on the
texts beside it."""

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import torch
import torch.nn.functional as F

from chattts_studio.core import model_imports
from chattts_studio.core.engine.cancel import CancelToken
from chattts_studio.core.engine.decode.gpt_rows import GptRows
from chattts_studio.core.engine.decode.job import NonFiniteError, non_finite_sentence

model_imports.ensure()  # before transformers and ChatTTS: see core/model_imports.py
from transformers.generation import TopKLogitsWarper, TopPLogitsWarper  # noqa: E402

if TYPE_CHECKING:
    from chattts_studio.core.engine.chattts.chat import ChatModel


@dataclass(frozen=True)
class TextSampling:
    """The stock refine's sampling (ChatTTS's RefineTextParams as ChatModel.refine sets them)."""

    temperature: float
    top_p: float
    top_k: int
    max_new_token: int
    min_new_token: int


def refine_with(
    model: "ChatModel", prompts: list[torch.Tensor], params: Any, cancel: CancelToken
) -> "RefineRun":
    """A RefineRun with stock's RefineTextParams (ChatModel.refine_pass's `text_pass`)."""
    sampling = TextSampling(
        params.temperature, params.top_P, params.top_K, params.max_new_token, params.min_new_token
    )
    return RefineRun(model, prompts, sampling, cancel)


def refine_ids(
    model: "ChatModel",
    prompts: Sequence[torch.Tensor],
    sampling: TextSampling,
    cancel: CancelToken,
    on_step: Callable[[], None] | None = None,
) -> list[torch.Tensor]:
    """The refined text ids of each prompt (its embedding [1, n, hidden], ChatModel.
    refine_prompt's), EOS not included: what stock's `_refine_text(...).ids` holds."""
    run = RefineRun(model, prompts, sampling, cancel)
    while True:
        done = run.step()
        if on_step is not None and run.made_steps:
            on_step()
        if done:
            return run.ids


class RefineRun:
    """One refine pass a step at a time, so a decoder's steps can run between its steps (the
    first segment decodes while the next ones are refined). The first step prefills."""

    def __init__(
        self,
        model: "ChatModel",
        prompts: Sequence[torch.Tensor],
        sampling: TextSampling,
        cancel: CancelToken,
    ) -> None:
        self.model, self.prompts, self.sampling, self.cancel = model, prompts, sampling, cancel
        self.batch = len(prompts)
        self.lengths = [int(p.shape[1]) for p in prompts]
        self.tokens = torch.zeros(self.batch, sampling.max_new_token, dtype=torch.long)
        self.made = [0] * self.batch
        self.running = list(range(self.batch))
        self.made_steps = 0  # sampling steps taken
        self.done = False
        self._rows: GptRows | None = None

    @property
    def ids(self) -> list[torch.Tensor]:
        return [self.tokens[slot, : self.made[slot]].clone() for slot in range(self.batch)]

    def step(self) -> bool:
        """The next step (the first prefills and samples once); True once the pass is over
        (every text ended, the limit reached, or cancelled: what was made is kept)."""
        if self.done:
            return True
        with torch.inference_mode():
            if self._rows is None:
                if self.cancel.cancelled:  # before any token: every text empty, as stock's
                    self.done = True
                    return True
                self._start()
            else:
                self._step_rows()
            self._sample()
        self.made_steps += 1
        last = self.made_steps == self.sampling.max_new_token
        self.done = not self.running or self.cancel.cancelled or last
        return self.done

    @property
    def rows(self) -> GptRows:
        assert self._rows is not None
        return self._rows

    def _start(self) -> None:
        model, sampling = self.model, self.sampling
        rows = GptRows(model, self.batch, max(self.lengths) + sampling.max_new_token, True, None)
        self._rows = rows
        self.emb_text = model.text_embedding()
        self.head = model.text_head().float().to(rows.out_device)
        self.eos = model.text_eos
        self.hidden = torch.zeros(self.batch, rows.hidden_size, device=rows.out_device)
        prefill(rows, self.prompts, self.hidden)
        self.warpers = [
            TopPLogitsWarper(sampling.top_p, min_tokens_to_keep=3),
            TopKLogitsWarper(sampling.top_k, min_tokens_to_keep=3),
        ]
        self.temperature = torch.full((self.batch, 1), sampling.temperature, device=rows.out_device)
        width = self.head.shape[0]
        self.placeholder = torch.full((width,), 1.0 / width, device=rows.out_device)

    def _step_rows(self) -> None:
        rows, emb_text, tokens, made = self.rows, self.emb_text, self.tokens, self.made
        step_rows(rows, emb_text, tokens, made, self.running, self.lengths, self.hidden)

    def _sample(self) -> None:
        """Stock's sampling step: one multinomial over every row from the global generator."""
        running = self.running
        logits = F.linear(self.hidden[running], self.head)
        if not bool(torch.isfinite(logits).all()):  # stock's multinomial would raise
            raise NonFiniteError(non_finite_sentence(self.rows.dtype))
        logits /= self.temperature[: len(running)]
        for warp in self.warpers:  # stock passes the generated ids; these warpers ignore them
            logits = warp(None, logits)
        if self.made_steps < self.sampling.min_new_token:
            logits[:, self.eos] = -torch.inf
        scores = self.placeholder.repeat(self.batch, 1)
        scores[running] = F.softmax(logits, dim=-1)
        drawn = torch.multinomial(scores, num_samples=1)[:, 0].cpu()
        still = []
        for slot in running:
            token = int(drawn[slot])
            if token == self.eos:
                continue
            self.tokens[slot, self.made[slot]] = token
            self.made[slot] += 1
            still.append(slot)
        self.running = still


def prefill(rows: GptRows, prompts: Sequence[torch.Tensor], hidden: torch.Tensor) -> None:
    """Every prompt [1, n, hidden] into its row's cache (slot i for prompt i) in one pass,
    right-padded to the longest; each row's last hidden state into `hidden`. One pass instead
    of one a text: the products have as many rows as all prompts' positions together, which a
    CPU's matrix kernels run at a better rate (a lone prompt's bits are the one-row pass's)."""
    lengths = [int(p.shape[1]) for p in prompts]
    longest = max(lengths)
    x = torch.zeros(len(prompts), longest, rows.hidden_size, device=rows.device, dtype=rows.dtype)
    for slot, prompt in enumerate(prompts):
        x[slot, : lengths[slot]] = prompt[0].to(rows.device, rows.dtype)
    positions = torch.arange(longest, device=rows.device).expand(len(prompts), longest)
    slots = torch.arange(len(prompts), device=rows.device)
    out = rows._layers(x, slots, positions, longest)
    ends = torch.tensor(lengths, device=rows.device) - 1
    hidden[:] = out[slots, ends].float().to(hidden.device)


def step_rows(
    rows: GptRows,
    emb_text: torch.nn.Module,
    tokens: torch.Tensor,
    made: list[int],
    running: list[int],
    lengths: list[int],
    hidden: torch.Tensor,
) -> None:
    """One position for the `running` slots (ascending): each row's last token in, at the
    position after it; their hidden states into `hidden`. On ONNX Runtime the graph runs over
    the slots' contiguous range (a finished row in it computes at a stale position nobody
    reads); in torch one product for the running rows, with exact attention (a lone row's bits
    are stock's)."""
    slots = torch.tensor(running)
    last = tokens[slots, torch.tensor([made[s] - 1 for s in running])]
    x = emb_text(last.to(rows.device)).float()  # [running, hidden]
    pos = torch.tensor([lengths[s] + made[s] - 1 for s in running], device=rows.device)
    runner = rows.step_runner
    if runner is not None:
        start, stop = running[0], running[-1] + 1
        embeds = torch.zeros(stop - start, rows.hidden_size)
        at = torch.zeros(stop - start, dtype=torch.long)
        embeds[slots - start], at[slots - start] = x, pos
        layers = range(len(rows.layers))
        out, _ = runner.run(
            embeds,
            at,
            [rows.k_cache[li, start:stop] for li in layers],
            [rows.v_cache[li, start:stop] for li in layers],
        )
        hidden[slots] = out[slots - start].to(hidden.device)
        return
    side_by_side = running[-1] - running[0] + 1 == len(running)
    cached = slice(running[0], running[-1] + 1) if side_by_side else None
    out = rows._layers(
        x.to(rows.dtype).unsqueeze(1),
        slots.to(rows.device),
        pos.view(-1, 1),
        int(pos.max()) + 1,
        cached,
    )
    hidden[slots] = out[:, 0].float().to(hidden.device)
