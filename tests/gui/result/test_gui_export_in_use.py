"""Save over a file the user still has open in a media player, under Windows' rules (applied
to this folder: tests/windows_rules.py): Windows will not replace it, so the save is one
sentence naming that file, beside Save, and nothing changes, not even the other files of a
per-segment save; closed, the same save works."""

import os
import stat
from pathlib import Path

import pytest
import soundfile as sf
from audio_fakes import noise
from windows_rules import WindowsRules

from chattts_studio.core.engine.request import AudioChunk, SegmentResult
from chattts_studio.core.results.history import HistoryStore
from chattts_studio.gui.result.panel import ResultPanel


@pytest.fixture
def panel(qtbot, tmp_path: Path):  # type: ignore[no-untyped-def]
    """A panel holding a finished result of two segments (no engine: the audio as it comes)."""
    from chattts_studio.core.engine.request import JobSummary, SynthesisRequest
    from chattts_studio.core.services.synthesize import SynthesisJob, SynthesisOutcome

    panel = ResultPanel(history=HistoryStore(tmp_path / "history"))
    panel.stream_box.setChecked(False)
    qtbot.addWidget(panel)
    panel.begin(0.25)
    results = []
    for index, clip in enumerate([noise(1.0, 1), noise(1.5, 2)]):
        panel.add_chunk(AudioChunk(index, clip, True))
        result = SegmentResult(index, 2, f"s{index}", clip, 10, 0.1, 1)
        panel.add_segment(result)
        results.append(result)
    request = SynthesisRequest("text", refine_text=False, segment_size=10, batch_size=1)
    summary = JobSummary(2, 2.5, 0.25, 100, 0.5, None)
    panel.end(SynthesisOutcome(SynthesisJob(request, 2, "voice seed 2"), results, summary, ""))
    return panel


def in_use_note(target: Path) -> str:
    return (
        f"Cannot save {target}: it is open in another program; close it there and try again. "
        "Nothing was changed."
    )


def test_a_file_open_in_a_player_is_named_and_kept(
    panel: ResultPanel, tmp_path: Path, windows_rules: WindowsRules
) -> None:
    out = tmp_path / "out"
    out.mkdir()
    target = out / "speech.wav"
    target.write_bytes(b"the last export, playing")
    said: list[str] = []
    panel.message.connect(said.append)
    with open(target, "rb"):  # the media player
        assert panel.save_to(target) == []
    assert panel.save_note.text() == in_use_note(target) and said == [in_use_note(target)]
    assert windows_rules.refused
    assert target.read_bytes() == b"the last export, playing"
    assert sorted(p.name for p in out.iterdir()) == ["speech.wav"]  # no staging left
    assert panel.save_to(target) == [target]  # closed: saved
    assert sf.info(str(target)).frames == panel.length


def test_a_per_segment_save_with_one_file_held_changes_none(
    panel: ResultPanel, tmp_path: Path, windows_rules: WindowsRules
) -> None:
    out = tmp_path / "out"
    out.mkdir()
    panel.per_segment.setChecked(True)
    first, second = out / "part_001.wav", out / "part_002.wav"
    assert panel.save_to(out / "part.wav") == [first, second]
    umask = os.umask(0o022)
    os.umask(umask)
    assert {stat.S_IMODE(p.stat().st_mode) for p in (first, second)} == {0o666 & ~umask}
    saved = {p: p.read_bytes() for p in (first, second)}
    before = {first: b"an older take, one", second: b"an older take, two"}
    for path, body in before.items():
        path.write_bytes(body)
    os.chmod(first, 0o600)  # the user's own choice, kept by a save over it
    with open(second, "rb"):
        assert panel.save_to(out / "part.wav") == []
    assert panel.save_note.text() == in_use_note(second)
    assert {p: p.read_bytes() for p in (first, second)} == before  # neither changed
    assert sorted(p.name for p in out.iterdir()) == ["part_001.wav", "part_002.wav"]
    assert panel.save_to(out / "part.wav") == [first, second]
    assert {p: p.read_bytes() for p in (first, second)} == saved
    assert stat.S_IMODE(first.stat().st_mode) == 0o600


def test_a_save_on_the_pool_says_it_too(
    qtbot, panel: ResultPanel, tmp_path: Path, windows_rules: WindowsRules
) -> None:  # type: ignore[no-untyped-def]
    target = tmp_path / "speech.flac"
    target.write_bytes(b"old")
    with open(target, "rb"):
        panel.export(target)
        qtbot.waitUntil(lambda: not panel.exporting, timeout=10_000)
    assert panel.save_note.text() == in_use_note(target)
    assert target.read_bytes() == b"old"
    assert panel.save_button.isEnabled()
