"""The vocoder through ONNX Runtime: DVAE decoder, Vocos backbone and head's linear layer as one
exported graph (export.py), the ISTFT in torch. Faster than torch once the GPT's steps are batched;
see docs/performance.md.
"""

import copy
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import torch
from torch import nn

if TYPE_CHECKING:
    from chattts_studio.core.engine.onnxrt.manifest import Graph


class VocoderFront(nn.Module):
    """hidden states [n, hidden, steps] -> Vocos head's linear output [n, frames, n_fft + 2]."""

    def __init__(self, decoder: Any, vocos: Any) -> None:
        super().__init__()
        # Copies whose weights are ordinary tensors: the loaded ones may be inference tensors,
        # which torch.export cannot trace.
        self.decoder = _plain(decoder)
        self.backbone = _plain(vocos.backbone)
        self.out = _plain(vocos.head.out)

    def forward(self, hidden: torch.Tensor) -> torch.Tensor:
        out: torch.Tensor = self.out(self.backbone(self.decoder(hidden)))
        return out


def _plain(module: Any) -> Any:
    module = copy.deepcopy(module).eval()
    for part in module.modules():
        for name, param in list(part._parameters.items()):
            if param is not None:
                part._parameters[name] = nn.Parameter(param.detach().clone(), requires_grad=False)
        for name, buffer in list(part._buffers.items()):
            if buffer is not None:
                part._buffers[name] = buffer.clone()
    return module


def export_front(decoder: Any, vocos: Any, hidden_size: int, path: Path) -> None:
    """Writes the graph to `path` (weights beside it); batch and steps dynamic."""
    front = VocoderFront(decoder, vocos)
    sample = torch.zeros(2, hidden_size, 24)
    rows = torch.export.Dim("rows", min=1, max=4096)
    steps = torch.export.Dim("steps", min=2, max=65536)
    with torch.no_grad():
        program = torch.onnx.export(
            front,
            (sample,),
            dynamo=True,
            dynamic_shapes=({0: rows, 2: steps},),
            input_names=["hidden"],
            output_names=["spectrum"],
            optimize=True,
            verbose=False,
        )
    if program is None:
        raise RuntimeError("torch.onnx.export returned no vocoder program")
    program.save(str(path), external_data=True)


class OrtVocoder:
    """The session of the exported front (a Graph export.py read and checked, or a file), and
    the head's rest in torch (`head`: Vocos's ISTFTHead, whose `istft` is used as it is)."""

    def __init__(self, source: "Path | Graph", head: Any, threads: int) -> None:
        from chattts_studio.core.engine.onnxrt.session import cpu_options, open_session

        self.path = source if isinstance(source, Path) else source.path
        self.session = open_session(source, cpu_options(threads))
        self.head = head

    def decode(self, hidden: torch.Tensor) -> torch.Tensor:
        """hidden [n, hidden, steps] fp32 CPU -> waveforms [n, samples], as Vocos.decode
        after the DVAE decoder (ISTFTHead.forward's steps after its linear layer)."""
        array = hidden.detach().float().contiguous().numpy()
        spectrum = torch.from_numpy(np.asarray(self.session.run(None, {"hidden": array})[0]))
        x = spectrum.transpose(1, 2)
        mag, phase = x.chunk(2, dim=1)
        mag = torch.clip(torch.exp(mag), max=1e2)
        complex_spectrum = mag * (torch.cos(phase) + 1j * torch.sin(phase))
        audio: torch.Tensor = self.head.istft(complex_spectrum)
        return audio
