"""The installer's work for one machine as data (uv commands and the launcher's files), so the suite
checks it without installing: the chosen torch build into the checkout's .venv first, then the app
with the lock.
"""

import plistlib
import shlex
import struct
from dataclasses import dataclass
from pathlib import Path

from chattts_studio.core.install import torch_build, torch_env

APP_NAME = "ChatTTS Studio"
# What the lock's `torch==` resolves to from PyPI on each platform.
LOCK_BUILD = {"linux": "cu130", "win32": torch_build.CPU, "darwin": torch_build.MAC_DEFAULT}
# Pins of torch's CUDA runtime: they fit the lock's build only, so another build drops them.
RUNTIME_PREFIXES = ("nvidia-", "cuda-")


@dataclass(frozen=True)
class Layout:
    root: Path  # the source checkout
    platform: str  # win32, darwin or linux

    @property
    def venv(self) -> Path:
        return self.root / ".venv"

    def _script(self, name: str) -> Path:
        if self.platform == "win32":
            return self.venv / "Scripts" / f"{name}.exe"
        return self.venv / "bin" / name

    @property
    def python(self) -> Path:
        return self._script("python")

    @property
    def app(self) -> Path:
        return self._script("chattts-studio")

    @property
    def lock(self) -> Path:
        return self.root / "constraints.txt"

    @property
    def build_lock(self) -> Path:
        """The lock as this build needs it (written by the installer)."""
        return self.venv / "constraints-install.txt"


def lock_for(lock_text: str, build: str, platform: str) -> str:
    """The lock's lines for `build`: all of them for the lock's own build, else without the
    CUDA runtime pins (another CUDA build brings its own versions of those)."""
    if build == LOCK_BUILD[platform]:
        return lock_text
    kept = []
    for line in lock_text.splitlines():
        name = line.strip().lower()
        if name.startswith(RUNTIME_PREFIXES):
            continue
        kept.append(line)
    return "\n".join(kept) + "\n"


def torch_step(
    layout: Layout, build: str, uv: str = "uv", installed: torch_env.Installed | None = None
) -> list[str] | None:
    """The uv command that puts `build` of torch and torchaudio into the environment, or None
    when nothing needs it: the build is there already, or the environment has no torch yet and
    the lock's own build (PyPI's) comes with the app.

    Another build found there is replaced (--reinstall-package): `uv pip install -c` alone
    keeps a 2.14.1+cpu, since it satisfies the lock's torch==2.14.1."""
    if torch_env.is_build(installed, build):
        return None
    from_pypi = build == LOCK_BUILD[layout.platform]
    if installed is None and from_pypi:
        return None
    step = [uv, "pip", "install", "--python", str(layout.python)]
    if installed is not None:
        step += ["--reinstall-package", "torch", "--reinstall-package", "torchaudio"]
    if from_pypi:
        return [
            *step,
            "-c",
            str(layout.build_lock),
            f"torch=={torch_build.TORCH}",
            f"torchaudio=={torch_build.TORCHAUDIO}",
        ]
    return [
        *step,
        f"torch=={torch_build.TORCH}+{build}",
        f"torchaudio=={torch_build.TORCHAUDIO}+{build}",
        torch_build.UV_INDEX_FLAG,
        torch_build.index_url(build),
    ]


def commands(
    layout: Layout,
    build: str,
    base_python: str,
    uv: str = "uv",
    installed: torch_env.Installed | None = None,
) -> list[list[str]]:
    """The uv commands, in order: the environment, the torch build (see torch_step; `installed`
    is the torch the environment has now), then the app with the onnx extra under the lock."""
    python = str(layout.python)
    steps = [[uv, "venv", "--allow-existing", "--python", base_python, str(layout.venv)]]
    step = torch_step(layout, build, uv, installed)
    if step is not None:
        steps.append(step)
    steps.append(
        [
            uv,
            "pip",
            "install",
            "--python",
            python,
            "-c",
            str(layout.build_lock),
            f"{layout.root}[onnx]",
        ]
    )
    if layout.platform.startswith("linux"):
        steps.append([str(layout.app), "--install-desktop-entry"])
    return steps


