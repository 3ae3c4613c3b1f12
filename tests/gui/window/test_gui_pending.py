"""A synthesis asked for while the model loads (or reloads) waits for it and then runs; a
load that fails drops it with the load's reason; Esc drops what waits.

The waiting is the window's logic: those tests run on the stand-in engine, inline, where a
load asked for has not run until the event loop turns, so a click lands while the model is
loading without a slowed load. The damaged folder needs the real engine's file checks."""

import shutil

import pytest

from chattts_studio.core.engine.request import Precision
from chattts_studio.core.weights import models
from chattts_studio.gui.worker.jobs import JobKind

RUN_MS = 120_000
TEXT = "你好。Hello."


pytestmark = pytest.mark.window(ready="idle")
STANDIN = pytest.mark.window(ready="idle", engine="standin")


def prepare(window) -> None:  # type: ignore[no-untyped-def]
    window.editor.set_text(TEXT)
    window.controls.refine_box.setChecked(False)
    window.result.stream_box.setChecked(False)


@STANDIN
def test_synthesize_clicked_while_loading_runs_when_the_model_is_ready(qtbot, make_window) -> None:  # type: ignore[no-untyped-def]
    window = make_window(model="demo", wait=False)
    prepare(window)
    assert window.jobs.current is not None and window.model.loaded is None  # still loading
    window.synthesis.button.click()
    assert window.synthesis.button.text().startswith("Waiting for the model")
    assert "starts as soon as the model is ready" in window.messages.notice.text()
    qtbot.waitUntil(lambda: bool(window.result.history), timeout=RUN_MS)
    assert window.messages.notice.text().startswith("Done"), window.messages.notice.text()
    assert len(window.result.audio) > 0
    assert window.live.stage.text() == "done"


@STANDIN
def test_ctrl_enter_during_a_precision_reload_runs_with_the_new_precision(
    qtbot, make_window
) -> None:  # type: ignore[no-untyped-def]
    window = make_window(model="demo", device="cpu")
    prepare(window)
    window.controls.precision_buttons[Precision.BF16].click()  # reloads in the worker
    assert window.jobs.current is not None
    window.menu_actions.synth.trigger()  # Ctrl+Enter
    assert window.synthesis.button.text().startswith("Waiting for the model")
    qtbot.waitUntil(lambda: bool(window.result.history), timeout=RUN_MS)
    outcome = window.result.history[-1].outcome
    assert outcome.loaded is not None and outcome.loaded.precision is Precision.BF16
    assert window.messages.notice.text().startswith("Done"), window.messages.notice.text()


def test_a_request_waiting_on_a_load_that_fails_ends_with_the_loads_reason(
    qtbot, make_window, tmp_path
) -> None:  # type: ignore[no-untyped-def]
    folder = tmp_path / "damaged"
    shutil.copytree(models.resolve("demo").folder, folder)
    target = folder / "asset" / "Vocos.safetensors"
    data = bytearray(target.read_bytes())
    data[100] ^= 0xFF
    target.write_bytes(bytes(data))
    window = make_window(model=str(folder), wait=False)
    prepare(window)
    window.synthesis.button.click()
    qtbot.waitUntil(lambda: window.jobs.current is None, timeout=RUN_MS)
    text = window.messages.notice.text()
    assert "Vocos.safetensors does not match" in text, text
    assert "The waiting request was not run." in text
    assert window.synthesis.button.text().startswith("Synthesize")
    assert not window.result.history  # no job ran


@STANDIN
def test_esc_while_waiting_drops_the_request_and_the_next_click_works(qtbot, make_window) -> None:  # type: ignore[no-untyped-def]
    window = make_window(model="demo", wait=False)
    prepare(window)
    assert window.jobs.running(JobKind.LOAD)  # asked for, not run yet
    window.synthesis.button.click()
    assert window.jobs.waiting is not None
    window.menu_actions.cancel.trigger()  # Esc
    assert window.jobs.waiting is None
    assert window.synthesis.button.text().startswith("Synthesize")
    assert window.messages.notice.text() == "The waiting request is cancelled."
    qtbot.waitUntil(lambda: window.model.loaded is not None, timeout=RUN_MS)  # the load went on
    assert window.jobs.current is None  # the load's handlers have run: nothing else came
    assert not window.result.history  # nothing ran
    window.synthesis.button.click()
    assert window.jobs.current is not None
    qtbot.waitUntil(lambda: bool(window.result.history), timeout=RUN_MS)
    assert window.messages.notice.text().startswith("Done"), window.messages.notice.text()
