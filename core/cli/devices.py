"""chattts-studio-cli devices: the devices, the default one marked, and what each can do."""

import argparse
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from chattts_studio.core.engine.devices import Device


def add_parser(sub: Any) -> None:
    sub.add_parser("devices")


def engines_line(device: "Device", usable: list[str]) -> str:
    """torch, and onnx with the precisions it runs here, or why it cannot run at all."""
    from chattts_studio.core.engine.engine_choice import EngineKind, engine_support
    from chattts_studio.core.engine.request import Precision

    onnx = {p: engine_support(device, Precision(p))[EngineKind.ONNX] for p in usable}
    runs = [p for p, why in onnx.items() if why is None]
    if runs:
        return f"torch, onnx ({', '.join(runs)})"
    # The same reason at every precision (not installed, not the CPU), else fp32's.
    why = onnx.get(Precision.FP32.value) or next(iter(onnx.values()), None)
    return f"torch; onnx unavailable: {why}"


def run(_args: argparse.Namespace) -> int:
    from chattts_studio.core.engine.devices import (
        cuda_status,
        default_device,
        list_devices,
        precision_support,
    )

    default = default_device()
    for device in list_devices():
        mark = "*" if device == default else " "
        if device.problem:
            print(f"{mark} {device.label}  unusable: {device.problem}")
            continue
        usable = [p.value for p, why in precision_support(device).items() if why is None]
        print(f"{mark} {device.label}  precisions: {', '.join(usable)}")
        print(f"    engines: {engines_line(device, usable)}")
    print(cuda_status())
    return 0
