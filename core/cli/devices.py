"""chattts-studio-cli devices: the devices, the default one marked, and what each can do."""

import argparse
from typing import Any


def add_parser(sub: Any) -> None:
    sub.add_parser("devices")


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
    print(cuda_status())
    return 0
