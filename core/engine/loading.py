"""Putting a verified model in memory for the Engine: a fresh load through ChatTTS, or the GPT
redone in place when only the precision or engine changes; then the engine applied.
"""

import time
from collections.abc import Callable
from dataclasses import dataclass

import torch

from chattts_studio.core.engine.cancel import CancelToken
from chattts_studio.core.engine.chattts.chat import ChatModel
from chattts_studio.core.engine.devices import Device, torch_dtype
from chattts_studio.core.engine.engine_choice import EngineKind
from chattts_studio.core.engine.request import Precision
from chattts_studio.core.errors import Cancelled
from chattts_studio.core.text.numbers import NUMBER_READERS
from chattts_studio.core.weights import models

LoadProgress = Callable[[str, float], None]  # (stage, fraction 0..1)


@dataclass(frozen=True)
class LoadedModel:
    info: models.ModelInfo
    device: Device
    precision: Precision
    compiled: bool
    load_seconds: float
    # What runs the GPT's decode step (auto resolved): torch, or ONNX Runtime (onnxrt/).
    engine: EngineKind = EngineKind.TORCH


def verified_info(model: str, report: LoadProgress, cancel: CancelToken) -> models.ModelInfo:
    """The model's files checked against their hashes (demo weights built if missing)."""
    info = models.ensure(
        model,
        lambda done, total: report("verifying", done / total if total else 0.0),
        lambda: cancel.cancelled,
        log=lambda msg: report(msg, 0.0),
    )
    cancel.check()
    return info


def load_fresh(
    info: models.ModelInfo,
    target: Device,
    compile: bool,
    precision: Precision,
    kind: EngineKind,
    report: LoadProgress,
    cancel: CancelToken,
) -> ChatModel:
    """ChatTTS's load of the verified files, the engine applied; nothing is kept on failure."""
    from chattts_studio.core.weights.demo_weights import build_config

    report("loading", 0.5)
    loaded = ChatModel.load(
        str(info.folder), build_config(info.dims), target.torch_device(), compile, info.name
    )
    if cancel.cancelled:  # ChatTTS's own load cannot be interrupted; stop after it
        loaded.unload()
        raise Cancelled()
    try:
        apply_engine(loaded, info, precision, kind, report, cancel)
    except BaseException:
        loaded.unload()
        raise
    loaded.register_numbers(NUMBER_READERS)
    if target.kind == "cuda":
        torch.cuda.empty_cache()  # drop what loading left in the cache
    return loaded


def switch_in_place(
    model: ChatModel,
    info: models.ModelInfo,
    was: tuple[Precision, EngineKind],
    precision: Precision,
    kind: EngineKind,
    report: LoadProgress,
    cancel: CancelToken,
) -> None:
    """Only the precision or the engine changes (`was`: the current ones): keep what is in
    memory and redo the GPT alone (a precision switch costs one 0.8 GB read, not a load). The
    caller drops its decoders first: their caches and graphs are in the old dtype."""
    report("switching precision", 0.5)
    model.decode_step = model.vocoder_front = None
    old_precision, old_kind = was
    gpt = str(info.folder / "asset" / "gpt")
    if old_precision is not Precision.FP32 and old_kind is EngineKind.TORCH:
        model.restore_gpt(gpt)
    # From here the model is the GPT in fp32 on torch: what a failure or a cancel of the new
    # choice leaves it as, whole (a cast or a quantization stopped half-way is undone), so
    # the engine can say what runs.
    try:
        apply_engine(model, info, precision, kind, report, cancel)
    except BaseException:
        model.decode_step = model.vocoder_front = None
        if kind is EngineKind.TORCH and precision is not Precision.FP32:
            model.restore_gpt(gpt)
        raise


def apply_engine(
    model: ChatModel,
    info: models.ModelInfo,
    precision: Precision,
    kind: EngineKind,
    report: LoadProgress,
    cancel: CancelToken,
) -> None:
    """torch: the GPT in `precision`. onnx: the GPT stays fp32 in torch (the prompt's
    prefill runs there) and ONNX Runtime runs every decode step from the cached export
    (made on first use: about a minute for the full model)."""
    if kind is EngineKind.TORCH:
        apply_precision(model, precision)
        return
    from chattts_studio.core.engine.decode.text_pass import refine_with
    from chattts_studio.core.engine.onnxrt.export import ensure_export
    from chattts_studio.core.engine.onnxrt.session import OrtStep

    # Read and hashed as it was read: the sessions are made from those bytes (export.py).
    export = ensure_export(info, precision, report, cancel)
    try:
        report("starting ONNX Runtime", 0.9)
        model.decode_step = OrtStep(export.step, torch.get_num_threads())
        model.text_pass = refine_with
        model.run_vocoder_on(export.vocoder, torch.get_num_threads())
    finally:  # a failed session lets go of the mapped files at once (Windows keeps them)
        export.step.release()
        export.vocoder.release()


def apply_precision(model: ChatModel, precision: Precision) -> None:
    if precision is Precision.INT8:
        model.quantize_gpt()
    elif precision is not Precision.FP32:
        model.cast_gpt(torch_dtype(precision))


def seconds_since(started: float) -> float:
    return time.perf_counter() - started
