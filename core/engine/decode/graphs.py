"""CUDA graphs for the decode step: a batch-1 step is a few hundred small kernels, so a GPU spends
it launching them; a graph replays the step with one launch.

Replay needs fixed shapes and addresses: the static step reads its inputs from the buffers here,
and each KV span bucket has its own graph, all sharing one memory pool. Capture is tried once
per bucket; if it fails the reason is logged and the step runs eagerly: slower, never wrong."""

import logging
import weakref
from collections.abc import Callable

import torch

log = logging.getLogger("chattts_studio")
StepFn = Callable[[torch.Tensor, torch.Tensor, int], torch.Tensor]
WARMUP_RUNS = 2  # kernels pick their algorithms (cuBLAS, SDPA) before capture


class StepGraphs:
    def __init__(self, step: StepFn, slots: int, num_vq: int, device: torch.device) -> None:
        # Weakly: the step is a bound method of the decoder that owns these graphs, and a
        # cycle would keep its KV cache and graph pool on the GPU until a garbage collection
        # (the next jobs' caches piled up beside it: seen as GBs on the first GPU run).
        self._step: Callable[[], StepFn | None] = (
            weakref.WeakMethod(step) if hasattr(step, "__self__") else lambda: step
        )
        self.codes = torch.zeros(slots, num_vq, dtype=torch.long, device=device)
        self.pos = torch.zeros(slots, dtype=torch.long, device=device)
        self.graphs: dict[int, tuple[torch.cuda.CUDAGraph, torch.Tensor]] = {}
        self.pool = torch.cuda.graph_pool_handle()
        self.problem: str | None = None

    def step(self) -> StepFn:
        step = self._step()
        assert step is not None, "the decoder that owns these graphs is gone"
        return step

    def run(self, codes: torch.Tensor, pos: torch.Tensor, span: int) -> torch.Tensor | None:
        """The step's hidden states (a static buffer: copy before the next call), or None when
        graphs cannot be used (see `problem`)."""
        self.codes.copy_(codes)
        self.pos.copy_(pos)
        entry = self.graphs.get(span)
        if entry is None:
            captured = self._capture(span)
            if captured is None:
                return None
            entry = self.graphs[span] = captured
        graph, out = entry
        graph.replay()
        return out

    def _capture(self, span: int) -> tuple[torch.cuda.CUDAGraph, torch.Tensor] | None:
        try:
            # Warm-up runs execute for real: they write the same keys and values at the same
            # positions as the replay that follows will, so they change nothing.
            side = torch.cuda.Stream()
            side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side):
                for _ in range(WARMUP_RUNS):
                    self.step()(self.codes, self.pos, span)
            torch.cuda.current_stream().wait_stream(side)
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph, pool=self.pool):
                out = self.step()(self.codes, self.pos, span)
            return graph, out
        except RuntimeError as exc:
            self.problem = f"CUDA graphs are off for this run: {str(exc).splitlines()[0][:200]}"
            log.warning(self.problem)
            return None
