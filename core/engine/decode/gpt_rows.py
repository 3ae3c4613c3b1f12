"""The GPT over a KV cache of rows (slots): ChatTTS's embeddings, layers and code heads, one
position at a time for all rows, some rows, or chunks of rows.

Exact steps compute only the chunks of `chunk` slots that hold a running row: every product has
the same row count, so a row's bits are its solo bits (EXACT_CHUNK_ROWS). Shared rows
(Job.shared) run as one product of their own after the exact chunks. Rows never move. With ONNX
Runtime (`model.decode_step`) a step runs the exported graph over a range of slots."""

from dataclasses import dataclass

import torch
import torch.nn.functional as F

from chattts_studio.core import model_imports
from chattts_studio.core.engine.chattts.chat import ChatModel
from chattts_studio.core.engine.decode.rowwise import EXACT_CHUNK_ROWS, exact_attention

model_imports.ensure()  # before transformers and ChatTTS: see core/model_imports.py
from transformers.models.llama.modeling_llama import apply_rotary_pos_emb  # noqa: E402


@dataclass
class Chunk:
    """A chunk's step in progress: its first slot, slot ids, positions [chunk, 1], KV span,
    rotary cos, sin and attention mask, and its hidden states [chunk, 1, hidden]."""

    start: int
    rows: torch.Tensor
    pos: torch.Tensor
    span: int
    rotary: tuple[torch.Tensor, torch.Tensor, torch.Tensor]
    x: torch.Tensor


