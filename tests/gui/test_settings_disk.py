"""The window's settings on a read-only or full disk: the window goes on, says so in one
sentence (once), the settings file keeps what it held, the changes stay in memory and reach
the disk at the first save that can."""

from pathlib import Path

import pytest
from conftest import window_maker
from disk_faults import fill, read_only, small_disk
from PySide6.QtCore import QSettings

from chattts_studio.gui.settings import SETTINGS_FILE, Key, Settings


def _settings(path: Path) -> Settings:
    return Settings(QSettings(str(path), QSettings.Format.IniFormat))


def test_a_full_disk_keeps_the_file_and_the_changes_until_there_is_room(tmp_path: Path) -> None:
    with small_disk(tmp_path / "disk", size="256k") as disk:
        ini = disk / SETTINGS_FILE
        settings = _settings(ini)
        settings.set(Key.SEGMENT_SIZE, 33)
        assert settings.sync() is None
        before = ini.read_bytes()
        filler = fill(disk)
        settings.set(Key.LAST_FOLDER, "x" * 20_000)  # more than the disk has left
        problem = settings.sync()
        assert problem is not None and "\n" not in problem
        assert problem.startswith(f"The settings cannot be saved to {ini} (the disk is full")
        assert ini.read_bytes() == before and not [
            p for p in disk.iterdir() if "settings-" in p.name
        ]
        assert settings.text(Key.LAST_FOLDER) == "x" * 20_000  # kept for this session
        assert settings.sync() == problem and settings.save_problem == problem  # still full
        filler.unlink()
        assert settings.sync() is None and settings.save_problem is None
        again = _settings(ini)
        assert again.text(Key.LAST_FOLDER) == "x" * 20_000 and again.number(Key.SEGMENT_SIZE) == 33


def test_a_read_only_disk_is_said_once_by_the_window(
    qtbot, tmp_path: Path, monkeypatch, demo_model: str
) -> None:  # type: ignore[no-untyped-def]
    from chattts_studio.core import paths

    shared_models = paths.models_dir()
    shared_cache = paths.cache_dir()
    with small_disk(tmp_path / "home", size="1m") as home:
        (home / "models").symlink_to(shared_models)
        (home / "cache").symlink_to(shared_cache)
        monkeypatch.setenv("CHATTTS_STUDIO_HOME", str(home))
        makers = window_maker(qtbot, lambda window: window.jobs.current is None)
        make = next(makers)
        window = make(model=None, wait=False)
        window.controls.segment_slider.setValue(33)
        window.persistence.persist()
        ini = home / SETTINGS_FILE
        before = ini.read_bytes()
        read_only(home)
        window.controls.segment_slider.setValue(44)
        window.persistence.persist()
        said = window.messages.alert_text.text()
        assert window.messages.alert.isVisible()
        assert f"The settings cannot be saved to {ini} (the file system is read-only" in said
        window.controls.segment_slider.setValue(45)
        window.persistence.persist()
        assert window.messages.alert_text.text().count("The settings cannot be saved") == 1
        assert ini.read_bytes() == before
        assert window.settings.number(Key.SEGMENT_SIZE) == 45  # in memory meanwhile
        with pytest.raises(StopIteration):
            next(makers)  # closes the window: its last save is refused too, quietly
        assert ini.read_bytes() == before
