"""The window's parts that need no model: settings, resources, the waveform envelope, batching."""

import configparser
import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest
from PySide6.QtCore import QSettings

from chattts_studio.core.engine.request import auto_batch_size
from chattts_studio.gui import resources
from chattts_studio.gui.settings import DEFAULTS, Key, Settings


@pytest.fixture
def settings(tmp_path) -> Settings:  # type: ignore[no-untyped-def]
    return Settings(QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat))


def test_settings_are_typed_with_defaults(settings: Settings) -> None:
    assert settings.number(Key.SEGMENT_SIZE) == DEFAULTS[Key.SEGMENT_SIZE] == 50
    assert settings.flag(Key.STREAM_PLAYBACK) is True
    settings.set(Key.SEGMENT_SIZE, 30)
    settings.set(Key.STREAM_PLAYBACK, False)
    settings.set(Key.DEVICE, "cpu")
    settings.sync()
    again = Settings(QSettings(settings._q.fileName(), QSettings.Format.IniFormat))
    assert again.number(Key.SEGMENT_SIZE) == 30  # an ini file stores "30"; it comes back an int
    assert again.flag(Key.STREAM_PLAYBACK) is False
    assert again.text(Key.DEVICE) == "cpu"


def test_a_damaged_setting_falls_back_to_its_default(settings: Settings) -> None:
    settings.set(Key.BATCH_SIZE, "lots")
    assert settings.number(Key.BATCH_SIZE) == 0


def test_settings_live_in_the_data_folder(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("CHATTTS_STUDIO_HOME", str(tmp_path))
    Settings().set(Key.PRECISION, "bf16")
    assert (tmp_path / "gui-settings.ini").exists()


def test_resources_resolve_from_any_folder(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.chdir(tmp_path)
    assert resources.resource_path("icon.svg").is_file()
    assert resources.resource_path("icon.png").is_file()
    assert "ChatTTS" in resources.sample_text()
    desktop = configparser.ConfigParser(interpolation=None)
    desktop.read(resources.resource_path("chattts-studio.desktop"))
    entry = desktop["Desktop Entry"]
    assert entry["Exec"] == "chattts-studio" and entry["Type"] == "Application"


def test_automatic_batch_size() -> None:
    assert auto_batch_size("cuda:0", 40) == 16
    assert auto_batch_size("cpu", 40) == 16
    assert auto_batch_size("cuda:1", 3) == 3
    assert auto_batch_size("cpu", 0) == 1


def test_many_void_qt_calls_do_not_exhaust_none(qapp) -> None:  # type: ignore[no-untyped-def]
    """PySide6 6.12.0 on Python 3.11 drops a reference to None per void call, which aborts a
    painting app (pyproject pins PySide6-Essentials below 6.12)."""
    import sys

    from PySide6.QtGui import QPen

    from chattts_studio.gui.app import application

    application()
    pen = QPen()
    before = sys.getrefcount(None)
    for _ in range(20_000):
        pen.setWidth(2)
    assert sys.getrefcount(None) > before - 1_000
