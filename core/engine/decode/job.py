"""A decode job (one segment: prompt embedding in, GPT hidden states out), the queue a running
decode takes it from, and its error when the GPT's numbers are not finite. The loop:
core/engine/decode/loop.py.
"""

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

import torch

from chattts_studio.core.engine.request import Sampling
from chattts_studio.core.errors import DeviceError
from chattts_studio.core.messages import QT_TRANSLATE_NOOP, Sentence

DTYPE_NAMES = {torch.float32: "fp32", torch.float16: "fp16", torch.bfloat16: "bf16"}


class NonFiniteError(DeviceError):
    """The GPT produced NaN or inf (fp16 overflow): sampling from it would be garbage, and on
    CUDA a device-side assert that poisons the process."""


# What to use instead, for a precision that overflows where a wider one would not.
WIDER = {torch.float16: "bf16 or fp32", torch.bfloat16: "fp32"}


def non_finite_sentence(dtype: torch.dtype) -> str:
    """What to say when the GPT's numbers are not finite at `dtype`. The advice never names
    the precision in use: fp16 and bf16 point to a wider one; at fp32 (int8 computes in fp32
    too) none is wider, and damaged weights are the likely cause."""
    precision = DTYPE_NAMES.get(dtype, str(dtype))
    wider = WIDER.get(dtype)
    if wider is not None:
        return Sentence(
            QT_TRANSLATE_NOOP(
                "core",
                "The model produced invalid numbers (NaN or infinity) at {precision} "
                "precision; use {wider} for this text.",
            ),
            precision=precision,
            wider=wider,
        )
    return Sentence(
        QT_TRANSLATE_NOOP(
            "core",
            "The model produced invalid numbers (NaN or infinity) at {precision} precision; "
            "its files may be damaged: check them with {command}.",
        ),
        precision=precision,
        command="chattts-studio-cli model verify <model>",
    )


@dataclass
class Job:
    """One segment's decode: its prompt embedding in, its GPT hidden states out."""

    key: int  # the caller's id
    # [1, prompt_len, hidden] with the speaker applied, or a function that makes it when the
    # job is admitted (so a 100,000-character text holds no embeddings it does not use yet).
    emb: torch.Tensor | Callable[[], torch.Tensor]
    cap: int  # most steps
    min_steps: int  # EOS is held off before this many steps
    prompt_len: int = 0  # the prompt's length; read from emb when that is a tensor
    hiddens: list[torch.Tensor] = field(default_factory=list)
    tokens: list[torch.Tensor] = field(default_factory=list)
    ended_by_eos: bool = False
    # Its own random stream (see the module's note); None: torch's global RNG.
    seed: int | None = None
    # Its own sampling settings (rows with different ones share a step); None: the run's.
    sampling: Sampling | None = None
    # May share its products with other shared jobs (one product for all of them: the batch's
    # throughput), so its last bits depend on them; False: its own chunk (exact, see
    # FastDecoder). Only chunked decoders (the CPU's exact step) tell the two apart: on a GPU
    # every product already holds every slot, so each job is exact and batched at once.
    shared: bool = False
    # Set from any thread: the decoder frees the job's row before its next step, and the job
    # is never yielded (its caller went away).
    cancelled: bool = False

    def __post_init__(self) -> None:
        if isinstance(self.emb, torch.Tensor):
            self.prompt_len = int(self.emb.shape[1])

    @property
    def length(self) -> int:
        """Positions the job needs in the KV cache."""
        return self.prompt_len + self.cap

    @property
    def steps(self) -> int:
        return len(self.hiddens)


class JobSource(Protocol):
    """Where a running decode takes its next job: None when there is none now."""

    def __call__(self) -> Job | None: ...


def list_source(jobs: list[Job]) -> JobSource:
    pending = list(reversed(jobs))
    return lambda: pending.pop() if pending else None
