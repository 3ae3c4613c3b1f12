"""A decoder's slots and its step forms: the KV cache rows (GptRows), which job sits in each slot,
and how one step runs over them (static, graph replay, compiled). The loop that admits and
finishes jobs is FastDecoder (loop.py).
"""

from dataclasses import dataclass, fields
from typing import Any, Self

import torch

from chattts_studio.core import seeds
from chattts_studio.core.engine.chattts.chat import ChatModel
from chattts_studio.core.engine.decode import rowwise
from chattts_studio.core.engine.decode.compiled import CompiledStep
from chattts_studio.core.engine.decode.fused import FusedSteps, RunBuffers
from chattts_studio.core.engine.decode.gpt_rows import GptRows
from chattts_studio.core.engine.decode.graphs import StepGraphs
from chattts_studio.core.engine.decode.job import Job
from chattts_studio.core.engine.decode.rowwise import REPETITION_WINDOW, RowSampling

SPAN_BUCKET = 256  # static steps attend over KV spans rounded up to this (one graph each)


def chunks_here(device: torch.device) -> bool:
    """Whether exact steps run in chunks on `device`: on the CPU, where a BLAS picks its kernel
    by the row count (see gpt_rows.py). A GPU runs the static step over every slot instead (its
    fixed shape is what a CUDA graph needs). The fake-CUDA tests replace this to run the
    chunked form on a CUDA device too, so it stays device-clean should a GPU ever use it."""
    return device.type == "cpu"


@dataclass(frozen=True)
class DecoderShape:
    """A decoder's form: its slots and how a step runs over them (each option: SlotDecoder's
    __init__, whose parameters these fields are). What is passed around to ask for a decoder:
    two of one shape are interchangeable beyond the model and the cache length, so the pool
    keeps one decoder per shape (the graphs a decoder captured depend on it)."""

    slots: int
    static: bool = False
    graphs: bool = False
    exact: bool = False
    chunk_rows: int | None = None  # an exact CPU step's rows per product (None: the default)
    late_flags: bool | None = None
    fused_steps: int = 0
    compiled: bool = False

    def options(self) -> dict[str, Any]:
        """The constructor's keyword options (every field but `slots`)."""
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name != "slots"}


