"""The demo recogniser made in a cache the disk refuses (full, read-only): one sentence that
says why in the app's words, no half-made folder, and what the cache held before as it was."""

from pathlib import Path

import pytest
from disk_faults import files_under, fill, read_only, small_disk

from chattts_studio.core.asr import demo_model
from chattts_studio.core.errors import ModelError


def _refused() -> str:
    with pytest.raises(ModelError) as caught:
        demo_model.demo_folder()
    message = str(caught.value)
    assert message.startswith("Could not make the demo recogniser: "), message
    assert "\n" not in message and "Traceback" not in message and "Errno" not in message
    return message


@pytest.mark.parametrize("disk_state", ["full", "read-only"])
def test_the_demo_recogniser_on_a_refusing_disk_is_one_sentence(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, disk_state: str
) -> None:
    home = tmp_path / "home"
    monkeypatch.setenv("CHATTTS_STUDIO_HOME", str(home))
    with small_disk(home / "cache", size="256k") as cache:
        (cache / "asr").mkdir()
        (cache / "asr" / "kept.txt").write_text("made before", encoding="utf-8")
        before = files_under(cache)
        if disk_state == "full":
            fill(cache, leave=4096)
        else:
            read_only(cache)
        message = _refused()
        expected = "the disk is full" if disk_state == "full" else "the file system is read-only"
        assert expected in message, message
        assert files_under(cache) == before
        assert sorted(p.name for p in (cache / "asr").iterdir()) == ["kept.txt"]
