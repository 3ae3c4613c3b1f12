"""The decode step as one torch module: what is exported to ONNX (export.py).

GptRows' one-position step from the input embedding on: the 20 layers, the final norm, the four
code heads. In: embeds [B, hidden] (the caller embeds, so one graph serves codes and refine text),
positions [B], each layer's cache [B, kv_heads, M, head_dim]; out: hidden, logits and the caches
with each row's new key and value at its position. Attention is one op, `cached_attention`,
exported as ONNX Runtime's GroupQueryAttention (reads each row only up to its position, writes in
place)."""

from typing import Any

import torch
from torch import nn

from chattts_studio.core import model_imports

model_imports.ensure()  # before transformers and ChatTTS: see core/model_imports.py
from transformers.models.llama.modeling_llama import apply_rotary_pos_emb  # noqa: E402


@torch.library.custom_op("chattts_studio::cached_attention", mutates_args=())
def cached_attention(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    past_k: torch.Tensor,
    past_v: torch.Tensor,
    pos: torch.Tensor,
    scale: float,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """q, k, v [B, 1, heads * head_dim] (q and k rotated), past_k/past_v [B, heads, M, head_dim],
    pos [B]: each row's k and v written at its position (into copies here), then attention of
    q over the row's positions up to its own -> (out [B, 1, heads * head_dim], keys, values)."""
    batch, _, width = q.shape
    heads, length, head_dim = past_k.shape[1], past_k.shape[2], past_k.shape[3]

    def split(t: torch.Tensor) -> torch.Tensor:
        return t.view(batch, 1, heads, head_dim).transpose(1, 2)

    rows = torch.arange(batch, device=q.device)
    at = pos.long()
    keys, values = past_k.clone(), past_v.clone()
    keys[rows, :, at] = split(k)[:, :, 0]
    values[rows, :, at] = split(v)[:, :, 0]
    seen = torch.arange(length, device=q.device).view(1, -1) <= at.view(-1, 1)
    bias = torch.where(seen, 0.0, float("-inf")).view(batch, 1, 1, length)
    weights = torch.softmax(split(q) @ keys.transpose(2, 3) * scale + bias, -1)
    out = (weights @ values).transpose(1, 2).reshape(batch, 1, width)
    return out, keys, values


@cached_attention.register_fake
def _cached_attention_shapes(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    past_k: torch.Tensor,
    past_v: torch.Tensor,
    pos: torch.Tensor,
    scale: float,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    return torch.empty_like(q), torch.empty_like(past_k), torch.empty_like(past_v)


class DecodeStep(nn.Module):
    def __init__(self, gpt: Any, heads: torch.Tensor) -> None:
        """`gpt`: ChatTTS's LlamaModel; `heads`: the code heads' materialised weights
        [num_vq * num_codes, hidden] (ChatModel.code_heads)."""
        super().__init__()
        self.layers: Any = gpt.layers
        self.norm: Any = gpt.norm
        self.rotary: Any = gpt.rotary_emb
        self.heads = nn.Parameter(heads.detach().float(), requires_grad=False)
        cfg = gpt.config
        self.head_dim = int(
            getattr(cfg, "head_dim", None) or cfg.hidden_size // cfg.num_attention_heads
        )
        if cfg.num_key_value_heads != cfg.num_attention_heads:
            raise ValueError("the exported step has no grouped-query attention (ChatTTS has none)")

    def forward(
        self,
        embeds: torch.Tensor,
        pos: torch.Tensor,
        past_k: list[torch.Tensor],
        past_v: list[torch.Tensor],
    ) -> tuple[torch.Tensor, torch.Tensor, list[torch.Tensor], list[torch.Tensor]]:
        x = embeds.unsqueeze(1)  # [B, 1, hidden]
        batch = x.shape[0]
        cos, sin = self.rotary(x, pos.view(-1, 1))
        keys, values = [], []
        for li, layer in enumerate(self.layers):
            attn = layer.self_attn
            h = layer.input_layernorm(x)
            q = attn.q_proj(h).view(batch, 1, -1, self.head_dim).transpose(1, 2)
            k = attn.k_proj(h).view(batch, 1, -1, self.head_dim).transpose(1, 2)
            q, k = apply_rotary_pos_emb(q, k, cos, sin)
            out, layer_k, layer_v = cached_attention(
                q.transpose(1, 2).reshape(batch, 1, -1),
                k.transpose(1, 2).reshape(batch, 1, -1),
                attn.v_proj(h),
                past_k[li],
                past_v[li],
                pos,
                attn.scaling,
            )
            x = x + attn.o_proj(out)
            x = x + layer.mlp(layer.post_attention_layernorm(x))
            keys.append(layer_k)
            values.append(layer_v)
        hidden = self.norm(x)[:, 0].float()
        logits = nn.functional.linear(hidden, self.heads)
        return hidden, logits, keys, values
