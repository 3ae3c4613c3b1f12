"""The installer: checks the machine, picks the torch build, installs the app into the
checkout's .venv with uv and the lock, adds a launcher, and says how to run and uninstall.

Run by resources/install/install.ps1 (Windows) and install.sh (macOS, Linux) through
bootstrap.py; `--dry-run` prints the plan and changes nothing.
"""

import argparse
import os
import platform
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

from chattts_studio.core.install import plan, support, torch_build

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
    problem = support.unsupported(
        plat,
        platform.machine(),
        platform.mac_ver()[0],
        sys.version_info[:2],
        _requires_python(root),
    )
    if problem:
        print(problem, file=sys.stderr)
        return 2
    layout = plan.Layout(root, plat)
    choice = torch_build.choose_here(plat, str(layout.python), False, args.nvidia_smi_output)
    print(f"PyTorch build: {choice.build}. {choice.reason}")
    uv = os.environ.get("UV") or shutil.which("uv") or "uv"
    steps = plan.commands(layout, choice.build, sys.executable, uv)
    if args.dry_run:
        for step in steps:
            print(torch_build.join_command(step, plat))
        return 0
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
    launcher = _add_launcher(layout, root)
    print(f"\n{plan.APP_NAME} is installed. Start it with: {layout.app}")
    if launcher is not None:
        print(f"or from {launcher}.")
    print(f"Your models, speakers and settings live in {DATA_FOLDERS[plat]}.")
    print("To uninstall: " + "; ".join(plan.uninstall_steps(layout, launcher)) + ".")
    return 0


def _add_launcher(layout: plan.Layout, root: Path) -> Path | None:
    """The Start-menu shortcut (Windows) or the app in ~/Applications (macOS); on Linux the
    desktop entry is one of the commands."""
    png = (root / "resources" / "icon.png").read_bytes()
    if layout.platform == "win32":
        icon = layout.venv / "chattts-studio.ico"
        icon.write_bytes(plan.png_to_ico(png))
        start_menu = Path(os.environ["APPDATA"]) / "Microsoft/Windows/Start Menu/Programs"
        link, script = plan.windows_shortcut(layout, start_menu, icon)
        done = subprocess.run(
            ["powershell", "-NoProfile", "-NonInteractive", "-Command", script], check=False
        )
        return link if done.returncode == 0 else None
    if layout.platform == "darwin":
        files = plan.mac_bundle(layout, Path.home() / "Applications", plan.png_to_icns(png))
        for path, (data, mode) in files.items():
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
            path.chmod(mode)
        return next(iter(files)).parents[2]
    return None
