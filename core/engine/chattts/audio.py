"""ChatModel's vocoder: a segment's GPT hidden states to audio (ChatTTS's DVAE decoder and
Vocos), in torch or, on the CPU with the onnx engine, through ONNX Runtime up to the ISTFT."""

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from chattts_studio.core.engine.chattts.parts import ChatParts
from chattts_studio.core.engine.decode import host_reads

if TYPE_CHECKING:
    from chattts_studio.core.engine.onnxrt.vocoder import OrtVocoder


class ChatVocoder(ChatParts):
    # The DVAE decoder and Vocos (up to its ISTFT) in ONNX Runtime on the CPU (loading.py).
    vocoder_front: "OrtVocoder | None"
    # Told each call's GPT steps and wall seconds: the live panel prices the audio still to
    # make with it (Engine sets it to its LiveMetrics.vocoded).
    on_vocoded: Callable[[int, float], None] | None = None

    def vocode(self, hiddens: list[torch.Tensor]) -> list[np.ndarray]:
        """Decoder + Vocos for several segments' hidden states [steps, hidden] in one call.
        ChatTTS pads them to the longest with zeros, which changes the audio near the end of a
        shorter one: callers batch only equal lengths when the audio must match exactly."""
        if not hiddens:
            return []
        started = time.perf_counter()
        wavs = host_reads.audio(self.vocode_on_device(hiddens))
        if self.on_vocoded is not None:
            self.on_vocoded(sum(int(h.shape[0]) for h in hiddens), time.perf_counter() - started)
        return [wavs[i] for i in range(len(hiddens))]

    @torch.inference_mode()
    def vocode_on_device(self, hiddens: list[torch.Tensor]) -> torch.Tensor:
        """`vocode` without the read back: waveforms [n, samples] where Vocos ran. ChatTTS's
        `_decode_to_wavs` step for step (the same bits: tests/core/engine/test_core_engine.py),
        whose last step reads the audio back itself; here that read is host_reads.audio, the
        one seam the fake-CUDA tests feed."""
        chat = self._chat
        # On the vocoder's device (on MPS the GPT, and so the hidden states, stay on the CPU).
        device = self.device
        longest = max(int(h.shape[0]) for h in hiddens)
        batch = torch.zeros(
            (len(hiddens), int(hiddens[0].shape[1]), longest), dtype=hiddens[0].dtype, device=device
        )
        for i, h in enumerate(hiddens):
            batch[i].narrow(1, 0, int(h.shape[0])).copy_(h.permute(1, 0))
        if self.vocoder_front is not None and device.type == "cpu":
            return self.vocoder_front.decode(batch)
        mel = chat.decoder(batch)
        if device.type in ("mps", "npu"):  # ChatTTS runs Vocos on the CPU there
            mel = mel.cpu()
        wavs: torch.Tensor = chat.vocos.decode(mel)
        return wavs

    def export_vocoder(self, path: Any) -> None:
        """The DVAE decoder and Vocos up to its ISTFT as an ONNX graph (onnxrt/vocoder.py)."""
        from chattts_studio.core.engine.onnxrt.vocoder import export_front

        export_front(self._chat.decoder, self._chat.vocos, self.hidden_size, path)

    def run_vocoder_on(self, path: Any, threads: int) -> None:
        """From now on the vocoder's graph at `path` runs in ONNX Runtime (see above)."""
        from chattts_studio.core.engine.onnxrt.vocoder import OrtVocoder

        self.vocoder_front = OrtVocoder(path, self._chat.vocos.head, threads)
