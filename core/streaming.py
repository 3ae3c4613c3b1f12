"""Early audio: vocode a segment while its GPT steps are still coming, new frames only.

The DVAE decoder and Vocos are convolutional, so a frame depends on its neighbours. Each chunk
is decoded from `CONTEXT` steps before the first new one, and the last `HOLD` steps are held
back until more steps (right context) arrive; joins are cross-faded over a short overlap, so
there are no clicks. Cost per chunk: (CONTEXT + new) steps of decoder+vocoder, never the whole
prefix again (stock streaming re-decodes it every time)."""

import numpy as np
import torch

from . import SAMPLES_PER_STEP
from .chat import ChatModel

FIRST_CHUNK_STEPS = 12  # the first audio after this many steps (+HOLD)
CHUNK_STEPS = 24
CONTEXT_STEPS = 32
HOLD_STEPS = 4
CROSSFADE = 256  # samples


class ChunkVocoder:
    """Turns one segment's growing list of GPT hidden states into successive audio chunks."""

    def __init__(self, model: ChatModel) -> None:
        self.model = model
        self.emitted = 0  # steps already turned into audio
        self.tail = np.zeros(0, dtype=np.float32)  # overlap kept for the next cross-fade
        self.chunks: list[np.ndarray] = []

    def ready(self, steps: int) -> bool:
        target = FIRST_CHUNK_STEPS if self.emitted == 0 else CHUNK_STEPS
        return steps - HOLD_STEPS - self.emitted >= target

    def chunk(self, hiddens: list[torch.Tensor], final: bool) -> np.ndarray:
        """Audio for the steps not emitted yet (all of them when final)."""
        steps = len(hiddens)
        upto = steps if final else steps - HOLD_STEPS
        if upto <= self.emitted:
            return np.zeros(0, dtype=np.float32)
        start = max(0, self.emitted - CONTEXT_STEPS)
        wav = self.model.vocode([torch.stack(hiddens[start:steps])])[0]
        begin = (self.emitted - start) * SAMPLES_PER_STEP
        end = (upto - start) * SAMPLES_PER_STEP
        new = np.array(wav[begin:end], dtype=np.float32)
        if len(self.tail) and len(new):
            n = min(len(self.tail), len(new))
            ramp = np.linspace(0.0, 1.0, n, dtype=np.float32)
            new[:n] = self.tail[:n] * (1.0 - ramp) + new[:n] * ramp
        self.tail = np.array(wav[end : end + CROSSFADE], dtype=np.float32)
        self.emitted = upto
        self.chunks.append(new)
        return new

    def audio(self) -> np.ndarray:
        return np.concatenate(self.chunks) if self.chunks else np.zeros(0, dtype=np.float32)
