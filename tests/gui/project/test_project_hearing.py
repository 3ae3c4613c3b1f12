"""The segment editor's speech recognition actions in the real window, on the demo weights and
the demo recogniser (both random: the transcripts are noise, so every take is heard as wrong;
the plumbing is real, sherpa-onnx included): Check all hears every chosen take once and shows
its error rate; Best of N tops every segment but a locked one up to N takes, hears them all and
chooses the best heard; Re-roll flagged until clean makes at most Tries new takes of each
flagged segment, keeping every take."""

from pathlib import Path

import pytest
from project_window import make_project, prepare_project

from chattts_studio.core.asr.score import percent
from chattts_studio.core.project import reading, store
from chattts_studio.core.project.model import Project
from chattts_studio.gui.project.segment_model import Column

RUN_MS = 120_000
TEXT = "第一句话在这里。第二句话在这里。第三句话在这里。"


pytestmark = pytest.mark.window(ready="idle")


def _best_heard(project: Project, number: int) -> int:
    """The take best_by_check should have chosen: fewest flags, then lowest error, then first."""
    found = reading.take_flags(project)
    segment = project.at(number)
    pool = [t for t in segment.takes if segment.current(t)]
    key = lambda t: (len(found[(segment.id, t.id)]), t.asr.score, t.id)  # noqa: E731
    return min(pool, key=key).id


def test_check_all_best_of_n_and_until_clean_in_the_window(
    qtbot, make_window, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    window = make_window(model="demo")
    prepare_project(window, tmp_path / "heard.chattts", monkeypatch, TEXT)
    make_project(qtbot, window)
    idle = lambda: window.jobs.current is None  # noqa: E731
    folder, panel = window.projects.folder, window.projects.panel
    assert panel.model.index(0, Column.HEARD).data() == ""  # not heard yet

    panel.check_button.click()
    qtbot.waitUntil(
        lambda: idle() and store.load(folder).at(3).chosen_take.asr is not None, timeout=RUN_MS
    )
    checked = store.load(folder)
    for number, segment in enumerate(checked.segments, 1):
        take = segment.chosen_take
        assert take is not None and take.asr is not None and len(segment.takes) == 1
        assert take.asr.demo  # the demo recogniser heard it, and the check says so
        shown = panel.model.index(number - 1, Column.HEARD)
        rate = percent(take.asr.score)
        qtbot.waitUntil(lambda s=shown, r=rate: s.data() == f"{r} (demo)")
        tip = shown.data(0x03)  # ToolTipRole: who heard, and the transcript
        assert tip.startswith("Demo recogniser (random weights): not a real hearing.")
        assert "\nHeard: " in tip
    assert panel.model.flagged_count() == 3  # noise heard against a text: all flagged ASR
    said = window.messages.notice.text()
    assert said.startswith("3 takes checked in ") and "made" not in said
    assert "demo recogniser (random weights): not a real hearing" in said

    # Best of 3, segment 2 locked: its one take stays, the others get two more each.
    panel.lock_wanted.emit([2], True)
    qtbot.waitUntil(lambda: store.load(folder).at(2).locked)
    panel.takes_box.setValue(3)
    panel.best_button.click()
    qtbot.waitUntil(lambda: idle() and len(store.load(folder).at(3).takes) == 3, timeout=RUN_MS)
    best = store.load(folder)
    assert [len(s.takes) for s in best.segments] == [3, 1, 3]
    assert best.at(2).takes == checked.at(2).takes
    assert best.at(1).takes[0] == checked.at(1).takes[0]  # the first take kept as it was
    assert all(t.asr is not None for s in best.segments for t in s.takes)
    for number in (1, 3):
        assert best.at(number).chosen == _best_heard(best, number)

    # Until clean, one try: each flagged unlocked segment gets exactly one new take, heard.
    panel.tries_box.setValue(1)
    panel.clean_button.click()
    qtbot.waitUntil(lambda: idle() and len(store.load(folder).at(3).takes) == 4, timeout=RUN_MS)
    clean = store.load(folder)
    assert [len(s.takes) for s in clean.segments] == [4, 1, 4]
    assert all(t.asr is not None for s in clean.segments for t in s.takes)
    assert [s.takes[:3] for s in clean.segments[::2]] == [s.takes for s in best.segments[::2]]
    assert "made in" in window.messages.notice.text()
    assert "every take heard" in window.messages.notice.text()


def test_without_the_official_recogniser_real_weights_get_the_sentence(private_home) -> None:  # type: ignore[no-untyped-def]
    """With real TTS weights the demo recogniser would check speech with noise: the window says
    how to get the official one instead (the job's failure sentence)."""
    from types import SimpleNamespace

    from chattts_studio.core.errors import ModelError
    from chattts_studio.core.services.project_job import recognizer_for

    official = SimpleNamespace(loaded=SimpleNamespace(info=SimpleNamespace(random_weights=False)))
    with pytest.raises(ModelError, match="model download-asr' or use the Models dialog"):
        recognizer_for(official)  # type: ignore[arg-type]
