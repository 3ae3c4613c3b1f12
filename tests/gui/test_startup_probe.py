"""The start-up probe's data folder between starts: each start is a first one (no settings,
draft or history), while the models, their verified hashes and the ONNX exports stay. The app
keeps folders under cache/ now, which the probe once tried to unlink (it crashed on its second
start)."""

from pathlib import Path

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
