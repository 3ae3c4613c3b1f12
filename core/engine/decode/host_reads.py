"""Every place the engine reads a device tensor back to the host, each a CUDA wait, so they are few
and named. Fake-CUDA tests (tests/core/engine/test_fake_cuda.py) replace them: call them through
the module, never imported by name.
"""

from collections.abc import Callable

import numpy as np
import torch


def step_flags(flags: torch.Tensor) -> list[list[bool]]:
    """A decode step's per-row flags [kinds, rows] (bool) as lists: the step's one read."""
    rows: list[list[bool]] = flags.tolist()
    return rows


def step_flags_later(flags: torch.Tensor) -> Callable[[], list[list[bool]]]:
    """step_flags without waiting for work queued after it: on CUDA the flags are copied to
    pinned host memory behind the kernels that made them, and the function returned waits
    for that copy alone (an event), not for the GPT step the decoder queues next. Elsewhere
    the read happens when the function is called (the work queued since ran already)."""
    if flags.device.type != "cuda":
        return lambda: step_flags(flags)
    host = torch.empty(flags.shape, dtype=flags.dtype, pin_memory=True)  # cached by torch
    host.copy_(flags, non_blocking=True)
    copied = torch.cuda.Event()
    copied.record()

    def read() -> list[list[bool]]:
        copied.synchronize()
        rows: list[list[bool]] = host.tolist()
        return rows

    return read


class LaterAudio:
    """Waveforms [n, samples] on their way to the host: `ready()` asks without waiting,
    `result()` waits if need be (audio_later)."""

    def __init__(self, ready: Callable[[], bool], result: Callable[[], np.ndarray]) -> None:
        self.ready, self._result = ready, result

    def result(self) -> np.ndarray:
        return self._result()


def audio_later(wavs: torch.Tensor) -> LaterAudio:
    """audio() without waiting for the device: on CUDA the waveforms are copied to pinned host
    memory behind the work on the current stream (the vocoder's side stream), with an event to
    ask or wait for. Elsewhere they are read now."""
    if wavs.device.type != "cuda":
        host = audio(wavs)
        return LaterAudio(lambda: True, lambda: host)
    pinned = torch.empty(wavs.shape, dtype=torch.float32, pin_memory=True)
    pinned.copy_(wavs, non_blocking=True)
    copied = torch.cuda.Event()
    copied.record()

    def result() -> np.ndarray:
        copied.synchronize()
        return pinned.numpy().copy()  # the pinned block goes back to torch's cache

    return LaterAudio(copied.query, result)


def audio(wavs: torch.Tensor) -> np.ndarray:
    """Waveforms [n, samples] (float32, any device) as a host array."""
    return np.asarray(wavs.detach().float().cpu().numpy(), dtype=np.float32)


def codes(tokens: torch.Tensor) -> np.ndarray:
    """Integer codes (any device, any shape) as a host int64 array."""
    return np.asarray(tokens.detach().cpu().numpy(), dtype=np.int64)
