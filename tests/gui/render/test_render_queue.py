"""The window's render queue, with the tiny demo weights and tiny texts: two jobs
run one after another in the worker with the model it has loaded and both folders hold their
outputs; a finished job opens its folder; a cancelled one keeps its finished segments, the
queue moves on, and the same job added again resumes without making them again."""

import json
from pathlib import Path

import soundfile as sf
from PySide6.QtCore import Qt

from chattts_studio.core.render.journal import JOURNAL
from chattts_studio.core.render.segment_store import STORE
from chattts_studio.core.services.report import Progress
from chattts_studio.gui.render import queue as render_queue
from chattts_studio.gui.worker.jobs import JobKind

RUN_MS = 180_000
FIRST = "第一个。Hello one."
SECOND = "Second text. 第二个。"
THIRD = "你好，朋友。Hello there. 再见，明天见。Bye now."  # two segments at size 10


def quick(window) -> None:  # type: ignore[no-untyped-def]
    """Short segments, one per run group, no refine pass, FLAC chapters."""
    window.controls.segment_slider.setValue(10)
    window.controls.batch_box.setValue(1)
    window.controls.refine_box.setChecked(False)
    window.result.stream_box.setChecked(False)


def journal(folder: Path) -> list[dict]:  # type: ignore[type-arg]
    path = folder / STORE / JOURNAL
    lines = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
    return [json.loads(line) for line in lines if line.strip()]


def test_the_queue_runs_two_jobs_and_opens_a_finished_folder(
    qtbot, make_window, monkeypatch, tmp_path
) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(render_queue, "choose_folder", lambda *_args: tmp_path)
    opened: list[Path] = []
    monkeypatch.setattr(render_queue, "open_folder", lambda folder: opened.append(folder))
    window = make_window()
    quick(window)
    loaded = window.host.worker.engine.loaded
    queue = window.render_jobs.queue
    window.editor.set_text(FIRST)
    window.render_jobs.text_action.trigger()
    window.editor.set_text(SECOND)
    first, second = queue.items[0], queue.add_text()
    assert window.render_jobs.dock.isVisible()
    assert [i.state for i in queue.items] == ["running", "waiting"]  # one at a time
    qtbot.waitUntil(lambda: all(i.state == "done" for i in queue.items), timeout=RUN_MS)
    assert window.host.worker.engine.loaded is loaded  # the loaded model, not a second copy
    for item in (first, second):
        folder = item.spec.folder
        assert folder.parent == tmp_path and item.outcome is not None
        chapters = sorted(folder.glob("*.flac"))
        assert len(chapters) == 1 and sf.info(str(chapters[0])).frames > 0
        listing = json.loads((folder / "chapters.json").read_text(encoding="utf-8"))
        assert len(listing["chapters"]) == 1
        assert len(journal(folder)) == item.outcome.made > 0
        assert "done" in queue.jobs.item(queue.items.index(item)).text()
    assert first.spec.folder != second.spec.folder
    queue.jobs.setCurrentRow(1)
    assert queue.open_button.isEnabled()
    queue.open_button.click()
    assert opened == [second.spec.folder]
    assert window.jobs.current is None and window.synthesis.button.isEnabled()


def test_a_cancelled_job_keeps_its_segments_and_resumes(
    qtbot, make_window, monkeypatch, tmp_path
) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(render_queue, "choose_folder", lambda *_args: tmp_path)
    window = make_window()
    quick(window)
    queue = window.render_jobs.queue
    cancelled: list[int] = []

    def cancel_after_the_first_segment(job, progress) -> None:  # type: ignore[no-untyped-def]
        # In the worker's thread, as the first segment is kept: the job's own cancel (what the
        # queue's Cancel button sets) at exactly this moment.
        if not isinstance(progress, Progress) or job.kind is not JobKind.RENDER:
            return
        if progress.fraction > 0 and not cancelled:
            cancelled.append(1)
            job.cancel.cancel()

    window.host.worker.progress.connect(
        cancel_after_the_first_segment, Qt.ConnectionType.DirectConnection
    )
    window.editor.set_text(THIRD)
    doomed = queue.add_text()
    window.editor.set_text(FIRST)
    after = queue.add_text()  # the queue moves on past the cancelled job
    qtbot.waitUntil(lambda: after.state == "done", timeout=RUN_MS)
    assert doomed.state == "cancelled" and "kept" in doomed.detail
    kept = journal(doomed.spec.folder)
    assert 1 <= len(kept) < 4
    assert all((doomed.spec.folder / STORE / line["file"]).is_file() for line in kept)
    assert not list(doomed.spec.folder.glob("*.flac"))  # no chapter was assembled

    window.host.worker.progress.disconnect(cancel_after_the_first_segment)
    window.editor.set_text(THIRD)
    again = queue.add_text()
    assert again.spec.folder == doomed.spec.folder  # the same job: the same folder
    qtbot.waitUntil(lambda: again.state == "done", timeout=RUN_MS)
    assert again.outcome is not None and again.outcome.kept == len(kept)
    assert again.outcome.made == len(journal(doomed.spec.folder)) - len(kept) > 0
    assert len(list(doomed.spec.folder.glob("*.flac"))) == 1
