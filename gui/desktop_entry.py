"""Puts ChatTTS Studio in this user's applications menu (freedesktop.org XDG): a .desktop file for
the chattts-studio launcher and its icon. Used by Help > Add to applications menu.
"""

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import platformdirs

from chattts_studio.core.atomic import atomic_path, os_error_reason
from chattts_studio.core.errors import StudioError
from chattts_studio.gui.i18n import core_text, translate
from chattts_studio.gui.resources import existing_resource

APP_ID = "chattts-studio"  # the desktop file's name, the icon's name and the window's class
LAUNCHER = "chattts-studio"
# Characters that make an Exec argument need quoting (Desktop Entry spec, "The Exec key").
_RESERVED = set(" \t\n\"'\\><~|&;$*?#()`")


class DesktopEntryError(StudioError):
    pass


def data_home() -> Path:
    """$XDG_DATA_HOME, or ~/.local/share when it is unset or empty."""
    return platformdirs.user_data_path()


def entry_paths(home: Path | None = None) -> dict[str, Path]:
    """Where each file goes: the desktop entry and the two sizes of the icon."""
    home = home or data_home()
    hicolor = home / "icons" / "hicolor"
    return {
        "desktop": home / "applications" / f"{APP_ID}.desktop",
        "svg": hicolor / "scalable" / "apps" / f"{APP_ID}.svg",
        "png": hicolor / "256x256" / "apps" / f"{APP_ID}.png",
    }


def launcher() -> Path:
    """The chattts-studio launcher of this installation (the venv or pipx environment the
    running Python belongs to), else the one on PATH."""
    beside = Path(sysconfig.get_path("scripts")) / LAUNCHER
    if beside.is_file() and os.access(beside, os.X_OK):
        return beside
    found = shutil.which(LAUNCHER)
    if found:
        return Path(found).absolute()
    raise DesktopEntryError(
        translate(
            "Desktop",
            "The chattts-studio launcher is not installed, so a menu entry would not start "
            "anything; install the app first (pipx install . or pip install -e .).",
        )
    )


def exec_argument(arg: str) -> str:
    """One argument of an Exec line, quoted and escaped as the Desktop Entry spec asks."""
    if not any(c in _RESERVED for c in arg):
        quoted = arg
    else:
        quoted = '"' + "".join("\\" + c if c in '"`$\\' else c for c in arg) + '"'
    # Then the general escaping of a string value, and % doubled (it starts a field code).
    return quoted.replace("\\", "\\\\").replace("%", "%%")


def desktop_entry_text(command: Path) -> str:
    """The packaged .desktop file with Exec pointing at `command` (and opening a file)."""
    template = existing_resource("chattts-studio.desktop")
    if template is None:
        raise DesktopEntryError(
            translate(
                "Desktop",
                "The desktop entry template is missing from this installation; reinstall "
                "ChatTTS Studio.",
            )
        )
    lines = []
    for line in template.read_text(encoding="utf-8").splitlines():
        key = line.split("=", 1)[0].strip()
        if key in ("Exec", "TryExec", "Icon", "MimeType"):
            continue
        lines.append(line)
        if line.strip() == "[Desktop Entry]":
            lines += [
                f"Exec={exec_argument(str(command))} %f",
                "TryExec=" + str(command).replace("\\", "\\\\"),  # a path, not a command
                f"Icon={APP_ID}",
                "MimeType=text/plain;",  # "Open with ChatTTS Studio" for text files
            ]
    return "\n".join(lines) + "\n"


def _write(target: Path, data: bytes | Path) -> None:
    try:
        if isinstance(data, Path):
            data = data.read_bytes()
        target.parent.mkdir(parents=True, exist_ok=True)
        with atomic_path(target) as tmp:
            tmp.write_bytes(data)
            tmp.chmod(0o644)  # the temp file is private; menus read the entry as the user
    except OSError as exc:
        raise DesktopEntryError(
            translate("Desktop", "Cannot write {path} for the desktop entry: {reason}.").format(
                path=target, reason=core_text(os_error_reason(exc))
            )
        ) from None


def install(home: Path | None = None, command: Path | None = None) -> list[Path]:
    """Write the desktop entry and the icons for this user; the paths written, in order.
    Raises DesktopEntryError (one sentence) when something cannot be written."""
    if not sys.platform.startswith(("linux", "freebsd", "openbsd", "netbsd")):
        raise DesktopEntryError(
            translate(
                "Desktop",
                "Desktop entries are for Linux and BSD desktops; on this system start ChatTTS "
                "Studio with the chattts-studio command.",
            )
        )
    command = command or launcher()
    targets = entry_paths(home)
    icons = {"svg": existing_resource("icon.svg"), "png": existing_resource("icon.png")}
    written = []
    # Icons first: a menu entry that appears before its icon shows a blank one.
    for kind in ("svg", "png"):
        source = icons[kind]
        if source is not None:
            _write(targets[kind], source)
            written.append(targets[kind])
    _write(targets["desktop"], desktop_entry_text(command).encode("utf-8"))
    written.append(targets["desktop"])
    _refresh_caches(targets["desktop"].parent)
    return written


def _refresh_caches(applications: Path) -> None:
    """Best effort: desktops that keep a MIME cache learn the new 'Open with' entry."""
    tool = shutil.which("update-desktop-database")
    if tool:
        try:
            subprocess.run([tool, "-q", str(applications)], timeout=10, check=False)
        except (OSError, subprocess.SubprocessError):
            pass


def install_sentence() -> str:
    """For the menu action: what was done, or why not, in one sentence."""
    try:
        written = install()
    except DesktopEntryError as exc:
        return core_text(exc)
    return translate("Desktop", "ChatTTS Studio is now in your applications menu ({path}).").format(
        path=written[-1]
    )
