"""torch.compile of the static decode step (FastDecoder's `compiled`): fewer kernels for a
launch-bound batch-1 step on a GPU.

Inductor's and Triton's caches live under the app's cache folder, so a later process loads them
instead of compiling again (times: docs/gpu.md). Results agree with the eager step to rounding, not
bit for bit: a compiled decoder promises no stock equality. If compiling fails the reason is logged
once and the step runs eagerly; an error while it runs propagates as the eager step's."""

import logging
import os
from collections.abc import Callable

import torch
from torch._dynamo.exc import TorchDynamoException

from chattts_studio.core import paths

log = logging.getLogger("chattts_studio")
Step = Callable[..., torch.Tensor]


def use_cache_folder() -> None:
    """inductor's and Triton's caches under the app's cache folder, unless the user set them
    (both read these variables when they compile, not at import)."""
    root = paths.cache_dir() / "compiled"
    os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", str(root / "inductor"))
    os.environ.setdefault("TRITON_CACHE_DIR", str(root / "triton"))


class CompiledStep:
    """`step` (an unbound function: holding a bound method would tie the decoder into a
    cycle) compiled for fixed shapes; `run` gives None once compiling has failed."""

    def __init__(self, step: Step) -> None:
        use_cache_folder()
        self._compiled = torch.compile(step, dynamic=False)
        self.problem: str | None = None
        self.calls = 0

    def run(self, *args: object) -> torch.Tensor | None:
        if self.problem is not None:
            return None
        try:
            out = self._compiled(*args)
        except TorchDynamoException as exc:  # compiling failed, not the step
            self.problem = f"the compiled step is off: {str(exc).splitlines()[0][:200]}"
            log.warning(self.problem)
            return None
        self.calls += 1
        return out
