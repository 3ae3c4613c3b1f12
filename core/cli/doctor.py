"""chattts-studio-cli doctor: versions, CUDA status, devices and precisions, the data folder
and the audio output, for a bug report."""

import argparse
from typing import Any


def add_parser(sub: Any) -> None:
    sub.add_parser("doctor")


def run(_args: argparse.Namespace) -> int:
    import platform

    import torch

    from chattts_studio.core import paths
    from chattts_studio.core.cli.devices import engines_line
    from chattts_studio.core.engine.devices import cuda_status, list_devices, precision_support

    print(f"python {platform.python_version()} on {platform.platform()}")
    print(f"torch {torch.__version__} (CUDA build: {torch.version.cuda or 'none, CPU only'})")
    try:
        from importlib.metadata import version

        print(f"chattts {version('chattts')}, torchaudio {version('torchaudio')}")
    except Exception:
        pass
    print(cuda_status())
    for device in list_devices():
        print(f"device {device.label}")
        if device.problem:
            print(f"    unusable: {device.problem}")
            continue
        for precision, why in precision_support(device).items():
            print(f"    {precision.value}: {'ok' if why is None else why}")
        usable = [p.value for p, why in precision_support(device).items() if why is None]
        print(f"    engines: {engines_line(device, usable)}")
    print(f"data folder {paths.data_dir()}")
    from chattts_studio.core.audio.output import output_available

    print(f"audio output: {output_available() or 'ok'}")
    return 0
