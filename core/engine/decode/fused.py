"""Several whole decode steps as one unit of device work (FastDecoder's `fused_steps`): the code
heads, the sampling and the GPT step, K times over every slot, nothing read back in between.

A unit runs only while no row can end or be joined within it; the host then reads its K steps'
flags at once, so a seeded row's codes are its one-step codes. On CUDA a unit is one graph replay,
captured per (K, span bucket, Sampling, slots with generators); a failed capture is logged and the
unit runs eagerly. Why: docs/gpu.md."""

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields

import torch

from chattts_studio.core.engine.decode.rowwise import Draw, Warper, sample_codes
from chattts_studio.core.engine.request import Sampling

log = logging.getLogger("chattts_studio")
UNIT_SIZES = (8, 4, 2, 1)  # steps a unit may hold: a few graphs, each reused often


@dataclass
class RunBuffers:
    """A decode run's device state, one entry a slot (pos: a row of the cache); kept by the
    decoder for its life so graphs can read them by address, reset at each run's start."""

    hidden: torch.Tensor  # [rows, hidden] fp32: each row's last hidden state
    history: torch.Tensor  # [slots * num_vq, REPETITION_WINDOW] the last codes
    steps: torch.Tensor  # [slots] steps made
    min_steps: torch.Tensor  # [slots] EOS held off before this
    pos: torch.Tensor  # [rows] the next position
    caps: torch.Tensor  # [slots] most steps
    codes: torch.Tensor  # [rows, num_vq] the next step's input

    def reset(self) -> None:
        for field in fields(self):
            getattr(self, field.name).zero_()


@dataclass(frozen=True)
class Unit:
    """One unit's outputs: codes [K, slots, num_vq], the hidden state each step sampled from
    [K, slots, hidden] and flags [K * 2, slots] (per step: ended by EOS, not finite)."""

    codes: torch.Tensor
    hiddens: torch.Tensor
    flags: torch.Tensor


def unit_size(rows: Sequence[tuple[int, int, int]], most: int) -> int:
    """The steps a unit may hold for rows given as (steps made, min_steps, cap): none may end
    before the unit's last step (EOS is drawn only from min_steps on; a cap ends a row when
    reached), rounded down to one of UNIT_SIZES, at most `most`."""
    room = most
    for made, min_steps, cap in rows:
        room = min(room, cap - made, max(1, min_steps - made + 1))
    return next(size for size in UNIT_SIZES if size <= max(1, room))


