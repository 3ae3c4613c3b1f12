"""Early audio: vocode a segment while its GPT steps are still coming, new frames only.

The Decoder and Vocos are convolutional, so the audio of one step depends on the hidden states
of its neighbours, up to a fixed receptive field. Each chunk is decoded from `CONTEXT_STEPS`
steps before the first new one, and the last `HOLD_STEPS` steps are held back until their right
context has arrived. Both cover the part of the receptive field that reaches above float32's
resolution (below), so every chunk is the matching slice of a whole-segment decode to about
120 dB: the joins need no cross-fade and the concatenated chunks are the segment's audio.
Cost per chunk: (CONTEXT + new + HOLD) steps of decoder+vocoder, never the whole prefix again
(stock streaming re-decodes it every time). Chunks grow as the audio out grows (each as long
as what is out already, from CHUNK_STEPS up to MAX_CHUNK_STEPS, as CosyVoice's streaming hop
grows): a listener then holds more audio than the next chunk takes to make whenever the decode
runs faster than real time, while the steps decoded twice fall from 2.4 to 1.8 times a
136-step segment's (the vocoder was a third of the server's time with 16 clients on the CPU).
The schedule depends on the segment's steps only, so a segment's chunks, and its audio, are
the same whoever streams it.

Receptive field of `ChatModel.vocode`, in GPT steps (1 step = 2 mel frames = 512 samples):
- Architectural bound (ChatTTS 0.2.5 Config, the real and demo-full dimensions), in mel frames
  each side: Decoder conv_in 2 x kernel 3 (+2), 12 ConvNeXt blocks of kernel 7, dilation 2
  (+72), out_conv kernel 3 (+1); Vocos embed kernel 7 (+3), 8 blocks of kernel 7 (+24); ISTFT
  n_fft 1024 / hop 256 (a sample lies under 4 frames: +2). 104 frames = 52 steps each side.
- Measured on demo-full (tests/test_streaming.py re-measures it; run it as a script to print
  it): perturbing the middle step of 128-200 random steps (randn * 0.5) changes the audio of
  the steps 19-20 before it and 19-22 after it (by the draw) at all, and 7 each side above
  1e-6 of the peak: an output step depends on up to 22 steps on its left (CONTEXT must cover
  them) and 20 on its right (HOLD must). Random init leaves the Decoder's blocks at layer scale
  1e-6, nearly the identity; with them switched on (layer scale 0.1, as a trained model has
  them) the change reaches 51-52 steps each side: the bound, short of it only where the
  outermost taps fall under float32 resolution.
How far a step's influence matters, measured with the blocks switched on (4 draws): above
1e-4 of the peak it reaches 9-10 steps each side, above 1e-5 11-12, above 1e-6 (-120 dB)
13-14; past that the change stops falling and sits at a plateau of 4-8e-7 of the peak out to
the bound, which is float32 rounding, not the network (it moves with the machine's kernels:
a clean machine measured 28 steps at 1e-6). What can reach a file is what counts: half a
16-bit LSB at full scale (1.5e-5 of the peak) is reached 11-12 steps away, and AUDIBLE_STEPS
keeps 14 as a margin. HOLD 16 and CONTEXT 24 keep every join exact to float rounding on these
weights (tests/test_streaming.py checks >= 40 dB at every join, measures the field again and
fails if it outgrows the constants). Holding the whole bound (52 steps) would have delayed
first audio to 64 steps for nothing measurable. The official weights could not be measured
here: the same test's helpers do it once they are.

First audio comes after FIRST_CHUNK_STEPS + HOLD_STEPS = 24 GPT steps: about 1.3 s on the
CPU at batch 1 (19 steps/s, demo-full fp32), about 26 ms on a GPU at 940 steps/s."""

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