class GptRows:
    """The model's side of FastDecoder: the weights it reads and the cache it writes."""

    def __init__(
        self, model: ChatModel, slots: int, max_len: int, exact: bool, chunk_rows: int | None
    ) -> None:
        """`chunk_rows`: None for steps over all slots (or the given rows); else the rows
        of a chunk (0: EXACT_CHUNK_ROWS)."""
        gpt = model.gpt
        self.gpt = gpt
        self.layers = list(gpt.layers)
        self.device = model.gpt_device
        # Sampling runs where the GPT runs: on MPS ChatTTS keeps the GPT on the CPU, and a
        # loop that sampled on the GPU would copy between devices every step.
        self.out_device = self.device
        self.dtype = next(gpt.parameters()).dtype
        cfg = gpt.config
        self.heads = cfg.num_attention_heads
        self.kv_heads = cfg.num_key_value_heads
        self.head_dim = getattr(cfg, "head_dim", None) or cfg.hidden_size // self.heads
        self.hidden_size = cfg.hidden_size
        self.num_vq = model.num_vq
        self.num_codes = model.num_codes
        self.eos = self.num_codes - 1
        self.slots = slots
        self.max_len = max_len
        self.chunked = chunk_rows is not None
        self.chunk = (chunk_rows or EXACT_CHUNK_ROWS) if self.chunked else slots
        # Chunks all have `chunk` rows: the slots rounded up (the extra rows never hold a job).
        self.rows = -(-slots // self.chunk) * self.chunk
        self.live_chunks = list(range(0, self.rows, self.chunk))  # those with an exact row
        self.shared_rows = torch.zeros(0, dtype=torch.long, device=self.device)  # running ones
        self.step_runner = model.decode_step
        shape = (len(self.layers), self.rows, self.kv_heads, max_len, self.head_dim)
        self.k_cache = torch.zeros(shape, dtype=self.dtype, device=self.device)
        self.v_cache = torch.zeros(shape, dtype=self.dtype, device=self.device)
        self.emb_code = model.code_embeddings()
        self.head_weight = model.code_heads().float().to(self.out_device)
        self._hidden = torch.zeros(0)  # each row's last hidden state (FastDecoder.run's)
        self.exact = exact
        self._chunk_rows = {
            start: torch.arange(start, start + self.chunk, device=self.device)
            for start in range(0, self.rows, self.chunk)
        }
        # With ONNX Runtime: each row's logits for its next draw (the graph makes them).
        # On the GPT's device, as every buffer the step reads (ONNX Runtime runs on the CPU
        # today; a GPU execution provider would bind these where the cache lies).
        self._logit_rows = torch.zeros(
            self.rows if self.step_runner is not None else 0,
            self.num_vq * self.num_codes,
            device=self.out_device,
        )
        # The graph's input: each row's embedding (the step's codes embedded here, in torch).
        self._embeds_in = torch.zeros(
            self.rows if self.step_runner is not None else 0, self.hidden_size, device=self.device
        )

    def _layers(
        self,
        x: torch.Tensor,
        rows: torch.Tensor,
        pos: torch.Tensor,
        span: int,
        cached: slice | None = None,
    ) -> torch.Tensor:
        """x [B, S, hidden]; rows [B] slot ids; pos [B, S] positions. Writes K/V into the
        cache at those positions and attends over each row's cache up to its position; `span`
        (host-known) is the longest position + 1; `cached`: see `_decode_layer`."""
        batch, seq = x.shape[:2]
        cos, sin = self.gpt.rotary_emb(x, pos)
        if seq == 1:
            mask = self._decode_mask(pos, span)
            for li in range(len(self.layers)):
                x = self._decode_layer(li, x, rows, pos, span, (cos, sin, mask), cached)
            return self.gpt.norm(x)
        # Prefill: positions 0..seq-1 of each row (rows of several prompts right-padded: a
        # causal position never sees the padding after it, and the padding's keys and values,
        # written past a row's end, are overwritten by its own steps before any step reads them).
        for li, layer in enumerate(self.layers):
            attn = layer.self_attn
            h = layer.input_layernorm(x)
            q = attn.q_proj(h).view(batch, seq, -1, self.head_dim).transpose(1, 2)
            k = attn.k_proj(h).view(batch, seq, -1, self.head_dim).transpose(1, 2)
            v = attn.v_proj(h).view(batch, seq, -1, self.head_dim).transpose(1, 2)
            q, k = apply_rotary_pos_emb(q, k, cos, sin)
            self.k_cache[li, rows, :, :seq] = k
            self.v_cache[li, rows, :, :seq] = v
            out = F.scaled_dot_product_attention(
                q, k, v, is_causal=True, scale=attn.scaling, enable_gqa=self.kv_heads != self.heads
            )
            x = x + attn.o_proj(out.transpose(1, 2).reshape(batch, seq, -1))
            x = x + layer.mlp(layer.post_attention_layernorm(x))
        return self.gpt.norm(x)

    def _decode_mask(self, pos: torch.Tensor, span: int) -> torch.Tensor:
        keys = torch.arange(span, device=self.device)
        return keys.view(1, 1, 1, span) <= pos.view(-1, 1, 1, 1)

    def _decode_layer(
        self,
        li: int,
        x: torch.Tensor,
        rows: torch.Tensor,
        pos: torch.Tensor,
        span: int,
        rotary: tuple[torch.Tensor, torch.Tensor, torch.Tensor],
        cached: slice | None,
    ) -> torch.Tensor:
        """One layer of a one-position step for x [B, 1, hidden] of slots `rows`. `cached`:
        the slots `rows` are, in order, as a slice (the cache is read as a view), or None (a
        gather); `rotary`: cos, sin and the mask, made once for all layers."""
        layer = self.layers[li]
        attn = layer.self_attn
        cos, sin, mask = rotary
        batch = x.shape[0]
        h = layer.input_layernorm(x)
        q = attn.q_proj(h).view(batch, 1, -1, self.head_dim).transpose(1, 2)
        k = attn.k_proj(h).view(batch, 1, -1, self.head_dim).transpose(1, 2)
        v = attn.v_proj(h).view(batch, 1, -1, self.head_dim).transpose(1, 2)
        q, k = apply_rotary_pos_emb(q, k, cos, sin)
        self.k_cache[li, rows, :, pos[:, 0]] = k[:, :, 0]
        self.v_cache[li, rows, :, pos[:, 0]] = v[:, :, 0]
        if cached is not None:  # a view, no gather
            kc, vc = self.k_cache[li, cached, :, :span], self.v_cache[li, cached, :, :span]
        else:
            kc, vc = self.k_cache[li, rows, :, :span], self.v_cache[li, rows, :, :span]
        if self.exact:
            out = exact_attention(q, kc, vc, mask, attn.scaling, self.heads)
        else:
            out = F.scaled_dot_product_attention(
                q,
                kc,
                vc,
                attn_mask=mask,
                scale=attn.scaling,
                enable_gqa=self.kv_heads != self.heads,
            )
        x = x + attn.o_proj(out.transpose(1, 2).reshape(batch, 1, -1))
        return x + layer.mlp(layer.post_attention_layernorm(x))

    def _chunk_step(self, codes: torch.Tensor, pos: torch.Tensor, spans: dict[int, int]) -> None:
        """An exact step of the chunks {first slot: KV span} only (codes [rows, num_vq], pos
        [rows]); their hidden states go to `self._hidden`."""
        c = self.chunk
        chunks: list[Chunk] = []
        for start, span in spans.items():
            x = self._embed_codes(codes[start : start + c]).to(self.device, self.dtype)
            p = pos[start : start + c].view(-1, 1)
            cos, sin = self.gpt.rotary_emb(x, p)
            rotary = (cos, sin, self._decode_mask(p, span))
            chunks.append(Chunk(start, self._chunk_rows[start], p, span, rotary, x))
        for li in range(len(self.layers)):
            self._chunk_layer(li, chunks)
        for chunk in chunks:
            self._hidden[chunk.start : chunk.start + c] = self.gpt.norm(chunk.x)[:, 0].float()

    def _shared_step(
        self, slots: list[int], codes: torch.Tensor, pos: torch.Tensor, span: int
    ) -> None:
        """One position for the shared rows `slots` (ascending) as one product (codes [rows,
        num_vq] and pos [rows]: every row's); their hidden states go to `self._hidden`. Run
        after the exact chunks (see the module's note)."""
        rows = torch.tensor(slots, device=self.device)
        # Side by side (the usual case: shared jobs take the highest free slots), the cache is
        # read as a view, as a chunk reads it: a lone shared row then has an exact row's bits.
        side_by_side = slots[-1] - slots[0] + 1 == len(slots)
        cached = slice(slots[0], slots[-1] + 1) if side_by_side else None
        x = self._embed_codes(codes[rows]).to(self.device, self.dtype)
        out = self._layers(x, rows, pos[rows].view(-1, 1), span, cached)
        self._hidden[rows.to(self.out_device)] = out[:, 0].float().to(self.out_device)

    def _chunk_layer(self, li: int, chunks: list[Chunk]) -> None:
        """One layer for every chunk, one weight at a time: a weight is read from memory once
        and stays in the CPU's cache for the next chunks (a whole layer does not fit). Each
        product sees one chunk: the same ops, in the same order, as `_decode_layer`."""
        layer = self.layers[li]
        attn, mlp = layer.self_attn, layer.mlp
        c = self.chunk
        hs = [layer.input_layernorm(ch.x) for ch in chunks]
        qs = [attn.q_proj(h).view(c, 1, -1, self.head_dim).transpose(1, 2) for h in hs]
        ks = [attn.k_proj(h).view(c, 1, -1, self.head_dim).transpose(1, 2) for h in hs]
        vs = [attn.v_proj(h).view(c, 1, -1, self.head_dim).transpose(1, 2) for h in hs]
        outs = []
        for ch, q, k, v in zip(chunks, qs, ks, vs, strict=True):
            cos, sin, mask = ch.rotary
            q, k = apply_rotary_pos_emb(q, k, cos, sin)
            self.k_cache[li, ch.rows, :, ch.pos[:, 0]] = k[:, :, 0]
            self.v_cache[li, ch.rows, :, ch.pos[:, 0]] = v[:, :, 0]
            cached = slice(ch.start, ch.start + c)  # a view, no gather
            kc, vc = self.k_cache[li, cached, :, : ch.span], self.v_cache[li, cached, :, : ch.span]
            out = exact_attention(q, kc, vc, mask, attn.scaling, self.heads)
            outs.append(out.transpose(1, 2).reshape(c, 1, -1))
        for ch, out in zip(chunks, [attn.o_proj(o) for o in outs], strict=True):
            ch.x = ch.x + out
        hs = [layer.post_attention_layernorm(ch.x) for ch in chunks]
        gates = [mlp.act_fn(mlp.gate_proj(h)) for h in hs]
        ups = [g * mlp.up_proj(h) for g, h in zip(gates, hs, strict=True)]
        for ch, down in zip(chunks, [mlp.down_proj(u) for u in ups], strict=True):
            ch.x = ch.x + down

    def _onnx_step(
        self, slots: list[int], codes: torch.Tensor, pos: torch.Tensor, chunks: list[int] | None
    ) -> None:
        """One position for `slots` (ascending) through ONNX Runtime: codes [len(slots),
        num_vq], pos every row's position [rows]. The graph runs over the slots' contiguous
        range (None) or, for exact steps, each of `chunks` (first slots) whole, so a row's
        product always has the chunk's row count; only `slots` are written back."""
        runner = self.step_runner
        assert runner is not None
        stepping = torch.tensor(slots, device=self.device)
        self._embeds_in[stepping] = self._embed_codes(codes)[:, 0].float().to(self.device)
        if chunks is None:
            ranges = [(slots[0], slots[-1] + 1)]
        else:
            ranges = [(start, start + self.chunk) for start in chunks]
        layers = range(len(self.layers))
        for start, stop in ranges:
            # The other rows of the range compute too, and write a key and value at their
            # (stale) positions: an empty or finished row's, which its next job's prefill
            # overwrites, or past its next job's prompt, where nothing is read before written.
            # (Clamped: a position past the cache would be written outside it.)
            hidden, logits = runner.run(
                self._embeds_in[start:stop],
                pos[start:stop].clamp(max=self.k_cache.shape[3] - 1),
                [self.k_cache[li, start:stop] for li in layers],
                [self.v_cache[li, start:stop] for li in layers],
            )
            # The rows of this range, from the host's list: a boolean mask here would make
            # the host wait for the device to learn the count.
            rows = torch.tensor([s for s in slots if start <= s < stop], device=self.device)
            local = rows - start
            self._hidden[rows] = hidden[local]
            self._logit_rows[rows] = logits[local]

    def _onnx_prefilled(self, slot: int) -> None:
        """A row just prefilled by torch: its first logits from its hidden state (the graph
        makes every later step's)."""
        self._logit_rows[slot] = F.linear(self._hidden[slot], self.head_weight)

    def _onnx_logits(self, rows: torch.Tensor) -> torch.Tensor:
        return (
            self._logit_rows[rows].view(-1, self.num_vq, self.num_codes).reshape(-1, self.num_codes)
        )

    def _logits(self, hidden: torch.Tensor) -> torch.Tensor:
        """[B, hidden] fp32 -> [B * num_vq, num_codes], ChatTTS's (b n) c order. Chunked:
        hidden is every row's, and only the live chunks' rows are made (`chunk` at a time),
        then the shared rows' in one product."""
        if self.chunked and hidden.shape[0] == self.rows:
            logits = hidden.new_zeros(self.rows, self.num_vq * self.num_codes)
            for start in self.live_chunks:
                rows = slice(start, start + self.chunk)
                logits[rows] = F.linear(hidden[rows], self.head_weight)
            if len(self.shared_rows):  # after the chunks, as in the step
                shared = self.shared_rows
                logits[shared] = F.linear(hidden[shared], self.head_weight)
        else:
            logits = F.linear(hidden, self.head_weight)
        return logits.view(-1, self.num_vq, self.num_codes).reshape(-1, self.num_codes)

    def _embed_codes(self, codes: torch.Tensor) -> torch.Tensor:
        """codes [B, num_vq] -> [B, 1, hidden], as ChatTTS sums the per-codebook embeddings."""
        ids = codes.to(self.device).unsqueeze(1)
        embs = [self.emb_code[i](ids[:, :, i]).to(self.out_device) for i in range(self.num_vq)]
        return torch.stack(embs, 3).sum(3)
