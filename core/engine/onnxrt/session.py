"""ONNX Runtime's session of the exported decode step (export.py), as the decoder calls it.

The rows' cached keys and values go in as numpy views of the decoder's own torch tensors: on
the CPU ONNX Runtime reads them where they lie (no copy of the cache per step). Threads: as
many as torch uses, so that `--threads` means the same for both engines.
"""

from pathlib import Path

import numpy as np
import torch


class OrtStep:
    def __init__(self, path: Path, threads: int) -> None:
        import onnxruntime as ort

        options = ort.SessionOptions()
        options.intra_op_num_threads = max(1, threads)
        options.inter_op_num_threads = 1
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.log_severity_level = 3  # errors only: it warns about unused initializers
        self.path = path
        self.precision = path.parent.name  # fp32 or int8 (export.py's folders)
        self.session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        names = [i.name for i in self.session.get_inputs()]
        self.layers = sum(1 for n in names if n.startswith("past_k"))

    def run(
        self,
        codes: torch.Tensor,
        pos: torch.Tensor,
        past_k: list[torch.Tensor],
        past_v: list[torch.Tensor],
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        """codes [B, num_vq] and pos [B] int64; past_k/past_v per layer [B, kv_heads, M, D]
        fp32, contiguous -> hidden [B, hidden], logits [B, num_vq * num_codes], new keys and
        values [B, layers, kv_heads, D]."""
        feeds: dict[str, np.ndarray] = {
            "codes": codes.contiguous().numpy(),
            "pos": pos.contiguous().numpy(),
        }
        for i in range(self.layers):
            feeds[f"past_k{i}"] = past_k[i].numpy()
            feeds[f"past_v{i}"] = past_v[i].numpy()
        hidden, logits, new_k, new_v = self.session.run(None, feeds)
        return (
            torch.from_numpy(hidden),
            torch.from_numpy(logits),
            torch.from_numpy(new_k),
            torch.from_numpy(new_v),
        )
