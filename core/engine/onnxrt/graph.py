"""The decode step as one torch module: what is exported to ONNX (export.py).

It is the computation of GptRows' one-position step (core/engine/decode/gpt_rows.py): the four
code embeddings summed, the 20 layers, the final norm and the four code heads; but written as
a pure function of its inputs, since an ONNX graph cannot write into a cache it is given:

- in: codes [B, num_vq], positions [B], and per layer the rows' cached keys and values
  [B, kv_heads, M, head_dim] (M: the cache's length; only positions < a row's own are read);
- out: hidden [B, hidden] (for the vocoder), logits [B, num_vq * num_codes] (ChatTTS's
  b (n c) order), and the step's new keys and values [B, layers, kv_heads, head_dim], which
  the decoder writes into its cache at each row's position.

The cache arrives as it lies in the decoder's memory (ONNX Runtime reads it in place), and the
new key joins attention as one more score beside the cached ones, so nothing is copied.
"""

import torch
from torch import nn
from transformers.models.llama.modeling_llama import apply_rotary_pos_emb


class DecodeStep(nn.Module):
    def __init__(self, gpt: nn.Module, embeddings: list[nn.Embedding], heads: torch.Tensor) -> None:
        """`gpt`: ChatTTS's LlamaModel; `embeddings`: its four code embeddings; `heads`: the
        code heads' materialised weights [num_vq * num_codes, hidden] (ChatModel.code_heads)."""
        super().__init__()
        self.layers = gpt.layers
        self.norm = gpt.norm
        self.rotary = gpt.rotary_emb
        self.embeddings = nn.ModuleList(embeddings)
        self.heads = nn.Parameter(heads.detach().float(), requires_grad=False)
        cfg = gpt.config
        self.head_dim = getattr(cfg, "head_dim", None) or cfg.hidden_size // cfg.num_attention_heads
        if cfg.num_key_value_heads != cfg.num_attention_heads:
            raise ValueError("the exported step has no grouped-query attention (ChatTTS has none)")

    def forward(
        self,
        codes: torch.Tensor,
        pos: torch.Tensor,
        past_k: list[torch.Tensor],
        past_v: list[torch.Tensor],
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        embs = [table(codes[:, i]) for i, table in enumerate(self.embeddings)]
        x = torch.stack(embs, 2).sum(2).unsqueeze(1)  # as ChatTTS sums them: [B, 1, hidden]
        batch = x.shape[0]
        cos, sin = self.rotary(x, pos.view(-1, 1))
        span = past_k[0].shape[2]
        keys = torch.arange(span, device=pos.device).view(1, -1)
        # Cached positions before the row's own; its own key is the extra score below.
        bias = torch.where(keys < pos.view(-1, 1), 0.0, float("-inf")).view(batch, 1, 1, span)
        new_k, new_v = [], []
        for li, layer in enumerate(self.layers):
            attn = layer.self_attn
            h = layer.input_layernorm(x)
            q = attn.q_proj(h).view(batch, 1, -1, self.head_dim).transpose(1, 2)
            k = attn.k_proj(h).view(batch, 1, -1, self.head_dim).transpose(1, 2)
            v = attn.v_proj(h).view(batch, 1, -1, self.head_dim).transpose(1, 2)
            q, k = apply_rotary_pos_emb(q, k, cos, sin)
            cached = torch.matmul(q, past_k[li].transpose(2, 3)) * attn.scaling + bias
            own = (q * k).sum(-1, keepdim=True) * attn.scaling
            weights = torch.softmax(torch.cat([cached, own], -1), -1)
            out = torch.matmul(weights[..., :span], past_v[li]) + weights[..., span:] * v
            x = x + attn.o_proj(out.transpose(1, 2).reshape(batch, 1, -1))
            x = x + layer.mlp(layer.post_attention_layernorm(x))
            new_k.append(k[:, :, 0])
            new_v.append(v[:, :, 0])
        hidden = self.norm(x)[:, 0].float()
        logits = nn.functional.linear(hidden, self.heads)
        return hidden, logits, torch.stack(new_k, 1), torch.stack(new_v, 1)
