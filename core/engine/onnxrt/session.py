"""ONNX Runtime's session of the exported decode step (export.py), as the decoder calls it.

Everything is bound by address (IOBinding): the rows' cache is both the graph's past input and its
present output, so GroupQueryAttention writes each row's new key and value where the decoder's
torch tensors lie. It uses as many threads as torch. The first NaN or infinity a session gives has
its export's files hashed again (export.recheck), so a rotten export is made again at the next load
instead of failing every synthesis."""

from pathlib import Path
from typing import Any

import numpy as np
import torch

from chattts_studio.core.engine.onnxrt.export import recheck


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


class OrtStep:
    def __init__(self, path: Path, threads: int) -> None:
        import onnxruntime as ort

        options = cpu_options(threads)
        self.path = path
        self.precision = path.parent.name  # fp32 or int8 (export.py's folders)
        self.session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        names = [i.name for i in self.session.get_inputs()]
        self.layers = sum(1 for n in names if n.startswith("past_k"))
        shapes = {o.name: o.shape for o in self.session.get_outputs()}
        self.hidden_size = int(shapes["hidden"][1])
        self.logit_width = int(shapes["logits"][1])
        # Its files hashed again after its first NaN or infinity (export.recheck): once a
        # session, since a text's own NaN would otherwise cost a read of the weights each time.
        self.rechecked = False

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
        if not self.rechecked and not (
            bool(logits.isfinite().all()) and bool(hidden.isfinite().all())
        ):
            self.rechecked = True
            recheck(self.path.parent)  # raises when the export is damaged
        return hidden, logits
