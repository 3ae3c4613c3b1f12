"""The demo models (the recogniser's and the speaker encoder's, random weights made on first
use) in a cache the disk refuses (full, read-only): one sentence that says why in the app's
words, nothing half-made left, and what the cache held before as it was."""

from collections.abc import Callable
from pathlib import Path

import pytest
from disk_faults import files_under, fill, read_only, small_disk

from chattts_studio.core.asr import demo_model as asr_demo
from chattts_studio.core.errors import ModelError
from chattts_studio.core.speaker import demo_model as speaker_demo

# Each demo: its folder in the cache, how it is made, and how its refusal starts.
DEMOS: dict[str, tuple[str, Callable[[], object], str]] = {
    "recogniser": ("asr", asr_demo.demo_folder, "Could not make the demo recogniser: "),
    "speaker": ("speaker", speaker_demo.demo_file, "Could not make the demo speaker encoder: "),
}


@pytest.mark.parametrize("disk_state", ["full", "read-only"])
@pytest.mark.parametrize("demo", list(DEMOS))
def test_a_demo_model_on_a_refusing_disk_is_one_sentence(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, demo: str, disk_state: str
) -> None:
    folder, make, refusal = DEMOS[demo]
    home = tmp_path / "home"
    monkeypatch.setenv("CHATTTS_STUDIO_HOME", str(home))
    with small_disk(home / "cache", size="256k") as cache:
        (cache / folder).mkdir()
        (cache / folder / "kept.txt").write_text("made before", encoding="utf-8")
        before = files_under(cache)
        if disk_state == "full":
            fill(cache, leave=4096)
        else:
            read_only(cache)
        with pytest.raises(ModelError) as caught:
            make()
        message = str(caught.value)
        assert message.startswith(refusal), message
        assert "\n" not in message and "Traceback" not in message and "Errno" not in message
        expected = "the disk is full" if disk_state == "full" else "the file system is read-only"
        assert expected in message, message
        assert files_under(cache) == before
        assert sorted(p.name for p in (cache / folder).iterdir()) == ["kept.txt"]