class FusedSteps:
    """Runs units over a decoder's buffers. `heads`: hidden [slots, H] -> logits [slots *
    num_vq, codes]; `gpt_step`: (codes [slots, num_vq], pos [slots], span) -> hidden [slots, H]
    fp32 (the static step, every slot)."""

    def __init__(
        self,
        heads: Callable[[torch.Tensor], torch.Tensor],
        gpt_step: Callable[[torch.Tensor, torch.Tensor, int], torch.Tensor],
        buffers: RunBuffers,
        slots: int,
        num_vq: int,
        eos: int,
        graphs: bool,
        draw: Draw | None = None,
    ) -> None:
        self.heads = heads
        self.gpt_step = gpt_step
        self.buffers = buffers
        self.slots = slots
        self.num_vq = num_vq
        self.eos = eos
        self.graphs = graphs
        self.draw = draw
        self.problem: str | None = None
        self.captured: dict[tuple[object, ...], tuple[torch.cuda.CUDAGraph, Unit]] = {}
        self.pool = torch.cuda.graph_pool_handle() if graphs else None
        self.replays = 0  # units run from a graph (the GPU run's figures)
        self.units = 0  # units run, replayed or eager

    def run(
        self,
        size: int,
        span: int,
        sampling: Sampling,
        warpers: list[Warper],
        generators: list[torch.Generator | None],
    ) -> Unit:
        """`size` whole steps; `span`: the KV span (bucketed) every GPT step inside attends
        over. The returned tensors are the caller's to keep."""
        self.units += 1
        if not self.graphs:
            return self._unit(size, span, sampling, warpers, generators, None)
        key = (size, span, sampling, tuple(id(g) if g is not None else None for g in generators))
        entry = self.captured.get(key)
        if entry is None:
            entry = self._capture(size, span, sampling, warpers, generators)
            if entry is None:
                self.graphs = False  # said why; eager from now on
                return self._unit(size, span, sampling, warpers, generators, None)
            self.captured[key] = entry
        graph, out = entry
        graph.replay()
        self.replays += 1
        return Unit(out.codes.clone(), out.hiddens.clone(), out.flags.clone())

    def drop(self) -> None:
        """Forget every graph (the cache they point into was replaced)."""
        self.captured.clear()

    def _unit(
        self,
        size: int,
        span: int,
        sampling: Sampling,
        warpers: list[Warper],
        generators: list[torch.Generator | None],
        out: Unit | None,
    ) -> Unit:
        b = self.buffers
        slots, num_vq = self.slots, self.num_vq
        if out is None:
            out = Unit(
                torch.empty(size, slots, num_vq, dtype=torch.long, device=b.history.device),
                torch.empty(size, slots, b.hidden.shape[1], device=b.hidden.device),
                torch.empty(size * 2, slots, dtype=torch.bool, device=b.history.device),
            )
        hidden = b.hidden[:slots]
        for step in range(size):
            if step:  # the GPT step on the codes just drawn; only running rows move on
                codes = out.codes[step - 1]
                hidden.copy_(self.gpt_step(codes, b.pos[:slots], span))
                going = ~out.flags[2 * (step - 1)] & (b.steps < b.caps)
                b.pos[:slots] += going.long()
            out.hiddens[step].copy_(hidden)
            codes, bad = sample_codes(
                self.heads(hidden),
                b.history,
                b.steps,
                b.min_steps,
                sampling,
                warpers,
                num_vq,
                generators,
                self.draw,
            )
            out.codes[step].copy_(codes)
            out.flags[2 * step].copy_(codes.eq(self.eos).any(1))
            out.flags[2 * step + 1].copy_(bad)
            b.history.copy_(torch.cat([b.history[:, 1:], codes.reshape(-1, 1)], 1))
            b.steps += 1
        return out

    def _capture(
        self,
        size: int,
        span: int,
        sampling: Sampling,
        warpers: list[Warper],
        generators: list[torch.Generator | None],
    ) -> tuple[torch.cuda.CUDAGraph, Unit] | None:
        b = self.buffers
        saved = [getattr(b, f.name).clone() for f in fields(b)]
        states = [g.get_state() if g is not None else None for g in generators]
        try:
            global_state = torch.cuda.get_rng_state(b.hidden.device)
            # A warm-up runs for real (kernels pick their algorithms; the outputs are made);
            # what it changed is put back (also when it fails), so the first replay, or the
            # eager unit after a failure, computes this very unit.
            side = torch.cuda.Stream()
            side.wait_stream(torch.cuda.current_stream())
            try:
                with torch.cuda.stream(side):
                    out = self._unit(size, span, sampling, warpers, generators, None)
            finally:
                torch.cuda.current_stream().wait_stream(side)
                self._restore(saved, states, generators, global_state)
            graph = torch.cuda.CUDAGraph()
            for generator in {id(g): g for g in generators if g is not None}.values():
                graph.register_generator_state(generator)
            with torch.cuda.graph(graph, pool=self.pool):
                self._unit(size, span, sampling, warpers, generators, out)
            return graph, out
        except Exception as exc:  # any failure to capture: the same unit eagerly, said once
            self.problem = f"fused steps run without CUDA graphs: {str(exc).splitlines()[0][:200]}"
            log.warning(self.problem)
            return None

    def _restore(
        self,
        saved: list[torch.Tensor],
        states: list[torch.Tensor | None],
        generators: list[torch.Generator | None],
        global_state: torch.Tensor,
    ) -> None:
        b = self.buffers
        for field, value in zip(fields(b), saved, strict=True):
            getattr(b, field.name).copy_(value)
        for generator, state in zip(generators, states, strict=True):
            if generator is not None and state is not None:
                generator.set_state(state)
        torch.cuda.set_rng_state(global_state, b.hidden.device)
