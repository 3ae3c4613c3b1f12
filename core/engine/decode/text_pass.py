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
    model: "ChatModel",
    prompts: list[torch.Tensor],
    params: Any,
    cancel: CancelToken,
    on_step: Callable[[], None] | None = None,
) -> list[torch.Tensor]:
    """refine_ids with stock's RefineTextParams (ChatModel.refine's `text_pass`)."""
    sampling = TextSampling(
        params.temperature, params.top_P, params.top_K, params.max_new_token, params.min_new_token
    )
    return refine_ids(model, prompts, sampling, cancel, on_step)


def refine_ids(
    model: "ChatModel",
    prompts: Sequence[torch.Tensor],
    sampling: TextSampling,
    cancel: CancelToken,
    on_step: Callable[[], None] | None = None,
) -> list[torch.Tensor]:
    """The refined text ids of each prompt (its embedding [1, n, hidden], ChatModel.
    refine_prompt's), EOS not included: what stock's `_refine_text(...).ids` holds."""
    batch = len(prompts)
    lengths = [int(p.shape[1]) for p in prompts]
    rows = GptRows(model, batch, max(lengths) + sampling.max_new_token, True, None)
    emb_text, head = model.text_embedding(), model.text_head().float().to(rows.out_device)
    eos = model.text_eos
    hidden = torch.zeros(batch, rows.hidden_size, device=rows.out_device)
    with torch.inference_mode():
        if cancel.cancelled:  # before any token: every text empty, as stock's would be
            return [torch.zeros(0, dtype=torch.long) for _ in prompts]
        prefill(rows, prompts, hidden)
        warpers = [
            TopPLogitsWarper(sampling.top_p, min_tokens_to_keep=3),
            TopKLogitsWarper(sampling.top_k, min_tokens_to_keep=3),
        ]
        temperature = torch.full((batch, 1), sampling.temperature, device=rows.out_device)
        placeholder = torch.full((head.shape[0],), 1.0 / head.shape[0], device=rows.out_device)
        tokens = torch.zeros(batch, sampling.max_new_token, dtype=torch.long)
        made = [0] * batch
        running = list(range(batch))
        for i in range(sampling.max_new_token):
            logits = F.linear(hidden[running], head)
            if not bool(torch.isfinite(logits).all()):  # stock's multinomial would raise
                raise NonFiniteError(non_finite_sentence(rows.dtype))
            logits /= temperature[: len(running)]
            for warp in warpers:  # stock passes the generated ids; these warpers ignore them
                logits = warp(None, logits)
            if i < sampling.min_new_token:
                logits[:, eos] = -torch.inf
            scores = placeholder.repeat(batch, 1)
            scores[running] = F.softmax(logits, dim=-1)
            drawn = torch.multinomial(scores, num_samples=1)[:, 0].cpu()
            still = []
            for slot in running:
                token = int(drawn[slot])
                if token == eos:
                    continue
                tokens[slot, made[slot]] = token
                made[slot] += 1
                still.append(slot)
            running = still
            if on_step is not None:
                on_step()
            if not running or cancel.cancelled or i + 1 == sampling.max_new_token:
                break
            step_rows(rows, emb_text, tokens, made, running, lengths, hidden)
    return [tokens[slot, : made[slot]].clone() for slot in range(batch)]


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
