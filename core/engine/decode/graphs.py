"""CUDA graphs for the decode step.

A batch-1 step of ChatTTS's 20-layer, 768-wide GPT is a few hundred small kernels: on a GPU
the time goes to launching them, not to the arithmetic. A CUDA graph records the step once
and replays it with one launch. The step must have fixed shapes and addresses: the decoder's
static step (every slot, a KV span rounded up to a bucket) reads its inputs from the static
buffers here, and each span bucket gets its own graph, all sharing one memory pool.

Capture is tried once per bucket; if it fails (a kernel that synchronises, an old driver), the
reason is logged and the decoder runs the same step eagerly: slower, never wrong.
"""

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
