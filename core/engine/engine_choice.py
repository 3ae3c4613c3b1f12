"""Which engine runs the GPT's decode step (torch, onnx or auto), and why an engine cannot be
used. auto picks onnx on the CPU where ONNX Runtime runs the precision, else torch; see
docs/engines.md.
"""

import importlib.util
from enum import StrEnum

from chattts_studio.core.engine.devices import Device
from chattts_studio.core.engine.request import Precision
from chattts_studio.core.errors import DeviceError
from chattts_studio.core.messages import QT_TRANSLATE_NOOP, Sentence

INSTALL_HINT = "pip install 'chattts-studio[onnx]'"


class EngineKind(StrEnum):
    AUTO = "auto"
    TORCH = "torch"
    ONNX = "onnx"


def onnx_missing() -> str | None:
    """Why ONNX Runtime cannot be used in this installation (a Sentence), or None. Cheap: looks
    for the packages without importing them."""
    missing = [
        name
        for name in ("onnxruntime", "onnx", "onnxscript")
        if importlib.util.find_spec(name) is None
    ]
    if not missing:
        return None
    return Sentence(
        QT_TRANSLATE_NOOP(
            "core", "ONNX Runtime is not installed ({missing} missing); install it with {hint}"
        ),
        missing=", ".join(missing),
        hint=INSTALL_HINT,
    )


def engine_support(device: Device, precision: Precision) -> dict[EngineKind, str | None]:
    """For each engine: None when it can run on `device` at `precision`, else the reason (a
    Sentence) it cannot. auto can always run (it falls back to torch)."""
    support: dict[EngineKind, str | None] = {EngineKind.AUTO: None, EngineKind.TORCH: None}
    if device.kind != "cpu":
        support[EngineKind.ONNX] = Sentence(
            QT_TRANSLATE_NOOP(
                "core",
                "the ONNX engine runs on the CPU in this app; on {device} the torch engine runs",
            ),
            device=device.id,
        )
    elif precision not in (Precision.FP32, Precision.INT8):
        support[EngineKind.ONNX] = Sentence(
            QT_TRANSLATE_NOOP("core", "the ONNX engine runs fp32 or int8, not {precision}"),
            precision=precision.value,
        )
    else:
        support[EngineKind.ONNX] = onnx_missing()
    return support


def check_engine(device: Device, precision: Precision, engine: str | EngineKind) -> EngineKind:
    """The engine that will run (auto resolved), or DeviceError with one sentence."""
    try:
        chosen = EngineKind(str(engine).lower())
    except ValueError:
        raise DeviceError(
            Sentence(
                QT_TRANSLATE_NOOP("core", "Unknown engine '{engine}'; choose auto, torch or onnx."),
                engine=engine,
            )
        ) from None
    support = engine_support(device, precision)
    if chosen is EngineKind.AUTO:
        return EngineKind.ONNX if support[EngineKind.ONNX] is None else EngineKind.TORCH
    reason = support[chosen]
    if reason:
        raise DeviceError(
            Sentence(
                QT_TRANSLATE_NOOP("core", "The {engine} engine cannot be used: {reason}."),
                engine=chosen.value,
                reason=reason,
            )
        )
    return chosen
