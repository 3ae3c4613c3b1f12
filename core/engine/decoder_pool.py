"""Decoders that live as long as the loaded model, not one per job: one per shape, each KV cache and
captured CUDA graphs lent to each job in turn, rows sized from free memory. See docs/gpu.md.
"""

import weakref
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace

import torch

from chattts_studio.core.engine.chattts.chat import ChatModel
from chattts_studio.core.engine.decode.loop import FastDecoder
from chattts_studio.core.engine.decode.slots import SPAN_BUCKET, DecoderShape
from chattts_studio.core.errors import Cancelled

MAX_ROWS = 512  # rows from free memory never exceed this (the sampler's per-row work grows)
MEMORY_SHARE = 0.8  # of free memory, for KV caches; the rest: activations, graphs, vocoder
CPU_KEEP_BYTES = 1 << 30  # what a pool keeps between jobs on a CPU (RAM is the app's too)
CUDA_KEEP_SHARE = 0.5  # on CUDA: this share of the card's memory
SIZING_LENGTH = 1024  # KV positions a row is sized for (a prompt and a long segment)

_POOLS: "weakref.WeakSet[DecoderPool]" = weakref.WeakSet()


def kv_row_bytes(model: ChatModel, max_len: int) -> int:
    """One row's keys and values over `max_len` positions in the GPT's dtype."""
    gpt = model.gpt
    cfg = gpt.config
    heads = cfg.num_attention_heads
    head_dim = getattr(cfg, "head_dim", None) or cfg.hidden_size // heads
    kv_heads = getattr(cfg, "num_key_value_heads", None) or heads
    size = next(gpt.parameters()).element_size()
    return 2 * cfg.num_hidden_layers * kv_heads * max_len * head_dim * size


def rows_that_fit(free_bytes: int, row_bytes: int, cap: int = MAX_ROWS) -> int:
    """The rows whose KV caches fit in `free_bytes` with the margin; 1 to `cap`."""
    return max(1, min(cap, int(free_bytes * MEMORY_SHARE) // max(1, row_bytes)))


def _decoder_bytes(decoder: FastDecoder) -> int:
    return sum(t.numel() * t.element_size() for t in (decoder.k_cache, decoder.v_cache))


class DecoderPool:
    """The loaded model's decoders. One user at a time (the engine's thread, or the batcher's
    while it owns the model)."""

    def __init__(self, max_bytes: int | None = None) -> None:
        self.max_bytes = max_bytes  # None: by device (see `_keep_bytes`)
        self.built = 0  # decoders made so far (tests and figures: reuse shows as no growth)
        self._decoders: OrderedDict[DecoderShape, FastDecoder] = OrderedDict()
        self._model: weakref.ReferenceType[ChatModel] | None = None
        _POOLS.add(self)

    def __len__(self) -> int:
        return len(self._decoders)

    @property
    def kv_bytes(self) -> int:
        return sum(_decoder_bytes(d) for d in self._decoders.values())

    def decoder(self, model: ChatModel, shape: DecoderShape, max_len: int) -> FastDecoder:
        """A decoder of `shape` with room for `max_len` positions, its rows empty: the one
        kept from an earlier job when it is large enough, else a new one."""
        owner = self._model() if self._model is not None else None
        if owner is not model:
            self.clear()
            self._model = weakref.ref(model)
        # Graphs and exact steps are static steps: kept under the one shape that says so.
        key = replace(shape, static=shape.static or shape.graphs or shape.exact)
        dtype = next(model.gpt.parameters()).dtype
        found = self._decoders.pop(key, None)
        if found is not None and (found.max_len < max_len or found.dtype != dtype):
            found = None  # let go before the larger one is made
        if found is None:
            self._evict(kv_row_bytes(model, max_len) * shape.slots)
            # Rounded up to the span bucket: the buckets a static step uses then do not depend
            # on which job made the decoder, so neither do its results.
            length = -(-max_len // SPAN_BUCKET) * SPAN_BUCKET
            found = FastDecoder.shaped(model, shape, length)
            self.built += 1
        found.active[:] = [None] * found.slots
        self._decoders[key] = found
        return found

    @contextmanager
    def lend(self, model: ChatModel, shape: DecoderShape, max_len: int) -> Iterator[FastDecoder]:
        """`decoder()` for one job: dropped when the job raises, trimmed to the cap after.
        A cancelled job is no failure: the decoder stops between steps, its state whole."""
        decoder = self.decoder(model, shape, max_len)
        try:
            yield decoder
        except Cancelled:
            raise
        except Exception:
            self.discard(decoder)
            raise
        finally:
            self.trim()

    def discard(self, decoder: FastDecoder) -> None:
        """Never lend `decoder` again (it raised: its state is unknown; or its cache grew too
        large to keep)."""
        for shape, kept in list(self._decoders.items()):
            if kept is decoder:
                del self._decoders[shape]

    def trim(self) -> None:
        """Keep no more than the cap, least recently used first out."""
        self._evict(0)

    def clear(self) -> None:
        self._decoders.clear()

    def _keep_bytes(self) -> int:
        if self.max_bytes is not None:
            return self.max_bytes
        for decoder in self._decoders.values():
            if decoder.device.type == "cuda":
                total = torch.cuda.get_device_properties(decoder.device).total_memory
                return int(total * CUDA_KEEP_SHARE)
        return CPU_KEEP_BYTES

    def _evict(self, incoming: int) -> None:
        keep = self._keep_bytes()
        while self._decoders and self.kv_bytes + incoming > keep:
            self._decoders.popitem(last=False)


def drop_decoders() -> None:
    """Every pool lets go of its decoders: before memory is returned to a device, so that
    their caches and graph pools are among what returns (rare: unload, out of memory)."""
    for pool in list(_POOLS):
        pool.clear()


def cuda_rows(model: ChatModel, pool: DecoderPool | None, max_len: int = SIZING_LENGTH) -> int:
    """The most rows whose KV caches fit on the model's CUDA device now (what `pool` holds
    counts as free: it lets go of it for a larger decoder)."""
    device = model.gpt_device
    free, _total = torch.cuda.mem_get_info(device)
    held = pool.kv_bytes if pool is not None else 0
    return rows_that_fit(free + held, kv_row_bytes(model, max_len))
