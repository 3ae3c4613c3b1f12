"""Early audio: vocode a segment while its GPT steps still come, decoding new frames only.

The vocoder is convolutional: a step's audio depends on its neighbours up to a fixed field. Each
chunk is decoded with `CONTEXT_STEPS` of left context and holds back its last `HOLD_STEPS` until
their right context arrives, so the chunks join, without a cross-fade, into the whole-segment audio
(to float rounding). Chunk sizes depend on the segment's steps only (`chunk_steps`), so its audio
is the same whoever streams it. The field and the constants: docs/architecture.md, "Streamed
chunks"."""

from dataclasses import dataclass

import numpy as np
import torch

from chattts_studio.core import SAMPLES_PER_STEP
from chattts_studio.core.engine.chattts.chat import ChatModel

RECEPTIVE_STEPS = 52  # the architectural bound above, each side
AUDIBLE_STEPS = 14  # the measured reach above half a 16-bit LSB of the peak (11-12) + margin
FIRST_CHUNK_STEPS = 8  # the first chunk's new steps: first audio after this many + HOLD
CHUNK_STEPS = 24  # new steps of the second chunk, the least of any later one
MAX_CHUNK_STEPS = 96  # the most new steps of a chunk (2 s of audio)
CONTEXT_STEPS = 24  # left context decoded again (not emitted) per chunk
HOLD_STEPS = 16  # right context: steps held back until more arrive
FIRST_AUDIO_STEPS = FIRST_CHUNK_STEPS + HOLD_STEPS  # a segment's steps before its first chunk


@dataclass(frozen=True)
class Window:
    """One chunk's steps to vocode (left context included) and its new samples' slice."""

    hidden: torch.Tensor  # [steps, hidden]: a copy (a decoder may reuse its step's buffer)
    begin: int
    end: int


def chunk_steps(emitted: int) -> int:
    """New steps of the next chunk once `emitted` steps are out (see the module's note)."""
    if emitted == 0:
        return FIRST_CHUNK_STEPS
    return min(MAX_CHUNK_STEPS, max(CHUNK_STEPS, emitted))


class ChunkVocoder:
    """Turns one segment's growing list of GPT hidden states into successive audio chunks."""

    def __init__(self, model: ChatModel) -> None:
        self.model = model
        self.emitted = 0  # steps already turned into audio
        self.chunks: list[np.ndarray] = []

    def ready(self, steps: int) -> bool:
        return steps - HOLD_STEPS - self.emitted >= chunk_steps(self.emitted)

    def chunk(self, hiddens: list[torch.Tensor], final: bool) -> np.ndarray:
        """Audio for the steps not emitted yet (all of them when final)."""
        window = self.plan(hiddens, final)
        return np.zeros(0, dtype=np.float32) if window is None else self.render(window)

    def plan(self, hiddens: list[torch.Tensor], final: bool) -> Window | None:
        """The next chunk's window, the schedule advanced now (None: nothing new yet); its
        audio comes from render(), which may run later on another thread (the Batcher's
        vocoder thread): windows are rendered in the order they were planned."""
        steps = len(hiddens)
        upto = steps if final else steps - HOLD_STEPS
        if upto <= self.emitted:
            return None
        start = max(0, self.emitted - CONTEXT_STEPS)
        begin = (self.emitted - start) * SAMPLES_PER_STEP
        self.emitted = upto
        return Window(torch.stack(hiddens[start:steps]), begin, (upto - start) * SAMPLES_PER_STEP)

    def render(self, window: Window) -> np.ndarray:
        return self.keep(window, self.model.vocode([window.hidden])[0])

    def keep(self, window: Window, wav: np.ndarray) -> np.ndarray:
        """The window's new samples of its vocoded audio `wav`, kept as the next chunk (render's
        second half, for audio vocoded elsewhere: the Batcher's side stream on CUDA)."""
        new = np.array(wav[window.begin : window.end], dtype=np.float32)
        self.chunks.append(new)
        return new

    def audio(self) -> np.ndarray:
        return np.concatenate(self.chunks) if self.chunks else np.zeros(0, dtype=np.float32)
