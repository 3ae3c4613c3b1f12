"""Demo weights built on first use say that they are being built for the first time, never
that something is damaged; a damaged manifest is still reported when they are rebuilt."""

from pathlib import Path

import pytest

from chattts_studio.core.cli.main import main
from chattts_studio.core.weights import models


@pytest.fixture
def empty_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A data folder with no models in it at all: the demo weights do not exist yet."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("CHATTTS_STUDIO_HOME", str(home))
    return home


def test_the_first_synth_says_it_builds_the_demo_weights(
    empty_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "a.wav"
    code = main(["synth", "你好。", "-o", str(out), "--no-refine", "--engine", "torch"])
    stderr = capsys.readouterr().err
    assert code == 0, stderr
    assert "  building the demo weights (first use)\n" in stderr
    for damage in ("no valid", "damaged", "reason", "again"):
        assert damage not in stderr, stderr
    assert out.is_file() and (empty_home / "models" / "demo" / models.MANIFEST).is_file()


def test_a_damaged_manifest_is_still_reported_when_rebuilt(empty_home: Path) -> None:
    said: list[str] = []
    info = models.ensure("demo", log=said.append)
    assert said[0] == "building the demo weights (first use)"
    (info.folder / models.MANIFEST).write_text("{not json", encoding="utf-8")
    said.clear()
    models.ensure("demo", log=said.append)
    assert said[0].startswith("building demo (random weights")
    assert f"Model 'demo' has no valid {models.MANIFEST}" in said[0]
    assert "first use" not in said[0]
    models.verify(info.folder, models.hashes_for(info), "demo")  # rebuilt whole
