"""chattts-studio-cli doctor: versions, CUDA status, devices and precisions, the data folder
and the audio output, for a bug report; with --torch-build, the PyTorch build this machine
should have and the command that installs it."""

import argparse
import importlib.util
import sys
from pathlib import Path
from typing import Any

from chattts_studio.core.cli.common import EXIT_USER_ERROR, err

PLATFORMS = ("win32", "linux", "darwin")


def add_parser(sub: Any) -> None:
    parser = sub.add_parser("doctor")
    parser.add_argument(
        "--torch-build",
        action="store_true",
        help="say which PyTorch build suits this machine's NVIDIA GPU, and how to install it",
    )
    parser.add_argument(
        "--platform", choices=PLATFORMS, help="decide for this platform instead of this one"
    )
    parser.add_argument(
        "--nvidia-smi-output",
        type=Path,
        metavar="FILE",
        help="decide from this recorded output of nvidia-smi "
        "--query-gpu=name,compute_cap,driver_version --format=csv,noheader",
    )
    parser.add_argument("--json", action="store_true", help="print {build, reason, command}")


def this_platform() -> str:
    return "linux" if sys.platform.startswith("linux") else sys.platform


def torch_build(args: argparse.Namespace) -> int:
    """The chooser on this machine (or the recorded output), printed as text or JSON."""
    from chattts_studio.core.install.torch_build import choose_here

    smi_file: Path | None = args.nvidia_smi_output
    if smi_file is not None and not smi_file.is_file():
        err(f"error: {smi_file} is not a file; give a saved output of nvidia-smi.")
        return EXIT_USER_ERROR
    has_pip = importlib.util.find_spec("pip") is not None
    choice = choose_here(args.platform or this_platform(), sys.executable, has_pip, smi_file)
    if args.json:
        print(choice.as_json())
    else:
        print(f"build: {choice.build}\nreason: {choice.reason}\ncommand: {choice.command}")
    return 0


def run(args: argparse.Namespace) -> int:
    if args.torch_build:
        return torch_build(args)
    if args.platform or args.nvidia_smi_output or args.json:
        err("error: --platform, --nvidia-smi-output and --json go with --torch-build.")
        return EXIT_USER_ERROR
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
    from chattts_studio.core.audio.player import output_available

    print(f"audio output: {output_available() or 'ok'}")
    return 0
