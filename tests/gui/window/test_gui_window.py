"""The real window, offscreen, with the tiny demo weights: type, synthesize, hear, save, cancel."""

import os
import shutil
import threading
from pathlib import Path

import audio_fakes
import numpy as np
import pytest
import soundfile as sf
from audio_fakes import noise, paced_output

# conftest.py has already pointed Qt offscreen and ALSA at a capturing device.
from conftest import CAPTURE_DIR as _ALSA_DIR
from conftest import HOME
from PySide6.QtCore import QMimeData, QPointF, Qt, QUrl
from PySide6.QtGui import QDropEvent, QGuiApplication
from window_steps import SHORT, fast, run
from worker_events import event

from chattts_studio.core.engine.request import AudioChunk, SegmentResult
from chattts_studio.core.voices.speakers import SpeakerLibrary
from chattts_studio.gui.common import dialogs
from chattts_studio.gui.result.panel import ResultPanel
from chattts_studio.gui.settings import Key

LONG = "你好，世界。Hello there. 今天天气很好。" * 6
LOAD_MS = 120_000
RUN_MS = 120_000


@pytest.fixture(scope="session")
def studio_home(demo_model: str) -> Path:
    """The session's data folder (conftest), where the demo weights are built once."""
    return HOME


@pytest.fixture
def home(studio_home: Path) -> Path:
    """Each test starts with fresh preferences and an empty editor (both live in the data
    folder)."""
    (studio_home / "gui-settings.ini").unlink(missing_ok=True)
    (studio_home / "editor-draft.txt").unlink(missing_ok=True)  # and no restored text
    for kept in (studio_home / "cache").glob("*"):  # and no history kept on disk
        if kept.name != "onnx":  # the session's ONNX exports stay: made once, ~10 s
            shutil.rmtree(kept, ignore_errors=True)
    return studio_home


pytestmark = pytest.mark.window(home="home")  # the session's data folder, made fresh


def test_type_and_synthesize_gives_audio_and_a_live_panel(qtbot, make_window) -> None:
    window = make_window(device="cpu")  # the memory figures asserted below are the CPU's
    assert "noise" in window.model.label.text()  # demo weights stay labelled
    window.editor.set_text("")
    fast(window, text="")
    window.editor.set_text("你好，世界。今天天气很好。")
    # QTest types ASCII only; the CJK part above came in as pasted text.
    qtbot.keyClicks(window.editor.editor, " Hello there. Nice day.")
    # Counted as the splitter splits it (whole sentences packed toward the segment size).
    from chattts_studio.core.text.prepare import split_segments

    size = window.controls.segment_slider.value()
    parts = len(split_segments(window.editor.editor.toPlainText(), size, first_apart=True))
    window.editor.update_counts()  # as when typing pauses
    assert f" {parts} segment" in window.editor.counts.text()
    seen: list[tuple[str, str]] = []
    # The run takes a fraction of a second on the demo weights now: a faster poll than the
    # window's 100 ms gives the panel's live figures enough ticks to be seen changing.
    window.live.timer.setInterval(10)
    window.live.timer.timeout.connect(
        lambda: seen.append((window.live.progress.text(), window.live.memory.text()))
    )
    run(qtbot, window)
    assert window.messages.notice.text().startswith("Done"), window.messages.notice.text()
    assert len(window.result.audio) > 24_000 // 2
    assert len(set(seen)) >= 3, seen  # the panel changed several times during the run
    assert window.live.job_rtf.text() != "-"  # the job's figures stay after the run
    assert "process memory (CPU)" in window.live.memory.text()
    assert window.result.history_list.count() == 1
    assert window.synthesis.button.text().startswith("Synthesize")


