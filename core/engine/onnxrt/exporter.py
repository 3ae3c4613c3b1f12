"""What makes an ONNX export, in a child process of its own: export.py starts `python -m
chattts_studio.core.engine.onnxrt.exporter ORDER` (JSON: the model's files or the fp32 export, and
the folder to write) and waits for it.

Why a child: torch's exporter leaves about 235,000 Python objects alive for good, which every later
full garbage collection walks, on the UI thread too. The child takes them with it, and a cancel
kills it at once; the price is loading the model's files again. On failure its last stderr line
starts with FAILED_MARK: the one sentence the app shows."""

import contextlib
import json
import logging
import sys
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import torch

from chattts_studio.core.engine.chattts.chat import ChatModel
from chattts_studio.core.engine.onnxrt.export import FAILED_MARK
from chattts_studio.core.engine.onnxrt.graph import DecodeStep
from chattts_studio.core.engine.onnxrt.manifest import STEP_FILE, VOCODER_FILE


def main(argv: Sequence[str]) -> int:
    order = json.loads(argv[0])
    out = Path(order["out"])
    try:
        if order["kind"] == "int8":
            quantize(Path(order["fp32"]), out)
        else:
            export_step(_load(order), out)
    except Exception as exc:  # one line for the parent; the traceback stays out of the log
        reason = str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__
        print(f"{FAILED_MARK}{reason}", file=sys.stderr, flush=True)
        return 1
    return 0


def _load(order: dict[str, Any]) -> ChatModel:
    from chattts_studio.core.weights.demo_weights import build_config

    config = build_config(order["dims"])
    return ChatModel.load(order["folder"], config, torch.device("cpu"), False, order["name"])


def export_step(model: ChatModel, out: Path) -> None:
    """torch's exporter (dynamo) over DecodeStep, batch and cache length dynamic; attention as
    ONNX Runtime's GroupQueryAttention (see graph.py); then the vocoder's graph (vocoder.py)."""
    step = DecodeStep(model.gpt, model.code_heads()).eval()
    cfg = model.gpt.config
    layers = len(step.layers)
    batch, span = 2, 8
    kv = (batch, cfg.num_key_value_heads, span, step.head_dim)
    embeds = torch.zeros(batch, cfg.hidden_size)
    pos = torch.tensor([3, 5])
    past_k = [torch.zeros(kv) for _ in range(layers)]
    past_v = [torch.zeros(kv) for _ in range(layers)]
    rows = torch.export.Dim("rows", min=1, max=4096)
    length = torch.export.Dim("length", min=2, max=65536)
    cache = {0: rows, 2: length}
    dynamic = {"embeds": {0: rows}, "pos": {0: rows}, "past_k": [cache] * layers}
    dynamic["past_v"] = [cache] * layers
    names = ["embeds", "pos"] + [f"past_k{i}" for i in range(layers)]
    names += [f"past_v{i}" for i in range(layers)]
    outputs = ["hidden", "logits"] + [f"present_k{i}" for i in range(layers)]
    outputs += [f"present_v{i}" for i in range(layers)]
    table: dict[Any, Any] = {
        torch.ops.chattts_studio.cached_attention.default: _attention_translation(cfg)
    }
    # The exporter reports its stages on stdout, where `synth -o -` writes audio (and warns
    # that the two dynamic dims share names across inputs: they are meant to).
    with torch.no_grad(), contextlib.redirect_stdout(sys.stderr), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        program = torch.onnx.export(
            step,
            (embeds, pos, past_k, past_v),
            dynamo=True,
            dynamic_shapes=dynamic,
            input_names=names,
            output_names=outputs,
            custom_translation_table=table,
            optimize=True,
            verbose=False,
        )
    if program is None:
        raise RuntimeError("torch.onnx.export returned no program")
    program.save(str(out / STEP_FILE), external_data=True)
    with contextlib.redirect_stdout(sys.stderr), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.export_vocoder(out / VOCODER_FILE)


def _attention_translation(cfg: Any) -> Callable[..., Any]:
    """graph.cached_attention as com.microsoft GroupQueryAttention (ONNX Runtime's contrib op:
    per-row sequence lengths, the cache updated in place when present and past share memory,
    as OrtStep binds them). onnxscript builds a node only from a schema the onnx package knows;
    this one is ONNX Runtime's, so it is declared here first."""
    from onnxscript import opset18 as op
    from onnxscript.values import Opset

    _declare_group_query_attention()
    msft = Opset("com.microsoft", 1)
    heads, kv_heads = cfg.num_attention_heads, cfg.num_key_value_heads

    def translate(q: Any, k: Any, v: Any, past_k: Any, past_v: Any, pos: Any, scale: float) -> Any:
        shape: Any = op.Shape(past_k)
        third: Any = op.Constant(value_int=2)
        length = op.Cast(op.Gather(shape, third), to=6)  # int32
        return msft.GroupQueryAttention(
            q,
            k,
            v,
            past_k,
            past_v,
            op.Cast(pos, to=6),  # seqlens_k: the row's past length = its position
            length,
            num_heads=heads,
            kv_num_heads=kv_heads,
            scale=scale,
            _num_outputs=3,
        )

    return translate


def _declare_group_query_attention() -> None:
    import onnx.defs

    if onnx.defs.has("GroupQueryAttention", "com.microsoft"):
        return
    param = onnx.defs.OpSchema.FormalParameter
    names = ["query", "key", "value", "past_key", "past_value"]
    inputs = [param(name, "T") for name in names]
    inputs += [param("seqlens_k", "M"), param("total_sequence_length", "M")]
    attribute = onnx.defs.OpSchema.Attribute
    kind = onnx.defs.OpSchema.AttrType
    schema = onnx.defs.OpSchema(
        "GroupQueryAttention",
        "com.microsoft",
        1,
        inputs=inputs,
        outputs=[param("output", "T"), param("present_key", "T"), param("present_value", "T")],
        type_constraints=[("T", ["tensor(float)"], ""), ("M", ["tensor(int32)"], "")],
        attributes=[
            attribute("num_heads", kind.INT, "query heads"),
            attribute("kv_num_heads", kind.INT, "key and value heads"),
            attribute("scale", kind.FLOAT, "the attention scores' scale"),
        ],
    )
    onnx.defs.register_schema(schema)


def quantize(fp32: Path, out: Path) -> None:
    """ONNX Runtime's dynamic quantization: int8 weights per output channel for every MatMul
    (the linear layers and the code heads); embeddings, norms and attention stay fp32."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    root = logging.getLogger()
    level = root.level
    root.setLevel(logging.ERROR)  # it advises pre-processing through the root logger
    try:
        quantize_dynamic(
            str(fp32),
            str(out / STEP_FILE),
            weight_type=QuantType.QInt8,
            per_channel=True,
            op_types_to_quantize=["MatMul"],
        )
    finally:
        root.setLevel(level)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
