"""The start-up probe's data folder between starts: each start is a first one (no settings,
draft or history), while the models, their verified hashes and the ONNX exports stay. The app
keeps folders under cache/ now, which the probe once tried to unlink (it crashed on its second
start). Where Windows refuses a symbolic link, the models are shared by a junction."""

import sys
import types
from pathlib import Path

import pytest

from chattts_studio.core import platforms
from chattts_studio.gui.devtools import startup_probe
from chattts_studio.gui.devtools.startup_probe import fresh


def test_a_fresh_start_keeps_the_models_and_exports_only(tmp_path: Path) -> None:
    models = tmp_path / "shared-models"
    models.mkdir()
    tmp_path = tmp_path / "home"
    tmp_path.mkdir()
    (tmp_path / "models").symlink_to(models)
    (tmp_path / "verified-hashes.json").write_text("{}")
    (tmp_path / "gui-settings.ini").write_text("[x]")
    (tmp_path / "editor-draft.txt").write_text("draft")
    (tmp_path / "cache" / "onnx").mkdir(parents=True)
    (tmp_path / "cache" / "onnx" / "step.onnx").write_bytes(b"1")
    (tmp_path / "cache" / "history").mkdir()
    (tmp_path / "cache" / "history" / "take.wav").write_bytes(b"1")
    fresh(tmp_path)
    fresh(tmp_path)  # a second start finds what the first left
    left = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*"))
    assert left == ["cache", "cache/onnx", "cache/onnx/step.onnx", "models", "verified-hashes.json"]
    assert models.exists()


def test_models_are_shared_by_a_junction_where_windows_refuses_a_symlink(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    models = tmp_path / "models"
    models.mkdir()
    # A real link where the system allows it.
    startup_probe.share_folder(tmp_path / "link", models)
    assert (tmp_path / "link").resolve() == models

    # Windows without Developer Mode: making a symlink is refused (WinError 1314), and a
    # directory junction (which needs no privilege) takes its place.
    def refused(self: Path, target: Path, target_is_directory: bool = False) -> None:
        raise OSError(22, "A required privilege is not held by the client")

    junctions: list[tuple[str, str]] = []
    winapi = types.SimpleNamespace(CreateJunction=lambda src, dst: junctions.append((src, dst)))
    monkeypatch.setattr(Path, "symlink_to", refused)
    monkeypatch.setitem(sys.modules, "_winapi", winapi)
    monkeypatch.setattr(platforms, "OS_NAME", "nt")
    startup_probe.share_folder(tmp_path / "junction", models)
    assert junctions == [(str(models), str(tmp_path / "junction"))]
    # Elsewhere the refusal is the answer.
    monkeypatch.setattr(platforms, "OS_NAME", "posix")
    with pytest.raises(OSError):
        startup_probe.share_folder(tmp_path / "other", models)
