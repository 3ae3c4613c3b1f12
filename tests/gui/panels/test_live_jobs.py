"""The live panel follows every kind of job, not only a synthesis: a project's takes and its
check report their own progress there (the engine's last job is not shown as theirs), and
their bar ends full."""

from pathlib import Path

import pytest
from project_window import make_project, prepare_project
from PySide6.QtCore import QTimer

RUN_MS = 120_000
TEXT = "第一句话在这里。第二句话在这里。第三句话在这里。"


pytestmark = pytest.mark.window(ready="idle")


def _watch(window) -> list[tuple[str, str, str, int]]:  # type: ignore[no-untyped-def]
    """Samples (stage, progress, RTF, bar) every 10 ms: a job on the demo weights is short."""
    seen: list[tuple[str, str, str, int]] = []
    live = window.live
    timer = QTimer(window)
    timer.setInterval(10)
    timer.timeout.connect(
        lambda: seen.append(
            (live.stage.text(), live.progress.text(), live.job_rtf.text(), live.bar.value())
        )
    )
    timer.start()
    return seen


def test_project_takes_and_checks_show_their_own_progress(
    qtbot, make_window, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    window = make_window(model="demo")
    prepare_project(window, tmp_path / "live.chattts", monkeypatch, TEXT)
    idle = lambda: window.jobs.current is None  # noqa: E731

    made = _watch(window)
    make_project(qtbot, window)
    running = [s for s in made if s[0] == "takes"]
    assert running, {s[0] for s in made}
    assert any(p.endswith("of 3 takes made") for _, p, _, _ in running), running
    assert all(rtf == "-" for _, _, rtf, _ in running)  # no other job's RTF shown as its own
    assert window.live.bar.value() == window.live.bar.maximum()
    # The job's last count stays after it, with the stage done.
    assert window.live.stage.text() == "done"
    assert window.live.progress.text() == "3 of 3 takes made"

    checked = _watch(window)
    window.projects.panel.check_button.click()
    qtbot.waitUntil(lambda: idle() and len(checked) > 0, timeout=RUN_MS)
    qtbot.waitUntil(idle, timeout=RUN_MS)
    stages = {s[0] for s in checked}
    assert "checking takes" in stages, stages
    lines = [p for stage, p, _, _ in checked if stage == "checking takes"]
    assert any(p.endswith("of 3 takes checked") for p in lines), lines
    # The project's takes job ended "done": the check never showed its figures as its own.
    assert not any(stage == "done" and p.startswith("3 segments") for stage, p, _, _ in checked)
    assert window.live.bar.value() == window.live.bar.maximum()


def test_a_render_shows_its_own_progress_and_the_engine_s_figures(
    qtbot, make_window, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A render is many engine calls: its own count drives the bar and the line, and the
    engine's figures (RTF) show once the engine makes audio for it."""
    from chattts_studio.gui.render import queue as render_queue

    monkeypatch.setattr(render_queue, "choose_folder", lambda *_args: tmp_path)
    window = make_window(model="demo")
    window.controls.segment_slider.setValue(10)
    window.controls.refine_box.setChecked(False)
    window.editor.set_text("你好。Hello there. 再见。Bye now. 第一个。Hello one.")
    seen = _watch(window)
    window.render_jobs.text_action.trigger()
    item = window.render_jobs.queue.items[0]
    qtbot.waitUntil(lambda: item.state == "done", timeout=RUN_MS)
    qtbot.waitUntil(lambda: window.jobs.current is None, timeout=RUN_MS)
    rendering = [s for s in seen if s[0] == "render"]
    assert rendering, {s[0] for s in seen}
    assert any(" segments, " in p for _, p, _, _ in rendering), rendering
    assert any(rtf != "-" for _, _, rtf, _ in rendering), rendering
    assert window.live.stage.text() == "done"
    assert window.live.bar.value() == window.live.bar.maximum()