def test_empty_text_is_a_message_not_a_crash(qtbot, make_window) -> None:
    window = make_window()
    fast(window, text="   ")
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow)
    qtbot.keyClick(window.editor.editor, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    assert window.jobs.current is None
    assert window.messages.notice.text() == "The text is empty."
    window.editor.set_text("[nonsense]")
    window.menu_actions.synth.trigger()
    assert "Unknown control token" in window.messages.notice.text()


def test_cancel_keeps_finished_segments(qtbot, make_window) -> None:
    window = make_window()
    fast(window, text=LONG)
    with qtbot.waitSignal(
        window.host.worker.progress, timeout=RUN_MS, check_params_cb=event(SegmentResult)
    ):
        window.menu_actions.synth.trigger()
    assert window.synthesis.button.text().startswith("Cancel")
    window.menu_actions.cancel.trigger()
    qtbot.waitUntil(lambda: window.jobs.current is None, timeout=RUN_MS)
    assert window.messages.notice.text().startswith("Cancelled"), window.messages.notice.text()
    assert window.live.stage.text() == "cancelled"
    assert window.result.history[-1].cancelled
    assert 0 < len(window.result.history[-1].outcome.results) < 24


def test_devices_and_precisions_on_cpu(qtbot, make_window) -> None:
    window = make_window(device="cpu")
    controls = window.controls
    ids = [controls.device_box.itemData(i) for i in range(controls.device_box.count())]
    assert "cpu" in ids
    if not any(i.startswith("cuda:") for i in ids):  # this machine: CUDA shown with its reason
        index = ids.index("cuda")
        assert "CUDA is unavailable" in controls.device_box.itemData(
            index, Qt.ItemDataRole.ToolTipRole
        )
        assert "CUDA is unavailable" in controls.device_note.text()
    slider = controls.segment_slider
    # The slider ends at the longest Chinese segment that fits ChatTTS's step cap, and says so.
    from chattts_studio.core.text.prepare import MAX_CJK_SEGMENT, PLAN_STEP_LIMIT, needed_steps

    assert (slider.minimum(), slider.maximum()) == (10, MAX_CJK_SEGMENT)
    assert needed_steps("字" * slider.maximum()) <= PLAN_STEP_LIMIT
    assert needed_steps("字" * (slider.maximum() + 2)) > PLAN_STEP_LIMIT
    assert f"stays whole up to {MAX_CJK_SEGMENT} characters" in slider.toolTip()
    assert controls.segment_value.text() == f"{slider.value()} characters"
    controls.select("cpu", "fp32")
    fp16 = controls.precision_buttons[controls.precision().__class__("fp16")]
    assert not fp16.isEnabled()
    assert "not supported on the CPU" in fp16.toolTip()
    assert "fp16" in controls.precision_note.text()
    with qtbot.waitSignal(window.host.worker.ended, timeout=LOAD_MS):
        controls.precision_buttons[controls.precision().__class__("bf16")].setChecked(True)
    qtbot.waitUntil(lambda: window.jobs.current is None)
    assert controls.effective_precision.text() == "effective: bf16"
    assert window.model.loaded is not None and window.model.loaded.precision.value == "bf16"


def test_audition_and_keep_a_speaker(qtbot, make_window, monkeypatch) -> None:
    window = make_window()
    window.auditions.show_audition()
    dialog = window.auditions.dialog
    dialog.sentence.setText("你好。")
    dialog.count.setValue(4)
    dialog.generate.click()
    qtbot.waitUntil(lambda: len(dialog.candidates) == 4, timeout=RUN_MS)
    name = f"Narrator {os.getpid()}"
    monkeypatch.setattr(dialogs, "ask_name", lambda *_args, **_kw: name)
    first = dialog.candidates[0]
    dialog.keep(first)
    entry = SpeakerLibrary().get(name)  # written where the command line reads it
    assert entry is not None and entry.seed == first.seed
    assert window.speakers.current().label == name
    dialog.drop(dialog.candidates[1], [])
    assert len(dialog.candidates) == 3
    # The library: rename and delete through the replaced name dialog.
    window.speakers.list.setCurrentRow(window.speakers.library.names().index(name))
    monkeypatch.setattr(dialogs, "ask_name", lambda *_args, **_kw: name + " B")
    window.speakers.rename.click()
    assert SpeakerLibrary().get(name + " B") is not None
    window.speakers.list.setCurrentRow(window.speakers.library.names().index(name + " B"))
    window.speakers.delete.click()
    assert SpeakerLibrary().get(name + " B") is None


def test_copy_the_embedding_of_a_seed(qtbot, make_window) -> None:
    window = make_window()
    window.speakers.seed_box.setValue(7)
    window.speakers.copy_embedding.click()
    qtbot.waitUntil(lambda: window.jobs.current is None)
    assert window.messages.notice.text() == "Copied the embedding of seed 7."
    assert len(QGuiApplication.clipboard().text()) > 16


def test_a_bad_model_folder_is_a_message(qtbot, make_window, monkeypatch, tmp_path):  # type: ignore[no-untyped-def]
    window = make_window()
    window.model.show_dialog()
    assert "demo (random weights" in window.model.dialog.loaded_label.text()
    monkeypatch.setattr(dialogs, "choose_model_folder", lambda *_args: tmp_path)
    window.model.dialog.folder.click()
    qtbot.waitUntil(lambda: window.jobs.current is None, timeout=LOAD_MS)
    assert "incomplete" in window.messages.notice.text(), window.messages.notice.text()


def test_save_through_the_dialog_and_read_back(qtbot, make_window, monkeypatch, tmp_path):  # type: ignore[no-untyped-def]
    window = make_window()
    fast(window)
    run(qtbot, window)
    target = tmp_path / "speech.flac"
    monkeypatch.setattr(dialogs, "save_audio_file", lambda *_args: target)
    window.menu_actions.save.trigger()  # saved on the thread pool
    qtbot.waitUntil(lambda: not window.result.exporting)
    data, rate = sf.read(target, dtype="float32")
    assert rate == 24_000 and len(data) == len(window.result.audio)
    window.result.per_segment.setChecked(True)
    monkeypatch.setattr(dialogs, "save_audio_file", lambda *_args: tmp_path / "part.wav")
    window.menu_actions.save.trigger()
    qtbot.waitUntil(lambda: not window.result.exporting)
    parts = sorted(tmp_path.glob("part_*.wav"))
    assert len(parts) == len(window.result.results) >= 2
    assert window.settings.text(Key.LAST_FOLDER) == str(tmp_path)


def test_playback_reaches_the_sound_device(qtbot, make_window) -> None:
    window = make_window()
    fast(window, text="你好。")
    run(qtbot, window)
    audio = window.result.audio
    window.result.play_button.click()
    assert window.result.player.wait(30)
    captured = np.fromfile(_ALSA_DIR / "out_24000_1.raw", dtype=np.float32)
    start, first = int(np.flatnonzero(captured)[0]), int(np.flatnonzero(audio)[0])
    n = len(audio) - first
    np.testing.assert_allclose(captured[start : start + n], audio[first:], atol=1e-6)


def test_no_output_device_is_a_message_and_saving_works(qtbot, make_window, monkeypatch, tmp_path):  # type: ignore[no-untyped-def]
    import chattts_studio.gui.result.panel

    sentence = "No audio output device is available; the audio can still be saved."
    monkeypatch.setattr(chattts_studio.gui.result.panel, "output_available", lambda: sentence)
    window = make_window()
    assert window.result.output_note.text() == sentence
    fast(window)
    run(qtbot, window)
    window.result.play_button.click()
    assert window.messages.notice.text() == sentence
    assert window.result.save_to(tmp_path / "out.wav")


def test_open_a_text_file_by_menu_and_by_drop(qtbot, make_window, monkeypatch, tmp_path):  # type: ignore[no-untyped-def]
    window = make_window(model=None, wait=False)
    first, second = tmp_path / "a.txt", tmp_path / "b.txt"
    first.write_text("第一个文件。", encoding="utf-8")
    second.write_text("Second file.", encoding="utf-8")
    monkeypatch.setattr(dialogs, "open_text_file", lambda *_args: first)
    window.menu_actions.open.trigger()
    assert window.editor.text() == "第一个文件。"
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(second))])
    drop = QDropEvent(
        QPointF(5, 5),
        Qt.DropAction.CopyAction,
        mime,
        Qt.MouseButton.LeftButton,
        Qt.KeyboardModifier.NoModifier,
    )
    window.editor.editor.dropEvent(drop)
    assert window.editor.text() == "Second file."


