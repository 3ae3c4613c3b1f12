"""Demo weights built on a full or read-only disk: one sentence (ModelError), no temp folder
left, and the weights that were there before byte for byte as they were."""

import os
from pathlib import Path

import pytest
from disk_faults import files_under, fill, read_only, small_disk

from chattts_studio.core.errors import ModelError
from chattts_studio.core.weights import models


def _refused(name: str = "demo") -> str:
    with pytest.raises(ModelError) as caught:
        models.ensure(name)
    message = str(caught.value)
    assert "\n" not in message and "Traceback" not in message, message
    return message


def test_a_demo_rebuild_refused_by_the_disk_keeps_the_old_weights(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with small_disk(tmp_path / "home", size="24m") as home:
        monkeypatch.setenv("CHATTTS_STUDIO_HOME", str(home))
        info = models.ensure("demo")  # 14 MB
        (info.folder / models.MANIFEST).write_text("{damaged", encoding="utf-8")  # rebuild it
        before = files_under(home / "models")
        fill(home, leave=2 << 20)  # room for the small files, not the embeddings
        message = _refused()
        assert message.startswith("The demo weights 'demo' cannot be built in "), message
        assert "the disk is full" in message, message
        assert files_under(home / "models") == before
        assert sorted(os.listdir(home / "models")) == ["demo"]  # no temp folder left
        (home / ".filler").unlink()
        read_only(home)
        message = _refused()
        assert "read-only" in message, message
        assert files_under(home / "models") == before


def test_a_first_build_on_a_read_only_disk_is_one_sentence(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with small_disk(tmp_path / "home", size="1m") as home:
        (home / "models").mkdir()
        read_only(home)
        monkeypatch.setenv("CHATTTS_STUDIO_HOME", str(home))
        message = _refused()
        assert f"cannot be built in {home / 'models'}: the file system is read-only" in message
