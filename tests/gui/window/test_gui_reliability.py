"""The real window under faults and bad input: a crash, damaged settings, cancel at every stage,
errors inside the worker, out of memory, a damaged model, a failed download, a lost audio
device, closing mid-job, hostile text. Each test injects the fault into the window and checks
what a person would see: a message, nothing lost, and a worker that still works afterwards."""

import shutil
import threading
import time
from pathlib import Path
from types import SimpleNamespace

import audio_fakes
import pytest
import soundfile as sf
from PySide6.QtCore import QSettings
from PySide6.QtGui import QGuiApplication, QTextCursor
from window_steps import SHORT, fast

import chattts_studio.core.engine.producers
import chattts_studio.core.weights.download
import chattts_studio.core.weights.models
from chattts_studio.core.engine.chattts.chat import RefinePass
from chattts_studio.core.engine.decode.loop import FastDecoder
from chattts_studio.core.engine.engine import Engine
from chattts_studio.core.engine.request import Precision
from chattts_studio.core.errors import AudioError, Cancelled, DownloadError
from chattts_studio.core.weights import models
from chattts_studio.gui.common import dialogs
from chattts_studio.gui.settings import Key, Settings

LOAD_MS = 120_000
RUN_MS = 120_000


pytestmark = pytest.mark.window(ready="idle")  # a load that fails ends too


def idle(qtbot, window, timeout: int = RUN_MS) -> None:  # type: ignore[no-untyped-def]
    qtbot.waitUntil(lambda: window.jobs.current is None, timeout=timeout)
    assert window.synthesis.button.text().startswith("Synthesize")


def run(qtbot, window) -> None:  # type: ignore[no-untyped-def]
    window.menu_actions.synth.trigger()
    assert window.jobs.current is not None, window.messages.notice.text()
    idle(qtbot, window)


def still_works(qtbot, window) -> None:  # type: ignore[no-untyped-def]
    """The worker takes the next job and finishes it: a short synthesis gives audio."""
    fast(window, "你好。")
    run(qtbot, window)
    assert window.messages.notice.text().startswith("Done"), window.messages.notice.text()
    assert len(window.result.audio) > 0


