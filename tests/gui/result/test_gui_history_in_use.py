"""Two windows share the history under Windows' rules (tests/windows_rules.py, applied to this
folder): one drops a result the other still shows (its audio mapped), which Windows will not
delete. The window says so in one sentence, the result is never shown again, and its files go
at the window's next change once the other window let go."""

import gc
from pathlib import Path

import numpy as np
from audio_fakes import noise
from windows_rules import WindowsRules

from chattts_studio.core.engine.request import (
    AudioChunk,
    JobSummary,
    SegmentResult,
    SynthesisRequest,
)
from chattts_studio.core.results.history import HistoryStore
from chattts_studio.core.services.synthesize import SynthesisJob, SynthesisOutcome
from chattts_studio.gui.result.panel import ResultPanel


def run(panel: ResultPanel, seed: int, text: str) -> None:
    panel.begin(0.25)
    clip = noise(12.5, seed)  # 1.2 MB
    panel.add_chunk(AudioChunk(0, clip, True))
    result = SegmentResult(0, 1, "s0", clip, 10, 0.1, 1)
    panel.add_segment(result)
    request = SynthesisRequest(text, refine_text=False, segment_size=10, batch_size=1)
    summary = JobSummary(1, 12.5, 1.0, 100, 0.5, None)
    panel.end(SynthesisOutcome(SynthesisJob(request, 2, "voice seed 2"), [result], summary, ""))


def test_a_result_another_window_shows_is_deleted_once_it_lets_go(
    qtbot, tmp_path: Path, windows_rules: WindowsRules
) -> None:  # type: ignore[no-untyped-def]
    folder = tmp_path / "history"
    first = ResultPanel(history=HistoryStore(folder))
    qtbot.addWidget(first)
    first.stream_box.setChecked(False)
    for n in range(3):
        run(first, n, f"result {n}")
    other = ResultPanel(history=HistoryStore(folder))  # another window, showing them all
    qtbot.addWidget(other)
    oldest = other.history[0].store.folder
    view = other.history[0].outcome.results[0].audio
    said: list[str] = []
    first.message.connect(said.append)
    first.set_history_limit(3 * 2**20)  # room for two: the oldest goes
    qtbot.waitUntil(lambda: bool(said), timeout=10_000)
    assert said == [
        "Removed results still on disk: 1. A file of theirs is in use (another window or "
        "program); they are deleted once it is closed."
    ]
    assert [e.outcome.job.request.text for e in first.history] == ["result 1", "result 2"]
    assert oldest.is_dir() and "audio.f32" in [p.name for p in oldest.iterdir()]
    assert float(np.abs(view).max()) > 0  # the other window still plays it
    assert [len(HistoryStore(folder).restore())] == [2]  # never a result again
    # The other window closes; the first one's next change removes the files.
    other.close()
    for entry in other.history:
        entry.store.close()
    other.history.clear()
    other.store, other.results = None, []
    del view
    gc.collect()
    run(first, 3, "result 3")
    qtbot.waitUntil(lambda: not oldest.exists(), timeout=10_000)
    assert len(said) == 1


def test_a_result_the_history_cannot_keep_stays_shown_with_one_sentence(
    qtbot, tmp_path: Path, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    import errno

    from chattts_studio.core.results.result_store import ResultStore

    def full(self, info=None) -> None:  # type: ignore[no-untyped-def]
        raise OSError(errno.ENOSPC, "No space left on device")

    panel = ResultPanel(history=HistoryStore(tmp_path / "history"))
    qtbot.addWidget(panel)
    panel.stream_box.setChecked(False)
    said: list[str] = []
    panel.message.connect(said.append)
    monkeypatch.setattr(ResultStore, "finish", full)
    run(panel, 0, "kept in memory")
    assert len(said) == 1 and "could not be kept in the history" in said[0]
    assert "the disk is full" in said[0]
    assert [e.outcome.job.request.text for e in panel.history] == ["kept in memory"]