def png_to_ico(png: bytes) -> bytes:
    """A Windows icon holding one 256-pixel PNG image (Windows Vista and later read these)."""
    header = struct.pack("<HHH", 0, 1, 1)
    entry = struct.pack("<BBBBHHII", 0, 0, 0, 0, 1, 32, len(png), 6 + 16)
    return header + entry + png


def png_to_icns(png: bytes) -> bytes:
    """A macOS icon holding one 256-pixel PNG image ('ic08')."""
    chunk = b"ic08" + struct.pack(">I", 8 + len(png)) + png
    return b"icns" + struct.pack(">I", 8 + len(chunk)) + chunk


# The shortcut's values reach PowerShell as environment variables, never inside its script
# text: a path then cannot end a string early (PowerShell's single quotes end at ' and at the
# typographic quotes U+2018 to U+201B too) or run anything.
SHORTCUT_VARIABLES = {
    "link": "CHATTTS_STUDIO_LINK",
    "target": "CHATTTS_STUDIO_TARGET",
    "icon": "CHATTTS_STUDIO_ICON",
    "folder": "CHATTTS_STUDIO_FOLDER",
}


@dataclass(frozen=True)
class Shortcut:
    link: Path  # where the .lnk goes
    script: str  # the PowerShell that makes it: fixed text, no path in it
    env: dict[str, str]  # the values it reads, to add to its environment


def windows_shortcut(layout: Layout, start_menu: Path, icon: Path) -> Shortcut:
    """The Start-menu shortcut's path and the PowerShell that makes it with the app's icon."""
    link = start_menu / f"{APP_NAME}.lnk"
    var = SHORTCUT_VARIABLES
    script = "; ".join(
        [
            f"$s = (New-Object -ComObject WScript.Shell).CreateShortcut($env:{var['link']})",
            f"$s.TargetPath = $env:{var['target']}",
            f"$s.IconLocation = $env:{var['icon']}",
            f"$s.WorkingDirectory = $env:{var['folder']}",
            "$s.Description = 'Text to speech with ChatTTS'",
            "$s.Save()",
        ]
    )
    env = {
        var["link"]: str(link),
        var["target"]: str(layout.app),
        var["icon"]: str(icon),
        var["folder"]: str(layout.root),
    }
    return Shortcut(link, script, env)


def mac_launcher(app: Path) -> bytes:
    """The macOS app's launcher script: runs `app` with the arguments it was given. The path is
    quoted for sh (shlex.quote), so `$(...)`, backticks or quotes in a folder name stay text."""
    return f'#!/bin/sh\nexec {shlex.quote(str(app))} "$@"\n'.encode()


def mac_bundle(layout: Layout, applications: Path, icns: bytes) -> dict[Path, tuple[bytes, int]]:
    """The files of ~/Applications/ChatTTS Studio.app, each with its mode: a launcher script
    that starts the app from .venv, its Info.plist and its icon."""
    contents = applications / f"{APP_NAME}.app" / "Contents"
    launcher = mac_launcher(layout.app)
    info = plistlib.dumps(
        {
            "CFBundleName": APP_NAME,
            "CFBundleDisplayName": APP_NAME,
            "CFBundleIdentifier": "io.github.chattts-studio",
            "CFBundleExecutable": APP_NAME,
            "CFBundleIconFile": "icon.icns",
            "CFBundlePackageType": "APPL",
            "LSMinimumSystemVersion": "14.0",
            "NSHighResolutionCapable": True,
        }
    )
    return {
        contents / "MacOS" / APP_NAME: (launcher, 0o755),
        contents / "Info.plist": (info, 0o644),
        contents / "Resources" / "icon.icns": (icns, 0o644),
    }


def uninstall_steps(layout: Layout, launcher: Path | None) -> list[str]:
    """What to delete to uninstall, in words, for the installer's last lines."""
    steps = []
    if launcher is not None:
        steps.append(f"delete {launcher}")
    steps.append(f"delete the folder {layout.venv}")
    if layout.platform.startswith("linux"):
        steps.append(
            "delete chattts-studio.desktop in ~/.local/share/applications and chattts-studio.png "
            "in ~/.local/share/icons/hicolor/*/apps, if you added the app to the menu"
        )
    return steps