def wait_for_cancel(engine_of, seconds: float = 20.0) -> None:  # type: ignore[no-untyped-def]
    """Hold the worker inside a stage until the window has asked it to cancel. `engine_of`
    gives what knows (the window's engine while it runs a job, or the job's own token)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            if engine_of().cancelled:
                return
        except (KeyError, AttributeError):  # not known yet: the UI thread records the job
            pass
        time.sleep(0.01)


def hold_once(real, engine_of):  # type: ignore[no-untyped-def]
    """Wrap `real` so its first call waits for a cancel before running; `entered` tells the
    test that the worker has reached that stage."""
    entered = threading.Event()

    def held(*args, **kwargs):  # type: ignore[no-untyped-def]
        if not entered.is_set():
            entered.set()
            wait_for_cancel(engine_of)
        return real(*args, **kwargs)

    return held, entered


# -- 1. nothing lost ------------------------------------------------------------------------


def test_the_text_and_settings_survive_a_crash(qtbot, make_window, private_home) -> None:  # type: ignore[no-untyped-def]
    window = make_window(model=None, wait=False)
    window.editor.set_text("第一段。")
    window.editor.editor.moveCursor(QTextCursor.MoveOperation.End)
    qtbot.keyClicks(window.editor.editor, " Typed just before the crash.")
    window.controls.segment_slider.setValue(33)
    draft = private_home / "editor-draft.txt"
    # Written a moment after typing stops, without closing the window.
    qtbot.waitUntil(
        lambda: draft.is_file() and "crash" in draft.read_text(encoding="utf-8"), timeout=10_000
    )
    assert draft.read_text(encoding="utf-8") == "第一段。 Typed just before the crash."
    ini = private_home / "gui-settings.ini"
    saved = Settings(QSettings(str(ini), QSettings.Format.IniFormat))
    assert saved.number(Key.SEGMENT_SIZE) == 33
    assert not [p for p in private_home.iterdir() if ".part" in p.name]  # atomic: no temp left
    # The crash: no closeEvent ever runs; the next start has only what is on disk.
    again = make_window(model=None, wait=False)
    assert again.editor.text() == "第一段。 Typed just before the crash."
    assert again.controls.segment_slider.value() == 33
    assert "2 segments ·" in again.editor.counts.text()  # counted at start: the first apart


def test_a_draft_that_cannot_be_written_or_read_is_reported(
    qtbot, make_window, private_home
) -> None:  # type: ignore[no-untyped-def]
    (private_home / "editor-draft.txt").mkdir()  # something in the way of the file
    window = make_window(model=None, wait=False)
    assert "cannot be read" in window.messages.alert_text.text()
    window.editor.set_text("还在这里。")
    window.persistence.persist()
    assert "Cannot keep the text in" in window.messages.notice.text()
    assert "still in the editor" in window.messages.notice.text()
    assert window.editor.text() == "还在这里。"


# -- 2. damaged, empty and newer settings ----------------------------------------------------

BAD_SETTINGS = {
    "garbage": (b"\xff\xfe\x00\x81garbage\x00[[[\n\x07\x08", "was damaged"),
    "not settings": (b"segment_size 33\nthis is not an ini file\n", "was damaged"),
    "empty": (b"", "was empty"),
    "newer": (b"[General]\nversion=99\nsegment_size=33\nmodel=future-model\n", "newer version"),
}


@pytest.mark.parametrize("kind", list(BAD_SETTINGS))
def test_bad_settings_files_start_with_defaults_and_say_so(
    qtbot, make_window, private_home, kind: str
) -> None:  # type: ignore[no-untyped-def]
    content, said = BAD_SETTINGS[kind]
    ini = private_home / "gui-settings.ini"
    ini.write_bytes(content)
    window = make_window(model=None, wait=False)
    assert window.messages.alert.isVisible()
    assert said in window.messages.alert_text.text()
    assert window.controls.segment_slider.value() == 50  # the default
    assert window.model.loaded is None and window.jobs.current is None  # no model from the file
    window.controls.segment_slider.setValue(40)
    window.close()
    if kind == "newer":
        assert ini.read_bytes() == content  # a newer app's file is never rewritten
        return
    if content:
        assert (private_home / "gui-settings.ini.damaged").read_bytes() == content
    again = Settings(QSettings(str(ini), QSettings.Format.IniFormat))
    assert again.number(Key.SEGMENT_SIZE) == 40
    assert again.number(Key.VERSION) == 1


# -- 3. cancel at every stage ----------------------------------------------------------------


def test_cancel_while_loading_keeps_the_model_in_use(qtbot, make_window, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    window = make_window()
    held, entered = hold_once(
        chattts_studio.core.weights.models.ensure, lambda: window.host.worker.engine
    )
    monkeypatch.setattr(chattts_studio.core.weights.models, "ensure", held)
    window.controls.precision_buttons[Precision.BF16].setChecked(True)  # reloads the model
    assert window.jobs.current is not None
    qtbot.waitUntil(entered.is_set, timeout=LOAD_MS)
    window.menu_actions.cancel.trigger()
    idle(qtbot, window, LOAD_MS)
    assert window.messages.notice.text().startswith("Loading cancelled. Still loaded:"), (
        window.messages.notice.text()
    )
    assert window.controls.precision() is Precision.FP32  # the controls show what is loaded
    assert window.model.loaded is not None and window.model.loaded.precision is Precision.FP32
    assert not window.model.progress.isVisible()
    still_works(qtbot, window)


def test_cancel_synthesis_at_the_earliest_and_latest_moments(
    qtbot, make_window, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    window = make_window()
    engine = window.host.worker.engine
    # Earliest: in the same moment as the click, before the worker has even begun (or while
    # the engine starts the job, which clears its own cancel flag).
    fast(window, SHORT, refine=True)
    window.menu_actions.synth.trigger()
    window.menu_actions.cancel.trigger()
    idle(qtbot, window)
    assert window.messages.notice.text().startswith("Cancelled;"), window.messages.notice.text()
    assert window.live.stage.text() == "cancelled"
    still_works(qtbot, window)

    # In the refine stage (refine on): held there until the cancel arrives.
    # (RefinePass.step: whichever pass runs, stock's loop or the exported step's)
    held, entered = hold_once(RefinePass.step, lambda: engine)
    monkeypatch.setattr(RefinePass, "step", held)
    fast(window, SHORT, refine=True)
    window.menu_actions.synth.trigger()
    qtbot.waitUntil(entered.is_set, timeout=RUN_MS)
    window.menu_actions.cancel.trigger()
    idle(qtbot, window)
    assert window.messages.notice.text() == "Cancelled; kept 0 finished segments."
    assert len(window.result.audio) == 0  # nothing half-made is offered as a result

    # Latest: while the vocoder makes the last segment. Everything finished is kept.
    real_result = chattts_studio.core.engine.producers._result
    entered = threading.Event()

    def last_result(ctx, unit, *rest):  # type: ignore[no-untyped-def]
        # The last segment's audio exists; its result is not handed over yet.
        if unit.key == ctx.count - 1 and not entered.is_set():
            entered.set()
            wait_for_cancel(lambda: engine)
        return real_result(ctx, unit, *rest)

    monkeypatch.setattr(chattts_studio.core.engine.producers, "_result", last_result)
    fast(window, SHORT)
    window.menu_actions.synth.trigger()
    qtbot.waitUntil(entered.is_set, timeout=RUN_MS)
    window.menu_actions.cancel.trigger()
    idle(qtbot, window)
    count = window.result.history[-1].outcome.results[0].segments
    assert count >= 2
    assert (
        window.messages.notice.text()
        == f"Cancelled; kept {count} finished segments: save with Save…"
    )
    assert len(window.result.results) == count
    assert window.result.history[-1].cancelled
    still_works(qtbot, window)


def test_cancel_audition_from_its_dialog(qtbot, make_window, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    window = make_window()
    engine = window.host.worker.engine
    # Held before the engine starts: the cancel reaches the job's token all the same.
    held, entered = hold_once(Engine.audition.__get__(engine), lambda: window.jobs.current.cancel)
    monkeypatch.setattr(engine, "audition", held)
    window.auditions.show_audition()
    dialog = window.auditions.dialog
    dialog.sentence.setText("你好。")
    dialog.generate.click()
    assert dialog.cancel.isEnabled() and not dialog.generate.isEnabled()
    qtbot.waitUntil(entered.is_set, timeout=RUN_MS)
    dialog.cancel.click()
    idle(qtbot, window)
    assert dialog.status.text() == "Audition cancelled."
    assert dialog.generate.isEnabled() and not dialog.cancel.isEnabled()
    assert dialog.candidates == []
    still_works(qtbot, window)


def test_failed_and_cancelled_exports_leave_no_file(
    qtbot, make_window, monkeypatch, tmp_path
) -> None:  # type: ignore[no-untyped-def]
    window = make_window()
    fast(window)
    run(qtbot, window)
    assert len(window.result.results) >= 2
    out = tmp_path / "out"
    out.mkdir()
    real_write = sf.SoundFile.write  # saving streams blocks from the result's store
    calls: list[int] = []

    def failing_write(self, data):  # type: ignore[no-untyped-def]
        calls.append(1)
        if len(calls) >= 2:  # the disk gives out half way through a file
            real_write(self, data[: len(data) // 2])
            raise RuntimeError("Error writing data to file")
        return real_write(self, data)

    def save() -> None:  # Save… as the menu does it; the file is written on the thread pool
        window.menu_actions.save.trigger()
        qtbot.waitUntil(lambda: not window.result.exporting)

    target = out / "speech.wav"
    chosen: list[Path | None] = [target]
    monkeypatch.setattr(dialogs, "save_audio_file", lambda *_args: chosen[0])
    with monkeypatch.context() as m:
        m.setattr(sf.SoundFile, "write", failing_write)
        calls.append(1)  # the next write is the one that fails
        save()
        assert window.messages.notice.text().startswith(f"Cannot save {target}"), (
            window.messages.notice.text()
        )
        assert list(out.iterdir()) == []
        calls.clear()  # one file per segment: the second one fails
        window.result.per_segment.setChecked(True)
        save()
        assert window.messages.notice.text().startswith("Cannot save"), (
            window.messages.notice.text()
        )
        assert list(out.iterdir()) == []  # all or none
    # The save dialog cancelled, a folder, a NUL byte, a missing folder: a sentence, no file.
    window.result.per_segment.setChecked(False)
    chosen[0] = None
    window.messages.notice.clear()
    save()
    assert window.messages.notice.text() == ""
    for bad, said in [
        (out, "is a folder"),
        (out / "a\0b.wav", "NUL character"),
        (out / "missing" / "x.wav", "does not exist"),
    ]:
        chosen[0] = bad
        save()
        assert said in window.messages.notice.text(), window.messages.notice.text()
    assert list(out.iterdir()) == [] and not tmp_path.joinpath("out.wav").exists()
    # Saving still works, and all of it.
    chosen[0] = target
    save()
    data, rate = sf.read(target, dtype="float32")
    assert rate == 24_000 and len(data) == len(window.result.audio)


# -- 4. an error inside the worker -----------------------------------------------------------


def test_an_error_inside_the_worker_keeps_the_finished_segments(
    qtbot, make_window, tmp_path
) -> None:  # type: ignore[no-untyped-def]
    window = make_window()
    real_run = FastDecoder.run

    def broken_run(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        done = 0
        for item in real_run(self, *args, **kwargs):
            if done:
                raise RuntimeError("simulated fault in the decoder")
            done += item is not None
            yield item

    fast(window, SHORT)
    with pytest.MonkeyPatch.context() as m:
        m.setattr(FastDecoder, "run", broken_run)
        run(qtbot, window)
    text = window.messages.notice.text()
    assert "RuntimeError: simulated fault in the decoder" in text
    assert "1 finished segment kept" in text
    assert window.live.stage.text() == "error"
    entry = window.result.history[-1]
    assert entry.failed and len(entry.outcome.results) == 1
    assert "stopped by an error" in window.result.history_list.item(0).text()
    target = tmp_path / "kept.wav"
    assert window.result.save_to(target) == [target]
    data, _rate = sf.read(target, dtype="float32")
    assert len(data) == len(entry.outcome.results[0].audio) > 0
    still_works(qtbot, window)


# -- 5. out of memory in the middle of a batch -----------------------------------------------


def test_out_of_memory_lowers_the_batch_and_says_so(qtbot, make_window, inject_oom) -> None:  # type: ignore[no-untyped-def]
    window = make_window()
    failures = inject_oom
    fast(window, SHORT, batch=4)
    run(qtbot, window)
    assert failures and failures[0] > 1
    assert window.messages.notice.text().startswith("Done"), window.messages.notice.text()
    assert "out of memory: batch size lowered to" in window.messages.notice.text()
    assert "out of memory: batch size lowered to" in window.live.note.text()
    assert window.result.history[-1].outcome.results[-1].batch_size < failures[0]


def test_out_of_memory_at_batch_one_reaches_the_window_without_pinning_the_kv_cache(
    qtbot, make_window, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    """The window keeps the last error; that error must not keep the failed decoder's KV
    cache alive through a traceback or an exception context."""
    import weakref

    import torch

    window = make_window()
    caches: list[weakref.ref] = []  # type: ignore[type-arg]

    def always(self, *_args, **_kwargs):  # type: ignore[no-untyped-def]
        caches.append(weakref.ref(self.k_cache))
        raise torch.OutOfMemoryError("CUDA out of memory (injected)")

    monkeypatch.setattr(FastDecoder, "sample_step", always)
    fast(window, SHORT, batch=2)
    run(qtbot, window)
    assert (
        window.messages.last_error is not None and "Out of memory" in window.messages.notice.text()
    )
    assert caches and all(ref() is None for ref in caches), "a failed KV cache is still alive"
    monkeypatch.undo()
    still_works(qtbot, window)


# -- 6. a model damaged while the app runs ---------------------------------------------------


def test_a_model_damaged_while_running_is_reported_on_reload(qtbot, make_window, tmp_path) -> None:  # type: ignore[no-untyped-def]
    folder = tmp_path / "my-model"
    shutil.copytree(models.resolve("demo").folder, folder)  # never the shared demo
    window = make_window(model=str(folder))
    assert window.model.loaded is not None and window.model.loaded.info.kind == "folder"
    victim = max((folder / f for f in models.ASSET_FILES), key=lambda p: p.stat().st_size)
    victim.write_bytes(victim.read_bytes()[: victim.stat().st_size // 2])  # truncated
    window.controls.precision_buttons[Precision.BF16].setChecked(True)  # a reload
    idle(qtbot, window, LOAD_MS)
    text = window.messages.notice.text()
    assert "is damaged" in text and "Still loaded" in text, text
    assert window.controls.precision() is Precision.FP32
    victim.unlink()  # deleted
    window.model.dialog.model_chosen.emit(str(folder))
    idle(qtbot, window, LOAD_MS)
    assert "is incomplete" in window.messages.notice.text(), window.messages.notice.text()
    shutil.rmtree(folder)  # the whole folder gone
    window.model.reload()
    idle(qtbot, window, LOAD_MS)
    assert "Still loaded" in window.messages.notice.text(), window.messages.notice.text()
    still_works(qtbot, window)  # with the model that is in memory


def test_a_damaged_model_at_start_leaves_no_model_and_says_what_to_do(
    qtbot, make_window, tmp_path
) -> None:  # type: ignore[no-untyped-def]
    folder = tmp_path / "my-model"
    shutil.copytree(models.resolve("demo").folder, folder)
    victim = folder / models.ASSET_FILES[0]
    victim.write_bytes(b"\0" * 64)  # corrupted
    window = make_window(model=str(folder))
    assert window.model.loaded is None
    assert "is damaged" in window.messages.notice.text(), window.messages.notice.text()
    assert window.model.label.text() == "No model loaded"
    fast(window, "你好。")
    window.menu_actions.synth.trigger()
    assert window.jobs.current is None
    assert "No model is loaded" in window.messages.notice.text()


# -- 7. a download that fails or is cancelled ------------------------------------------------


def test_a_failed_download_is_shown_in_the_dialog(qtbot, make_window, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    sentence = (
        "Could not download the official weights: the network is unreachable. Partial files "
        "are kept and the next try resumes."
    )

    def failing(progress=None, cancelled=None, *_args, **_kwargs):  # type: ignore[no-untyped-def]
        progress(3 * 2**20, 0)
        raise DownloadError(sentence)

    monkeypatch.setattr(chattts_studio.core.weights.download, "download_official", failing)
    window = make_window()
    window.model.show_dialog()
    dialog = window.model.dialog
    dialog.download.click()
    idle(qtbot, window)
    assert dialog.status_label.text() == sentence
    assert dialog.download.isEnabled() and not dialog.cancel.isEnabled()
    assert window.messages.notice.text() == sentence
    still_works(qtbot, window)


def test_cancel_a_download_from_the_dialog(qtbot, make_window, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    def endless(progress=None, cancelled=None, *_args, **_kwargs):  # type: ignore[no-untyped-def]
        deadline = time.monotonic() + 20
        done = 0
        while time.monotonic() < deadline:
            done += 2**20
            progress(done, 0)
            if cancelled():
                raise Cancelled()
            time.sleep(0.02)
        raise DownloadError("The test download was never cancelled.")

    monkeypatch.setattr(chattts_studio.core.weights.download, "download_official", endless)
    window = make_window()
    window.model.show_dialog()
    dialog = window.model.dialog
    dialog.download.click()
    qtbot.waitUntil(lambda: "MiB downloaded" in dialog.status_label.text(), timeout=RUN_MS)
    dialog.cancel.click()
    idle(qtbot, window)
    assert dialog.status_label.text() == "Download cancelled; the next try resumes."
    assert dialog.download.isEnabled() and not dialog.cancel.isEnabled()
    still_works(qtbot, window)


# -- 8. the audio device disappears ----------------------------------------------------------


def test_an_audio_device_that_disappears_is_a_message_and_saving_works(
    qtbot, make_window, monkeypatch, tmp_path
) -> None:  # type: ignore[no-untyped-def]
    import sounddevice

    window = make_window()
    fast(window, "你好。")
    run(qtbot, window)
    result = window.result
    sentence = (
        "Cannot play audio: Device unavailable [PaErrorCode -9985]. The audio can still be saved."
    )

    def gone(*_args, **_kwargs):  # type: ignore[no-untyped-def]
        raise AudioError(sentence)

    with monkeypatch.context() as m:
        m.setattr(result.player, "open_stream", gone)  # a result plays as a fed stream
        result.play_button.click()  # the stream opens on the feeder's thread: said at a tick
        qtbot.waitUntil(lambda: window.messages.notice.text() == sentence, timeout=5_000)
        assert result.output_note.isVisible()
    assert result.save_to(tmp_path / "a.wav")

    with monkeypatch.context() as m:
        m.setattr(sounddevice, "OutputStream", audio_fakes.VanishingStream)
        result.play_button.click()  # the device is back (asked again), then it vanishes
        assert not result.output_note.isVisible()
        qtbot.waitUntil(
            lambda: "stopped responding" in window.messages.notice.text(), timeout=10_000
        )
    assert result.save_to(tmp_path / "b.wav")
    data, _rate = sf.read(tmp_path / "b.wav", dtype="float32")
    assert len(data) == len(result.audio)
    window.messages.notice.clear()
    result.play_button.click()  # a real device again: it plays to the end, no complaint
    assert result.player.wait(30)
    qtbot.wait(300)
    assert window.messages.notice.text() == ""


# -- 9. the window closed in the middle of a job ---------------------------------------------


@pytest.mark.parametrize("stage", ["loading", "synthesis", "audition", "download"])
def test_closing_mid_job_leaves_no_thread(qtbot, make_window, monkeypatch, stage: str) -> None:  # type: ignore[no-untyped-def]
    box: dict[str, object] = {}

    def engine() -> Engine:
        return box["window"].host.worker.engine  # type: ignore[attr-defined]

    if stage == "loading":
        held, entered = hold_once(chattts_studio.core.weights.models.ensure, engine)
        monkeypatch.setattr(chattts_studio.core.weights.models, "ensure", held)
        window = box["window"] = make_window(wait=False)
    else:
        window = box["window"] = make_window()
    if stage == "synthesis":
        held, entered = hold_once(RefinePass.step, engine)
        monkeypatch.setattr(RefinePass, "step", held)
        fast(window, SHORT, refine=True)
        window.menu_actions.synth.trigger()
    elif stage == "audition":
        held, entered = hold_once(
            Engine.audition.__get__(engine()), lambda: box["window"].jobs.current.cancel
        )
        monkeypatch.setattr(engine(), "audition", held)
        window.auditions.show_audition()
        window.auditions.dialog.generate.click()
    elif stage == "download":
        entered = threading.Event()

        def endless(progress=None, cancelled=None, *_args, **_kwargs):  # type: ignore[no-untyped-def]
            entered.set()
            wait_for_cancel(lambda: SimpleNamespace(cancelled=cancelled()))
            if cancelled():
                raise Cancelled()
            raise DownloadError("The test download was never cancelled.")

        monkeypatch.setattr(chattts_studio.core.weights.download, "download_official", endless)
        window.model.show_dialog()
        window.model.dialog.download.click()
    qtbot.waitUntil(entered.is_set, timeout=RUN_MS)
    assert window.jobs.current is not None
    started = time.monotonic()
    window.close()
    assert window.host.worker_thread.isFinished()
    assert time.monotonic() - started < 20
    qtbot.wait(200)  # what the worker sent last reaches a closed window without harm


def test_closing_during_a_load_longer_than_the_close_wait_lets_it_end_first(
    qtbot, make_window, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    """ChatTTS's own load cannot be interrupted. Closing waits a while; if the load still
    runs, the window goes, the worker's thread runs to the end of its slot (Qt aborts the
    process if a running QThread is destroyed), and only then the model is released and the
    app quits."""
    from PySide6.QtWidgets import QApplication

    import chattts_studio.gui.window.main_window

    monkeypatch.setattr(chattts_studio.gui.window.main_window, "CLOSE_WAIT_MS", 200)
    entered = threading.Event()
    real = chattts_studio.core.weights.models.ensure

    def slow_ensure(*args, **kwargs):  # type: ignore[no-untyped-def]
        entered.set()
        time.sleep(2.0)  # deaf to cancel, like ChatTTS's load
        return real(*args, **kwargs)

    monkeypatch.setattr(chattts_studio.core.weights.models, "ensure", slow_ensure)
    window = make_window(wait=False)
    quits: list[bool] = []
    window.quit_application = lambda: quits.append(True)
    app = QApplication.instance()
    qtbot.waitUntil(entered.is_set, timeout=RUN_MS)
    try:
        window.close()
        assert not window.isVisible()
        assert window.host.worker_thread.isRunning()  # not destroyed under the worker's feet
        qtbot.waitUntil(lambda: quits == [True], timeout=RUN_MS)
        assert window.host.worker_thread.isFinished()
        assert window.host.worker.engine.model is None  # released after the slot ended
    finally:
        app.setQuitOnLastWindowClosed(True)


# -- 10. bad input ---------------------------------------------------------------------------


def test_hostile_text_is_a_message_and_nul_bytes_are_dropped(qtbot, make_window) -> None:  # type: ignore[no-untyped-def]
    window = make_window()
    for text, said in [
        (" \n\t\u3000 ", "The text is empty."),
        ("😀🎉👍", "nothing ChatTTS can speak"),
        ("……！？", "nothing ChatTTS can speak"),
        ("你好[nonsense]", "Unknown control token [nonsense]"),
        ("你好[Stts]", "reserved by ChatTTS"),
        ("你好 [ 再见", "not part of a control token"),
    ]:
        fast(window, text)
        window.menu_actions.synth.trigger()
        assert window.jobs.current is None
        assert said in window.messages.notice.text(), (text, window.messages.notice.text())
        assert said in window.editor.counts.text() or said == "The text is empty."
    fast(window, "你好\x00。\x00Hello\x01.")
    run(qtbot, window)
    assert window.messages.notice.text().startswith("Done"), window.messages.notice.text()


def test_a_huge_paste_keeps_the_editor_responsive(qtbot, make_window, private_home) -> None:  # type: ignore[no-untyped-def]
    window = make_window(model=None, wait=False)
    big = "今天天气很好，我们去公园散步。Hello there, it is a nice day.\n" * 2_500
    assert len(big) > 100_000
    QGuiApplication.clipboard().setText(big)
    editor = window.editor
    started = time.perf_counter()
    editor.editor.paste()
    qtbot.keyClicks(editor.editor, "abc")
    typing = time.perf_counter() - started
    assert editor.counts.text().startswith(f"{len(big) + 3} characters")
    started = time.perf_counter()
    qtbot.waitUntil(lambda: "segments" in editor.counts.text(), timeout=10_000)
    counted = time.perf_counter() - started
    assert typing < 2.0 and counted < 3.0, (typing, counted)  # loose: a 2-core machine
    # Kept like any text: the draft holds all of it.
    draft = private_home / "editor-draft.txt"
    qtbot.waitUntil(lambda: draft.is_file() and draft.stat().st_size > 100_000, timeout=10_000)


def test_a_speaker_that_is_not_a_valid_embedding_is_a_message(qtbot, make_window) -> None:  # type: ignore[no-untyped-def]
    window = make_window()
    assert window.speakers.keep("Broken voice", "x" * 40, None)  # the library takes any string
    assert window.speakers.current().label == "Broken voice"
    fast(window, "你好。")
    run(qtbot, window)
    assert "speaker embedding" in window.messages.notice.text(), window.messages.notice.text()
    assert window.live.stage.text() == "error"
    window.speakers.seed_mode.setChecked(True)
    still_works(qtbot, window)
