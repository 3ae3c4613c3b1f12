"""Puts the chosen PyTorch build into an environment pip filled from the lock, and checks it. Which
build, and the exit status: docs/install.md.

    python -m chattts_studio.core.install.ensure_torch --python .venv/bin/python [--dry-run]
"""

import argparse
import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path

from chattts_studio.core.install import plan, torch_build, torch_env

ROOT = Path(__file__).resolve().parents[2]


def _platform() -> str:
    return "linux" if sys.platform.startswith("linux") else sys.platform


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m chattts_studio.core.install.ensure_torch",
        description=(__doc__ or "").splitlines()[0],
    )
    parser.add_argument("--python", type=Path, required=True, help="the environment's Python")
    parser.add_argument("--dry-run", action="store_true", help="say what it would do, do nothing")
    parser.add_argument(
        "--nvidia-smi-output", type=Path, help="decide from this recorded nvidia-smi output"
    )
    parser.add_argument("--platform", choices=("linux", "win32", "darwin"), help=argparse.SUPPRESS)
    parser.add_argument(
        "--lock", type=Path, default=ROOT / "constraints.txt", help="the lock (constraints.txt)"
    )
    return parser


def _has_pip(python: Path) -> bool:
    sites = torch_env.site_packages(python)
    if sites:
        return any((site / "pip").is_dir() for site in sites)
    return importlib.util.find_spec("pip") is not None


def swap_command(
    python: Path, build: str, platform: str, lock: Path, has_pip: bool = True
) -> list[str]:
    """The command that replaces the environment's torch and torchaudio with `build`: pip's
    (uv's where the environment has no pip). An exact local tag (+cu126) makes pip replace any
    other build; PyPI's own build has none, so it is forced (--force-reinstall, under the lock)."""
    from_pypi = build == plan.LOCK_BUILD[platform]
    if from_pypi:
        packages = [f"torch=={torch_build.TORCH}", f"torchaudio=={torch_build.TORCHAUDIO}"]
        source = ["-c", str(lock)]
    else:
        packages = [
            f"torch=={torch_build.TORCH}+{build}",
            f"torchaudio=={torch_build.TORCHAUDIO}+{build}",
        ]
        source = ["--index-url", torch_build.index_url(build)]
    if has_pip:
        force = ["--force-reinstall"] if from_pypi else []
        return [str(python), "-m", "pip", "install", *force, *packages, *source]
    uv = shutil.which("uv", path=str(python.parent)) or shutil.which("uv") or "uv"
    reinstall = ["--reinstall-package", "torch", "--reinstall-package", "torchaudio"]
    source = [torch_build.UV_INDEX_FLAG if s == "--index-url" else s for s in source]
    return [uv, "pip", "install", "--python", str(python), *reinstall, *packages, *source]


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    python: Path = args.python.absolute()  # not resolved: the link is what marks the venv
    platform: str = args.platform or _platform()
    if not python.is_file():
        print(f"{python} does not exist; make the environment first.", file=sys.stderr)
        return 2
    has_pip = _has_pip(python)
    try:
        choice = torch_build.choose_here(platform, str(python), has_pip, args.nvidia_smi_output)
    except torch_build.SmiFileError as exc:
        print(exc, file=sys.stderr)
        return 2
    installed = torch_env.read_installed(python)
    if torch_env.is_build(installed, choice.build) and installed is not None:
        print(f"PyTorch build: {choice.build}, {installed.describe()}, is installed.")
        return 0
    if choice.build == torch_build.CPU and installed is not None:
        print(_keeps(installed, choice))
        return 0
    build = plan.LOCK_BUILD[platform] if choice.build == torch_build.CPU else choice.build
    command = swap_command(python, build, platform, args.lock, has_pip)
    now = installed.describe() if installed is not None else "no torch"
    print(f"PyTorch build: {build}. {choice.reason}")
    print(f"The environment has {now}; installing the {build} build:")
    print("> " + torch_build.join_command(command, platform), flush=True)
    if args.dry_run:
        return 0
    flag = next((f for f in ("--index-url", torch_build.UV_INDEX_FLAG) if f in command), None)
    if flag is not None:
        url = command[command.index(flag) + 1]
        reason = torch_build.unreachable(url)
        if reason is not None:
            print(
                f"PyTorch's index {url} cannot be reached ({reason}), so the {build} build "
                f"could not be installed and the environment keeps {now}.",
                file=sys.stderr,
            )
            return 1
    code = subprocess.run(command, check=False).returncode
    if code != 0:
        print(
            f"Installing the {build} build failed (exit status {code}; what it printed above "
            f"says why), and the environment keeps {now}.",
            file=sys.stderr,
        )
        return 1
    try:
        found = torch_env.verify(python, build, torch_build.join_command(command, platform))
    except torch_env.CheckFailed as exc:
        print(exc, file=sys.stderr)
        return 1
    print(f"Checked: {found.describe()} (torch.version.cuda: {found.cuda}).")
    return 0


def _keeps(installed: torch_env.Installed, choice: torch_build.Choice) -> str:
    """The sentence for a machine that gets no CUDA build: the installed torch stays."""
    if not choice.gpus and not choice.smi_failed:
        return (
            f"No NVIDIA GPU was found, so {installed.describe()} stays and runs on the CPU; "
            f"`{choice.command}` would install the CPU-only build instead."
        )
    return (
        f"{choice.reason} {installed.describe()} stays and runs on the CPU; `{choice.command}` "
        f"would install the CPU-only build instead."
    )


if __name__ == "__main__":
    sys.exit(main())
