"""The chattts-studio command: its desktop entry, a file given on the command line, and a second
launch handing its file to the window already open."""

import configparser
import gc
import os
import socket
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
from PySide6.QtCore import QCoreApplication, QDir, QEvent
from PySide6.QtGui import QImage
from PySide6.QtNetwork import QLocalSocket

from chattts_studio.gui import app, desktop_entry, resources, single_instance

LAUNCHER = Path(sysconfig.get_path("scripts")) / "chattts-studio"


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A data folder of its own: its settings, draft and single-instance socket."""
    folder = tmp_path / "home"
    folder.mkdir()
    monkeypatch.setenv("CHATTTS_STUDIO_HOME", str(folder))
    return folder


@pytest.fixture
def windows(qtbot):  # type: ignore[no-untyped-def]
    """Windows a test opens; closed afterwards, failing if a worker thread is left running."""
    opened: list = []
    yield opened
    for window in opened:
        server = getattr(window, "instance_server", None)
        if server is not None:
            server.close()
        window.close()
        qtbot.waitUntil(
            lambda window=window: not window.host.worker_thread.isRunning(), timeout=30_000
        )
        window.host.release()
        window.deleteLater()
    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    gc.collect()


def _desktop_file(path: Path) -> configparser.SectionProxy:
    parser = configparser.ConfigParser(interpolation=None)
    parser.optionxform = str  # type: ignore[assignment,method-assign]  # keys are case-sensitive
    parser.read(path, encoding="utf-8")
    return parser["Desktop Entry"]


def test_desktop_entry_and_icons_are_written_for_the_user(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    data_home = tmp_path / "share"
    monkeypatch.setenv("XDG_DATA_HOME", str(data_home))
    assert app.main(["--install-desktop-entry"]) == 0
    entry_file = data_home / "applications" / "chattts-studio.desktop"
    svg = data_home / "icons/hicolor/scalable/apps/chattts-studio.svg"
    png = data_home / "icons/hicolor/256x256/apps/chattts-studio.png"
    printed = capsys.readouterr().out.splitlines()
    assert printed == [f"Wrote {path}" for path in (svg, png, entry_file)]
    entry = _desktop_file(entry_file)
    # Exec runs this installation's launcher (and opens the file it is given); the icon is
    # found by name in the hicolor theme, where both sizes now are.
    assert entry["Exec"] == f"{LAUNCHER} %f"
    assert LAUNCHER.is_file() and os.access(LAUNCHER, os.X_OK)
    assert entry["TryExec"] == str(LAUNCHER)
    assert entry["Icon"] == "chattts-studio" and entry["Type"] == "Application"
    assert entry["Name"] == "ChatTTS Studio" and entry["StartupWMClass"] == "chattts-studio"
    assert svg.read_bytes() == resources.resource_path("icon.svg").read_bytes()
    image = QImage(str(png))
    assert (image.width(), image.height()) == (256, 256)
    # Written again (an update), it replaces the files and leaves no temp file behind.
    desktop_entry.install()
    assert sorted(p.name for p in entry_file.parent.iterdir() if "mimeinfo" not in p.name) == [
        "chattts-studio.desktop"
    ]


def test_exec_line_quotes_a_launcher_path_with_spaces(tmp_path: Path) -> None:
    written = desktop_entry.install(tmp_path, Path("/opt/my apps/$HOME/chattts-studio"))
    entry = _desktop_file(written[-1])
    # configparser reads the raw value: the spec's quoting, then its string escaping.
    assert entry["Exec"] == '"/opt/my apps/\\\\$HOME/chattts-studio" %f'


def test_desktop_entry_into_an_unwritable_folder_is_one_sentence_and_exit_2(
    tmp_path: Path,
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")  # works even as root, unlike a read-only folder
    result = subprocess.run(
        [LAUNCHER, "--install-desktop-entry"],
        env={**os.environ, "XDG_DATA_HOME": str(blocker / "share")},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2
    assert result.stdout == ""
    message = result.stderr.strip()
    assert "\n" not in message and message.endswith(".") and "Traceback" not in message
    assert message.startswith("Cannot write ") and str(blocker) in message


def test_arguments() -> None:
    args = app.parse_arguments(["story.txt", "--model", "demo"])
    assert (args.file, args.model, args.install_desktop_entry) == (Path("story.txt"), "demo", False)
    assert app.parse_arguments([]).file is None


def test_a_file_given_on_the_command_line_lands_in_the_editor(
    home: Path, tmp_path: Path, windows: list
) -> None:
    story = tmp_path / "story.txt"
    story.write_text("\ufeff从前有座山。Once upon a time.\n", encoding="utf-8")
    window = app.open_window(None, story)  # what main() opens for `chattts-studio story.txt`
    windows.append(window)
    window.show()
    assert window.editor.text() == "从前有座山。Once upon a time.\n"
    assert f"Opened {story}" in window.messages.notice.text()
    missing = tmp_path / "missing.txt"
    other = app.open_window(None, missing)
    windows.append(other)
    assert (
        "Cannot open" in other.messages.notice.text()
        and str(missing) in other.messages.notice.text()
    )


def test_a_second_launch_hands_its_file_to_the_running_window(
    home: Path, tmp_path: Path, qtbot, windows: list
) -> None:  # type: ignore[no-untyped-def]
    name = single_instance.server_name()
    window = app.open_window(None, None, name)
    windows.append(window)
    window.show()
    second = tmp_path / "second.txt"
    second.write_text("第二个文件。The second file.", encoding="utf-8")
    launch = subprocess.Popen(
        [sys.executable, "-m", "chattts_studio.gui.app", second.name],
        cwd=tmp_path,  # a relative path: the running window gets it made absolute
        env={**os.environ, "CHATTTS_STUDIO_HOME": str(home)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        qtbot.waitUntil(lambda: window.editor.text() == second.read_text(), timeout=60_000)
        out, err = launch.communicate(timeout=60)
    finally:
        if launch.poll() is None:
            launch.kill()
            launch.wait()
    assert launch.returncode == 0, err
    assert "already running" in out
    assert f"Opened {second}" in window.messages.notice.text()


def test_a_socket_left_by_a_window_that_is_gone_does_not_stop_a_start(home: Path, qtbot) -> None:  # type: ignore[no-untyped-def]
    name = single_instance.server_name()
    stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stale.bind(str(Path(QDir.tempPath()) / name))  # where QLocalServer puts `name`
    stale.close()  # the file stays, as after a crash; nothing listens
    assert not single_instance.hand_over(None, name)
    server = single_instance.InstanceServer(name)
    try:
        assert server.listen()
        client = QLocalSocket()
        client.connectToServer(name)
        assert client.waitForConnected(5_000)
        client.disconnectFromServer()
    finally:
        server.close()
    assert not (Path(QDir.tempPath()) / name).exists()


@pytest.fixture
def no_resources(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):  # type: ignore[no-untyped-def]
    """An installation without the resources package (and no source tree beside it)."""
    monkeypatch.setattr(resources, "PACKAGE", "chattts_studio.resources_not_installed")
    monkeypatch.setattr(resources, "CHECKOUT", tmp_path / "resources")
    resources.resources_dir.cache_clear()
    yield tmp_path / "resources"
    resources.resources_dir.cache_clear()


def test_missing_resources_are_reported_not_silently_replaced(
    no_resources: Path, caplog: pytest.LogCaptureFixture, qapp
) -> None:  # type: ignore[no-untyped-def]
    with caplog.at_level("WARNING", logger="chattts_studio"):
        assert resources.sample_text() == resources.FALLBACK_SAMPLE
        assert resources.app_icon().isNull()
    assert "resources (package chattts_studio.resources_not_installed) are not installed" in (
        caplog.text
    )
    assert "Reinstall" in caplog.text


def test_a_missing_resource_file_is_named(
    no_resources: Path, caplog: pytest.LogCaptureFixture
) -> None:
    no_resources.mkdir()
    (no_resources / "__init__.py").write_text("")  # a source tree that lost its samples
    with caplog.at_level("WARNING", logger="chattts_studio"):
        assert resources.sample_text("chinese.txt") == resources.FALLBACK_SAMPLE
    assert "resource file samples/chinese.txt is missing" in caplog.text
