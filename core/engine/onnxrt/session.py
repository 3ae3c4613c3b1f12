"""ONNX Runtime's session of the exported decode step (export.py), bound by address so the rows'
cache is written in place. Sessions are made from the bytes export.py read and hashed, so what
runs is what was checked.
"""

from pathlib import Path
from typing import Any

import numpy as np
import torch

from chattts_studio.core.engine.onnxrt.manifest import Graph


def cpu_options(threads: int) -> Any:
    """Session options for a graph the decode loop calls (the step, the vocoder's)."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = max(1, threads)
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.log_severity_level = 3  # errors only: it warns about unused initializers
    # Its threads sleep when a call ends instead of spinning: between steps torch samples
    # (and vocodes) on the same cores. Spinning hurts the automatic batch more than it helps a
    # lone row (docs/engines.md).
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return options


def open_session(source: Path | Graph, options: Any) -> Any:
    """A CPU session of an .onnx file, or of a Graph export.py read and checked: made from its
    bytes, its external data given from memory; the Graph lets go of them after (ONNX Runtime
    has copied what it keeps)."""
    import onnxruntime as ort

    cpu = ["CPUExecutionProvider"]
    if isinstance(source, Path):
        return ort.InferenceSession(str(source), options, providers=cpu)
    names = list(source.data)
    buffers = [source.data[name] for name in names]
    try:
        if names:
            options.add_external_initializers_from_files_in_memory(
                names, buffers, [len(b) for b in buffers]
            )
        session = ort.InferenceSession(source.model, options, providers=cpu)
    finally:
        del buffers
        source.release()
    # Its Python wrapper keeps the model's bytes to make the session again on another provider;
    # on the CPU it never does, and for int8 (one file) that would be the weights again.
    session._model_bytes = None
    return session


class OrtStep:
    def __init__(self, source: Path | Graph, threads: int) -> None:
        path = source if isinstance(source, Path) else source.path
        self.path = path
        self.precision = path.parent.name  # fp32 or int8 (export.py's folders)
        self.session = open_session(source, cpu_options(threads))
        names = [i.name for i in self.session.get_inputs()]
        self.layers = sum(1 for n in names if n.startswith("past_k"))
        shapes = {o.name: o.shape for o in self.session.get_outputs()}
        self.hidden_size = int(shapes["hidden"][1])
        self.logit_width = int(shapes["logits"][1])

    def run(
        self,
        embeds: torch.Tensor,
        pos: torch.Tensor,
        past_k: list[torch.Tensor],
        past_v: list[torch.Tensor],
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """embeds [B, hidden] fp32 (the rows' input embeddings) and pos [B] int64;
        past_k/past_v per layer [B, kv_heads, M, D] fp32 contiguous CPU tensors, each row's new
        key and value written into them at its position -> hidden [B, hidden], logits
        [B, num_vq * num_codes]."""
        batch = int(embeds.shape[0])
        binding = self.session.io_binding()
        binding.bind_cpu_input("embeds", embeds.float().contiguous().numpy())
        binding.bind_cpu_input("pos", pos.contiguous().numpy())
        for i in range(self.layers):
            for kind, cache in (("k", past_k[i]), ("v", past_v[i])):
                if not cache.is_contiguous() or cache.dtype != torch.float32:
                    raise ValueError("the cache must be contiguous fp32 to be bound in place")
                shape = list(cache.shape)
                address = cache.data_ptr()
                binding.bind_input(f"past_{kind}{i}", "cpu", 0, np.float32, shape, address)
                binding.bind_output(f"present_{kind}{i}", "cpu", 0, np.float32, shape, address)
        hidden = torch.empty(batch, self.hidden_size)
        logits = torch.empty(batch, self.logit_width)
        for name, out in (("hidden", hidden), ("logits", logits)):
            binding.bind_output(name, "cpu", 0, np.float32, list(out.shape), out.data_ptr())
        self.session.run_with_iobinding(binding)
        return hidden, logits