def test_first_run_banner_offers_demo_and_settings_persist(qtbot, make_window) -> None:
    window = make_window(model=None, wait=False)
    assert window.model.banner.isVisible()  # no official weights in the test home
    assert window.model.loaded is None
    window.controls.segment_slider.setValue(33)
    assert not window.result.words_box.isChecked()  # off until asked (it costs CPU)
    window.result.words_box.setChecked(True)
    window.model.banner_demo.click()
    qtbot.waitUntil(lambda: window.model.loaded is not None, timeout=LOAD_MS)
    assert "random weights" in window.model.label.text()
    window.close()
    again = make_window(model=None)  # the saved model, segment size and device come back
    assert again.model.name == "demo"
    assert again.controls.segment_slider.value() == 33
    assert again.controls.segment_value.text() == "33 characters"
    assert again.result.words_box.isChecked()  # Follow words is remembered


def test_close_during_synthesis_leaves_no_thread(qtbot, make_window) -> None:
    window = make_window()
    fast(window, text=LONG)
    before = threading.active_count()
    with qtbot.waitSignal(
        window.host.worker.progress, timeout=RUN_MS, check_params_cb=event(SegmentResult)
    ):
        window.menu_actions.synth.trigger()
    window.close()
    assert window.host.worker_thread.isFinished()
    assert threading.active_count() <= before


