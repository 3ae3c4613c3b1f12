"""Folder names are data, never code, in what the installers write: the Windows shortcut's
PowerShell reads its paths from environment variables (its text holds none of them), the macOS
launcher quotes its path for sh (run here under /bin/sh with such folders: it starts the right
program with the right arguments and runs nothing else), install.ps1 resolves paths literally,
and install.cmd pauses only for a double click."""

import subprocess
import sys
from pathlib import Path

import pytest

from chattts_studio.core.install import plan

ROOT = Path(__file__).resolve().parents[3]
FOLDERS = [
    'O\'Brien "quoted"',
    "‘curly’ ‚low‛ quotes",
    "$(touch INJECTED)",
    "`touch INJECTED`",
    "[brackets] *star? {brace}",
    "two  spaces; semi & amp | pipe > out",
    "Zoë Ñandú 日本語 Ελληνικά",
    "$HOME and ${PATH} and \\back\\slash",
    "new\nline",
]


@pytest.mark.parametrize("folder", FOLDERS)
def test_the_shortcuts_powershell_holds_no_path(folder: str) -> None:
    layout = plan.Layout(Path("C:\\Users") / folder / "studio", "win32")
    start_menu = Path("C:\\Users") / folder / "Start Menu"
    shortcut = plan.windows_shortcut(layout, start_menu, layout.venv / "chattts-studio.ico")
    plain = plan.windows_shortcut(
        plan.Layout(Path("C:\\studio"), "win32"), Path("C:\\menu"), Path("C:\\i.ico")
    )
    assert shortcut.script == plain.script  # the same text whatever the folder
    assert folder not in shortcut.script and "Users" not in shortcut.script
    assert shortcut.env == {
        "CHATTTS_STUDIO_LINK": str(start_menu / "ChatTTS Studio.lnk"),
        "CHATTTS_STUDIO_TARGET": str(layout.app),
        "CHATTTS_STUDIO_ICON": str(layout.venv / "chattts-studio.ico"),
        "CHATTTS_STUDIO_FOLDER": str(layout.root),
    }
    for name in shortcut.env:
        assert f"$env:{name}" in shortcut.script


@pytest.mark.skipif(sys.platform == "win32", reason="the macOS launcher is a sh script")
@pytest.mark.parametrize("folder", FOLDERS)
def test_the_mac_launcher_runs_the_app_in_any_folder_and_nothing_else(
    tmp_path: Path, folder: str
) -> None:
    checkout = tmp_path / folder / "ChatTTS Studio"
    layout = plan.Layout(checkout, "darwin")
    layout.app.parent.mkdir(parents=True)
    record = tmp_path / "argv.txt"
    # A stand-in for the app: writes how it was called, one argument a line (NUL-separated).
    layout.app.write_text(
        f"#!{sys.executable}\nimport sys\n"
        f"open({str(record)!r}, 'w', encoding='utf-8').write('\\0'.join(sys.argv))\n",
        encoding="utf-8",
    )
    layout.app.chmod(0o755)
    files = plan.mac_bundle(layout, tmp_path / "Applications", b"icns")
    launcher_path, (launcher, mode) = next(iter(files.items()))
    assert mode == 0o755 and launcher_path.name == "ChatTTS Studio"
    launcher_path.parent.mkdir(parents=True)
    launcher_path.write_bytes(launcher)
    work = tmp_path / "cwd"
    work.mkdir()
    done = subprocess.run(
        ["/bin/sh", str(launcher_path), "first arg", "$(touch INJECTED)"],
        cwd=work,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    argv = record.read_text(encoding="utf-8").split("\0")
    assert argv == [str(layout.app), "first arg", "$(touch INJECTED)"]
    assert not list(work.iterdir()) and not (tmp_path / "INJECTED").exists()
    assert not any(p.name == "INJECTED" for p in tmp_path.rglob("*"))


def test_install_ps1_resolves_paths_literally_and_pipes_nothing_into_a_shell() -> None:
    text = (ROOT / "resources" / "install" / "install.ps1").read_text(encoding="utf-8")
    for command in ("Resolve-Path", "Test-Path", "Remove-Item"):
        uses = [line for line in text.splitlines() if f"{command} " in line]
        assert uses, command
        assert all(f"{command} -LiteralPath" in line for line in uses), uses
    assert "Invoke-Expression" not in text and "| iex" not in text
    assert '$env:UV_PYTHON_DOWNLOADS = "never"' in text


def test_install_cmd_pauses_only_when_started_by_a_double_click() -> None:
    lines = (ROOT / "resources" / "install" / "install.cmd").read_text().splitlines()
    code = [line for line in lines if not line.startswith("rem ")]
    pausing = [line for line in code if "pause" in line.lower().split()]
    assert len(pausing) == 1
    # Only where cmd was started with /c and this script's own name (Explorer's double click).
    (line,) = pausing
    assert line.startswith("if /i not ") and "!started:/c=!" in line and "%~nx0" in line
    assert 'set "started=!CMDCMDLINE!"' in lines and "setlocal EnableDelayedExpansion" in lines
    assert lines[-1] == "endlocal & exit /b %code%"
