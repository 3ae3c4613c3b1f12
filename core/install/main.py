"""The installer: checks the machine, picks the torch build, installs the app into the
checkout's .venv with uv and the lock (replacing a torch of another build), checks that the
environment's torch is the chosen build, adds a launcher, and says how to run and uninstall.

Run by resources/install/install.ps1 (Windows) and install.sh (macOS, Linux) through
bootstrap.py; `--dry-run` prints the plan and changes nothing. A user's mistake (a bad saved
nvidia-smi output, a folder it cannot write, PyTorch's index out of reach) is one sentence on
stderr and exit status 2, before anything is installed.
"""

import argparse
import dataclasses
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

from chattts_studio.core.install import plan, support, torch_build, torch_env

DATA_FOLDERS = {
    "win32": r"%LOCALAPPDATA%\chattts-studio",
    "darwin": "~/Library/Application Support/chattts-studio",
    "linux": "~/.local/share/chattts-studio",
}


def _platform() -> str:
    return "linux" if sys.platform.startswith("linux") else sys.platform


def _requires_python(root: Path) -> str:
    with open(root / "pyproject.toml", "rb") as handle:
        return str(tomllib.load(handle)["project"]["requires-python"])


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="install", description=__doc__.splitlines()[0])
    parser.add_argument("--dry-run", action="store_true", help="print the plan, change nothing")
    parser.add_argument(
        "--nvidia-smi-output", type=Path, help="decide from this recorded nvidia-smi output"
    )
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parents[2])
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    root: Path = args.root.resolve()
    plat = _platform()
    try:
        requires_python = _requires_python(root)
    except (OSError, KeyError, tomllib.TOMLDecodeError):
        print(
            f"{root} is not ChatTTS Studio's folder (no readable pyproject.toml).", file=sys.stderr
        )
        return 2
    problem = support.unsupported(
        plat, platform.machine(), platform.mac_ver()[0], sys.version_info[:2], requires_python
    )
    if problem:
        print(problem, file=sys.stderr)
        return 2
    layout = plan.Layout(root, plat)
    try:
        choice = torch_build.choose_here(plat, str(layout.python), False, args.nvidia_smi_output)
    except torch_build.SmiFileError as exc:
        print(exc, file=sys.stderr)
        return 2
    print(f"PyTorch build: {choice.build}. {choice.reason}")
    installed = torch_env.read_installed(layout.python) if layout.python.exists() else None
    if installed is not None and not torch_env.is_build(installed, choice.build):
        print(f"The environment has {installed.describe()}; the {choice.build} build replaces it.")
    uv = os.environ.get("UV") or shutil.which("uv") or "uv"
    steps = plan.commands(layout, choice.build, sys.executable, uv, installed)
    out_of_reach = _unreachable_index(steps, choice.build)
    if out_of_reach is not None and plat == "linux" and choice.build == torch_build.CPU:
        # PyPI's Linux build runs on the CPU too: larger, but from the index that answers.
        pypi_build = plan.LOCK_BUILD[plat]
        print(
            f"PyTorch's index cannot be reached, so PyPI's build ({pypi_build}, which runs on "
            f"the CPU too, with about 3 GB of CUDA libraries) is installed instead."
        )
        choice = dataclasses.replace(choice, build=pypi_build)
        steps = plan.commands(layout, choice.build, sys.executable, uv, installed)
        out_of_reach = None
    if args.dry_run:
        for step in steps:
            print(torch_build.join_command(step, plat))
        if out_of_reach is not None:
            print(out_of_reach, file=sys.stderr)
        return 0
    problem = _unwritable(layout) or out_of_reach
    if problem:
        print(problem, file=sys.stderr)
        return 2
    for step in steps:
        if step[1:2] == ["pip"] and "-c" in step:
            layout.build_lock.write_text(
                plan.lock_for(layout.lock.read_text(encoding="utf-8"), choice.build, plat),
                encoding="utf-8",
            )
        print("> " + torch_build.join_command(step, plat), flush=True)
        code = subprocess.run(step, check=False).returncode
        if code != 0:
            print(
                f"This step failed (exit status {code}); what it printed above says why. Fix "
                f"that and run the installer again: it continues where it stopped.",
                file=sys.stderr,
            )
            return code
    command = torch_build.install_command(choice.build, str(layout.python), plat, has_pip=False)
    try:
        found = torch_env.verify(layout.python, choice.build, command)
    except torch_env.CheckFailed as exc:
        print(exc, file=sys.stderr)
        return 1
    print(f"Checked: {found.describe()} (torch.version.cuda: {found.cuda}).")
    launcher = _add_launcher(layout, root)
    print(f"\n{plan.APP_NAME} is installed. Start it with: {layout.app}")
    if launcher is not None:
        print(f"or from {launcher}.")
    print(f"Your models, speakers and settings live in {DATA_FOLDERS[plat]}.")
    print("To uninstall: " + "; ".join(plan.uninstall_steps(layout, launcher)) + ".")
    return 0


def _unwritable(layout: plan.Layout) -> str | None:
    """One sentence when the installer cannot write the environment (a read-only folder, or
    one of another user), checked before anything is made."""
    for folder in (layout.root, layout.venv):
        if not folder.is_dir():
            continue
        try:
            with tempfile.TemporaryFile(dir=folder):
                pass
        except OSError as exc:
            return (
                f"The installer cannot write to {folder} ({exc.strerror or exc}); copy the "
                f"folder somewhere you can write to, or make it writable, and run it again."
            )
    return None


def _unreachable_index(steps: list[list[str]], build: str) -> str | None:
    """One sentence when PyTorch's index, which the torch step needs, cannot be reached, checked
    before anything is installed."""
    for step in steps:
        if torch_build.UV_INDEX_FLAG not in step:
            continue
        url = step[step.index(torch_build.UV_INDEX_FLAG) + 1]
        reason = torch_build.unreachable(url)
        if reason is not None:
            return (
                f"PyTorch's index {url} cannot be reached ({reason}), and the {build} build "
                f"comes only from there; nothing was installed: connect to it (or name a mirror "
                f"in {torch_build.INDEX_VARIABLE}) and run the installer again."
            )
    return None


def _add_launcher(layout: plan.Layout, root: Path) -> Path | None:
    """The Start-menu shortcut (Windows) or the app in ~/Applications (macOS); on Linux the
    desktop entry is one of the commands."""
    if layout.platform not in ("win32", "darwin"):
        return None
    png = (root / "resources" / "icon.png").read_bytes()
    if layout.platform == "win32":
        icon = layout.venv / "chattts-studio.ico"
        icon.write_bytes(plan.png_to_ico(png))
        start_menu = Path(os.environ["APPDATA"]) / "Microsoft/Windows/Start Menu/Programs"
        shortcut = plan.windows_shortcut(layout, start_menu, icon)
        done = subprocess.run(
            ["powershell", "-NoProfile", "-NonInteractive", "-Command", shortcut.script],
            env={**os.environ, **shortcut.env},
            check=False,
        )
        return shortcut.link if done.returncode == 0 else None
    if layout.platform == "darwin":
        files = plan.mac_bundle(layout, Path.home() / "Applications", plan.png_to_icns(png))
        for path, (data, mode) in files.items():
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
            path.chmod(mode)
        return next(iter(files)).parents[2]
    return None