def test_segments_play_while_the_rest_is_generated(qtbot, make_window) -> None:
    window = make_window()
    fast(window, text=SHORT)
    window.result.stream_box.setChecked(True)
    handed: list[int] = []
    window.live.timer.setInterval(10)  # the short run lasts a few of the window's 100 ms polls
    window.live.timer.timeout.connect(lambda: handed.append(window.result._streamed))
    run(qtbot, window)
    assert any(n > 0 for n in handed), handed  # audio reached the player during the run
    assert window.result.player.wait(30)
    assert np.flatnonzero(np.fromfile(_ALSA_DIR / "out_24000_1.raw", dtype=np.float32)).size


def without_silences(player, audio: np.ndarray) -> np.ndarray:  # type: ignore[no-untyped-def]
    """What the device should have received from a stream of `audio`: the audio, with the
    silence the stream played while it waited for more (its underruns) where it played it."""
    pieces, done = [], 0
    for at, frames in player.silences:
        pieces += [audio[done:at], np.zeros(frames, dtype=np.float32)]
        done = at
    return np.concatenate([*pieces, audio[done:]])


def heard(expected: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The capture and the expected sound, both from their first non-zero sample."""
    captured = np.fromfile(_ALSA_DIR / "out_24000_1.raw", dtype=np.float32)
    captured = captured[int(np.flatnonzero(captured)[0]) :]
    return captured, expected[int(np.flatnonzero(expected)[0]) :]


def test_streamed_playback_is_one_stream_of_the_whole_result(
    qtbot, make_window, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    window = make_window()
    fast(window, text=SHORT)
    window.result.stream_box.setChecked(True)
    opened = paced_output(monkeypatch, silence_only=True)  # waits keep time: no GB of zeros
    run(qtbot, window)
    player = window.result.player
    assert player.wait(30)
    assert len(window.result.results) >= 2
    assert len(opened) == 1  # one stream for every chunk and segment, not one per chunk
    captured, expected = heard(without_silences(player, window.result.audio))
    assert np.array_equal(captured[: len(expected)], expected)
    assert not captured[len(expected) :].any()
    assert player.position == len(window.result.audio)


def chunk(index: int, audio: np.ndarray, final: bool = False) -> AudioChunk:
    return AudioChunk(index, audio, final)


def test_a_restarted_segment_is_cut_from_the_stream_before_it_plays(qtbot, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    opened = paced_output(monkeypatch)  # real time: the queue is still there to cut
    panel = ResultPanel()
    qtbot.addWidget(panel)
    messages: list[str] = []
    panel.message.connect(messages.append)
    first, second, dropped, again = (noise(0.3, seed) for seed in range(60, 64))
    panel.begin(0.25)
    panel.add_chunk(chunk(0, first))
    panel.add_chunk(chunk(0, second, final=True))
    panel.add_chunk(chunk(1, dropped))
    panel.restart_segment(1)  # out of memory: segment 1 comes again from its start
    panel.add_chunk(chunk(1, again, final=True))
    panel.end(None)
    assert panel.player.wait(20)
    expected = np.concatenate([first, second, np.zeros(6000, np.float32), again])
    assert np.array_equal(panel.audio, expected)
    assert len(opened) == 1
    captured, expected = heard(without_silences(panel.player, expected))
    assert np.array_equal(captured[: len(expected)], expected)
    assert not captured[len(expected) :].any()
    qtbot.wait(300)  # the panel's ticks: a stream that ended at its end is no complaint
    assert messages == []


def test_a_restarted_segment_already_heard_plays_again_from_its_start(qtbot, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    opened = paced_output(monkeypatch)
    panel = ResultPanel()
    qtbot.addWidget(panel)
    first, dropped, again = noise(0.2, 70), noise(1.0, 71), noise(0.3, 72)
    panel.begin(0.25)
    panel.add_chunk(chunk(0, first, final=True))
    panel.add_chunk(chunk(1, dropped))
    start = len(first) + 6000
    qtbot.waitUntil(lambda: panel.player.position > start + 2400, timeout=10_000)
    panel.restart_segment(1)
    panel.add_chunk(chunk(1, again, final=True))
    panel.end(None)
    assert panel.player.wait(20)
    assert np.array_equal(panel.audio, np.concatenate([first, np.zeros(6000, np.float32), again]))
    assert len(opened) == 2  # the heard part cannot be unheard: a new stream from its start
    captured, expected = heard(without_silences(panel.player, panel.audio)[start:])
    assert np.array_equal(captured[: len(expected)], expected)
    assert panel.player.position == len(panel.audio)


def test_a_stream_that_loses_its_device_mid_run_is_a_message(qtbot, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import sounddevice

    monkeypatch.setattr(sounddevice, "OutputStream", audio_fakes.VanishingStream)
    panel = ResultPanel()
    qtbot.addWidget(panel)
    messages: list[str] = []
    panel.message.connect(messages.append)
    panel.begin(0.25)
    panel.add_chunk(chunk(0, noise(0.5, 80)))
    qtbot.waitUntil(lambda: not panel.player.playing, timeout=10_000)
    panel.add_chunk(chunk(0, noise(0.5, 81), final=True))
    qtbot.waitUntil(lambda: bool(messages), timeout=10_000)
    assert "stopped responding" in messages[0] and "0.0 s" in messages[0]
    # Stop, as a user would: else the panel's timer opens the next stream on the real device
    # once the test gives it back, and nobody ends it.
    panel.user_stop()


def test_export_and_import_the_speaker_library(qtbot, make_window, monkeypatch, tmp_path):  # type: ignore[no-untyped-def]
    window = make_window(model=None, wait=False)
    name = f"Exported {os.getpid()}"
    assert window.speakers.keep(name, "x" * 40, 5)
    target = tmp_path / "voices.json"
    monkeypatch.setattr(dialogs, "save_speaker_file", lambda *_args: target)
    window.speakers.export_button.click()
    assert name in target.read_text(encoding="utf-8")
    monkeypatch.setattr(dialogs, "open_speaker_file", lambda *_args: target)
    window.speakers.import_button.click()
    assert f"{name} (2)" not in window.speakers.library.names()  # the same voice: skipped
    assert "0 added" in window.messages.notice.text() and "skipped" in window.messages.notice.text()
    (tmp_path / "bad.json").write_text("not json", encoding="utf-8")
    monkeypatch.setattr(dialogs, "open_speaker_file", lambda *_args: tmp_path / "bad.json")
    window.speakers.import_button.click()
    assert "is not valid JSON" in window.messages.notice.text()


def test_a_speaker_library_from_a_newer_version_is_reported_and_kept(
    qtbot, make_window, home, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    from chattts_studio.gui.control.messages import Messages

    shown: list[str] = []
    real = Messages.show
    monkeypatch.setattr(Messages, "show", lambda self, text: (shown.append(text), real(self, text)))
    library = home / "speakers.json"
    content = '{"format": 99, "speakers": []}'
    library.write_text(content)
    try:
        window = make_window()
        qtbot.waitUntil(lambda: any("newer" in text for text in shown), timeout=5000)
        with pytest.raises(Exception, match="cannot be changed"):
            window.speakers.library.add("X", "豆" * 40)
        assert library.read_text() == content
    finally:
        library.unlink()