class SlotDecoder(GptRows):
    """The slots and step forms FastDecoder's loop runs on (the options: __init__; the same
    as one value, DecoderShape)."""

    def __init__(
        self,
        model: ChatModel,
        slots: int,
        max_len: int,
        static: bool = False,
        graphs: bool = False,
        exact: bool = False,
        chunk_rows: int | None = None,
        late_flags: bool | None = None,
        fused_steps: int = 0,
        compiled: bool = False,
    ) -> None:
        """`static`: every step runs all slots over a bucketed KV span, with positions on the
        device (fixed shapes, no per-step index building): what a CUDA graph needs, and the
        form a GPU prefers, since a 20-layer step of this size is bound by kernel launches.
        `graphs`: capture that step as CUDA graphs, one per span bucket (CUDA only).
        `exact`: a row's numbers never depend on the rows beside it (see `exact_attention`):
        every matrix product has a fixed row count whoever is running, attention is plain
        matmuls, and logits are made with the same row count. On CUDA (or `static`) that is
        the static step over all `slots`; on the CPU, chunks of `chunk_rows` consecutive slots
        (default EXACT_CHUNK_ROWS), only those holding a running row (see gpt_rows.py), so a
        lone row costs one chunk, not `slots`. With per-job seeds, a job then gives the same
        codes and hidden states bit for bit in any company.
        `late_flags`: a static step (not chunked, not ONNX Runtime) queues the next GPT step
        before it reads which rows just ended, so a GPU runs that step while the host waits
        for the flags and keeps its books (see `_ahead`); None: on CUDA only. The codes are
        the same either way (tested on the CPU).
        `fused_steps`: up to this many whole steps (heads, sampling, GPT step) run as one
        unit of device work, one CUDA graph replay with `graphs`, when no row can end or be
        joined within them (see fused.py); 0: off. Needs `late_flags`' form.
        `compiled`: the static step through torch.compile, its artefacts cached on disk
        (compiled.py); results agree with the eager step's to rounding, not bit for bit."""
        chunked = exact and not (static or graphs) and chunks_here(model.gpt_device)
        if exact and model.decode_step is not None:
            # ONNX Runtime attends over the whole cache: its length is part of a row's
            # arithmetic, so it is one of a few (the pool's buckets), whoever made the decoder.
            max_len = -(-max_len // SPAN_BUCKET) * SPAN_BUCKET
        super().__init__(model, slots, max_len, exact, (chunk_rows or 0) if chunked else None)
        self.active: list[Job | None] = [None] * slots  # the job in each slot, between steps
        self.static = static or graphs or exact
        self._all_rows = torch.arange(slots, device=self.device)
        self._tainted: set[int] = set()  # rows whose cache may hold NaN/inf from a failed job
        self._graphs: StepGraphs | None = None
        self._compiled = CompiledStep(SlotDecoder._static_step) if compiled else None
        if late_flags is None:
            late_flags = self.device.type == "cuda"
        # Only where every slot steps anyway (whether a row ended changes nothing but its
        # position, kept on the device): the chunked and ONNX steps pick rows on the host.
        self.ahead = late_flags and self.static and not self.chunked and self.step_runner is None
        self.fused_steps = fused_steps if self.ahead else 0
        self._buffers: RunBuffers | None = None
        self._fused: FusedSteps | None = None
        # With fused steps, a slot keeps one generator for the decoder's life (a graph holds
        # it), reseeded for each job: the same stream as a new generator of that seed.
        self._slot_generators: list[torch.Generator | None] = [None] * slots
        # The sampler's draw (rowwise.exponential_draw when None); the GPU run's lever table
        # sets rowwise.multinomial_draw to measure the sampler without it.
        self.draw: rowwise.Draw | None = None
        if graphs:
            self._graphs = StepGraphs(self._gpt_step, slots, self.num_vq, self.device)

    @classmethod
    def shaped(cls, model: ChatModel, shape: DecoderShape, max_len: int) -> Self:
        """A decoder of `shape` with room for `max_len` positions."""
        return cls(model, shape.slots, max_len, **shape.options())

    def _grow(self, max_len: int) -> None:
        """A job longer than the cache was sized for (its text grew in refine): a larger
        cache, the rows' keys and values copied over. Graphs recorded the old addresses."""
        max_len = -(-max_len // SPAN_BUCKET) * SPAN_BUCKET
        for name in ("k_cache", "v_cache"):
            old = getattr(self, name)
            new = old.new_zeros((*old.shape[:3], max_len, old.shape[4]))
            new[:, :, :, : self.max_len] = old
            setattr(self, name, new)
        self.max_len = max_len
        if self._graphs is not None:
            self._graphs = StepGraphs(self._gpt_step, self.slots, self.num_vq, self.device)
        if self._fused is not None:
            self._fused.drop()

    def _run_buffers(self) -> RunBuffers:
        """The run's device state, made once (graphs read it by address), zeroed per run."""
        if self._buffers is None:
            slots, out = self.slots, self.out_device
            self._buffers = RunBuffers(
                hidden=torch.zeros(self.rows, self.hidden_size, device=out),
                history=torch.zeros(
                    slots * self.num_vq, REPETITION_WINDOW, dtype=torch.long, device=out
                ),
                steps=torch.zeros(slots, dtype=torch.long, device=out),
                min_steps=torch.zeros(slots, dtype=torch.long, device=out),
                pos=torch.zeros(self.rows, dtype=torch.long, device=self.device),
                caps=torch.zeros(slots, dtype=torch.long, device=self.device),
                codes=torch.zeros(self.rows, self.num_vq, dtype=torch.long, device=self.device),
            )
            if self.fused_steps:
                self._fused = FusedSteps(
                    self._unit_heads,
                    self._gpt_step,
                    self._buffers,
                    self.slots,
                    self.num_vq,
                    self.eos,
                    graphs=self._graphs is not None,
                    draw=self.draw,
                )
        self._buffers.reset()
        return self._buffers

    def _unit_heads(self, hidden: torch.Tensor) -> torch.Tensor:
        """A fused unit's logits for every slot, as the one-step loop makes them."""
        return self._logits(hidden)

    def _slot_generator(self, slot: int, seed: int) -> torch.Generator:
        generator = self._slot_generators[slot]
        if generator is None:
            generator = self._slot_generators[slot] = seeds.row_generator(self.out_device, seed)
        return generator.manual_seed(seed)

    def _bucket(self, span: int) -> int:
        """The KV span a static step attends over: a multiple of SPAN_BUCKET, so that a few
        shapes (graphs) serve a whole segment."""
        return min(self.max_len, -(-span // SPAN_BUCKET) * SPAN_BUCKET)

    def _static_step(self, codes: torch.Tensor, pos: torch.Tensor, span: int) -> torch.Tensor:
        """One step for every slot: codes [slots, num_vq], pos [slots] -> hidden [slots, H]
        fp32. Slots that are empty or ended compute too; their results are never read, and
        what they write into the cache is overwritten before any row attends to it."""
        x = self._embed_codes(codes).to(self.device, self.dtype)
        return self._layers(x, self._all_rows, pos.view(-1, 1), span, slice(None))[:, 0].float()

    def _gpt_step(self, codes: torch.Tensor, pos: torch.Tensor, span: int) -> torch.Tensor:
        """The static step, compiled when asked (and compiling worked)."""
        if self._compiled is not None:
            out = self._compiled.run(self, codes, pos, span)
            if out is not None:
                return out
        return self._static_step(codes, pos, span)

    def _step_all(self, codes: torch.Tensor, pos: torch.Tensor, span: int) -> torch.Tensor:
        span = self._bucket(span)
        if self._graphs is not None:
            out = self._graphs.run(codes, pos, span)
            if out is not None:
                return out
            self._graphs = None  # capture failed: it said why; run eagerly from now on
        return self._gpt_step(codes, pos, span)

    def _static_rows_step(
        self,
        rows: torch.Tensor,
        codes: torch.Tensor,
        codes_all: torch.Tensor,
        pos_d: torch.Tensor,
        span: int,
    ) -> None:
        """Every slot steps on the codes just drawn (the running rows' placed among them);
        the hidden states land in the run's `_hidden`."""
        codes_all.index_copy_(0, rows, codes.to(self.device))
        self._hidden.copy_(self._step_all(codes_all, pos_d, span).to(self.out_device))

    def _advance(
        self,
        rows: torch.Tensor,
        out_rows: torch.Tensor,
        pos_d: torch.Tensor,
        steps_d: torch.Tensor,
        caps_d: torch.Tensor,
        finished: torch.Tensor,
    ) -> None:
        """Only the rows that go on move on: a mask made on the device, so no read."""
        going = ~finished.to(self.device) & (steps_d[out_rows].to(self.device) < caps_d[rows])
        pos_d.index_add_(0, rows, going.long())

    def running(self, key: int) -> Job | None:
        return next((job for job in self.active if job is not None and job.key == key), None)

    # -- sampling -------------------------------------------------------------------------
    def sample_step(
        self,
        logits: torch.Tensor,
        history: torch.Tensor,
        steps: torch.Tensor,
        min_steps: torch.Tensor,
        rows: RowSampling,
        generators: list[torch.Generator | None] | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        return rows.sample(logits, history, steps, min_steps, generators)
