"""The window as a new user meets it: what a cancel keeps, messages that never resize
the window and that appear where the user acted, the first-run banner, the Models dialog, the
history, and the small things. The real window, offscreen, with the tiny demo weights."""

import re
import time
import warnings
from pathlib import Path

import pytest
import soundfile as sf
from PySide6.QtCore import QPoint, Qt
from PySide6.QtWidgets import QLabel, QStatusBar
from window_steps import fast, run

import chattts_studio.core.weights.download
from chattts_studio.core.engine.metrics import LiveSnapshot
from chattts_studio.core.engine.request import AudioChunk, Precision
from chattts_studio.core.errors import DownloadError
from chattts_studio.core.weights import models
from chattts_studio.gui.common import dialogs

RUN_MS = 120_000
SCREEN = (1280, 800)
LONG = "你好，世界。Hello there. 今天天气很好。" * 6


pytestmark = pytest.mark.window(home="own_home")


def on_screen(window) -> None:  # type: ignore[no-untyped-def]
    """The window as on a 1280x800 screen: its frame (title bar included) fills the screen."""
    frame, inner = window.frameGeometry(), window.geometry()
    window.resize(
        SCREEN[0] - (frame.width() - inner.width()), SCREEN[1] - (frame.height() - inner.height())
    )


def assert_fits(qtbot, window) -> None:  # type: ignore[no-untyped-def]
    qtbot.wait(50)  # let any layout change land
    frame = window.frameGeometry()
    assert frame.width() <= SCREEN[0] and frame.height() <= SCREEN[1], frame
    hint = window.minimumSizeHint()
    assert hint.width() <= SCREEN[0] and hint.height() <= SCREEN[1], hint


def visible_in_window(window, widget) -> bool:  # type: ignore[no-untyped-def]
    """Shown, and inside the window's area (not below its edge)."""
    top = widget.mapTo(window, QPoint(0, 0))
    return (
        widget.isVisible()
        and top.y() >= 0
        and top.y() + widget.height() <= window.height()
        and top.x() + widget.width() <= window.width()
    )


def screen_texts(window) -> list[str]:  # type: ignore[no-untyped-def]
    return [label.text() for label in window.findChildren(QLabel)]


# -- cancel --------------------------------------------------------------------------------
def test_cancel_keeps_the_streamed_start_of_the_segment_in_progress(
    qtbot, make_window, tmp_path
) -> None:  # type: ignore[no-untyped-def]
    window = make_window()
    fast(window, LONG, segment=40)
    window.result.stream_box.setChecked(True)
    heard: list[int] = []

    def cancel_mid_segment(job, chunk) -> None:  # type: ignore[no-untyped-def]
        # In the worker's thread, between two decode steps: Esc at exactly this moment.
        if not isinstance(chunk, AudioChunk):
            return
        if chunk.index == 1 and not chunk.final and not heard:
            heard.append(chunk.index)
            job.cancel.cancel()

    window.host.worker.progress.connect(cancel_mid_segment, Qt.ConnectionType.DirectConnection)
    run(qtbot, window)
    assert heard, "no chunk of the second segment was streamed"
    entry = window.result.history[-1]
    results = entry.outcome.results
    assert entry.cancelled and entry.partial
    assert [r.partial for r in results] == [False, True]
    assert len(results[1].audio) > 0
    assert len(window.result.audio) == len(entry.outcome.audio) > len(results[0].audio)
    assert "partial" in window.messages.notice.text() and window.messages.notice.text().startswith(
        "Cancelled;"
    )
    # The panel keeps the true figures: one done, one partial, every step that ran.
    progress = window.live.progress.text()
    assert progress.startswith("1 segment and 1 partial done"), progress
    steps = int(re.search(r"(\d+) steps", progress).group(1))  # type: ignore[union-attr]
    assert steps >= results[0].steps + results[1].steps
    assert window.live.job_rtf.text() != "-"
    for text in screen_texts(window):
        assert not re.search(r"\b(inf|nan)\b", text), text
    # History: marked partial, with figures, device and precision; saveable.
    title = window.result.history_list.item(len(window.result.history) - 1).text()
    assert "cancelled" in title and "partial" in title and "RTF" in title and "cpu fp32" in title
    saved = window.result.save_to(tmp_path / "kept.wav")
    data, _rate = sf.read(saved[0], dtype="float32")
    assert len(data) == len(window.result.audio)


def test_a_cancel_with_nothing_made_shows_dashes_not_inf(qtbot, make_window) -> None:
    window = make_window()
    fast(window, LONG)
    window.menu_actions.synth.trigger()
    window.menu_actions.cancel.trigger()  # before the worker began
    qtbot.waitUntil(lambda: window.jobs.current is None, timeout=RUN_MS)
    assert window.messages.notice.text().startswith("Cancelled;")
    for text in screen_texts(window):
        assert not re.search(r"\b(inf|nan)\b", text), text


def test_refine_progress_is_shown_while_refining(qtbot, make_window) -> None:
    window = make_window()
    window.live.show_snapshot(LiveSnapshot(stage="refine", segments=130, refined=12))
    assert window.live.progress.text().startswith("refine 12 of 130")
    window.live.show_snapshot(LiveSnapshot(stage="decode", segment=3, segments=130))
    assert window.live.progress.text().startswith("segment 3 of 130")


# -- messages ------------------------------------------------------------------------------
def test_no_message_changes_the_window_size(qtbot, make_window) -> None:
    window = make_window()
    on_screen(window)
    assert_fits(qtbot, window)
    size = window.size()
    window.editor.set_text("你好")
    window.editor.editor.moveCursor(window.editor.editor.textCursor().MoveOperation.End)
    qtbot.keyClicks(window.editor.editor, "[foo]")
    window.editor.editor.insertPlainText("世界")
    window.editor.update_counts()
    counts = window.editor.counts
    assert "Unknown control token [foo]" in counts.text()
    assert window.size() == size
    assert_fits(qtbot, window)
    if counts.toolTip():  # elided on screen: the whole sentence is one hover away
        assert counts.toolTip() == counts.text()
    window.messages.warn("A problem found at start, told at length. " * 20)
    window.messages.warn("And a second one.")
    window.show_message("A very long message " * 40)
    window.result.save_to(Path("/no/such/folder/" + "x" * 200 + ".wav"))
    window.live.note.setText("note " * 100)
    assert window.size() == size
    assert_fits(qtbot, window)
    window.editor.set_text("你好世界")
    assert window.size() == size


def test_outcomes_are_shown_where_the_user_acted(qtbot, make_window, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    window = make_window()
    on_screen(window)
    assert not any(bar.isVisible() for bar in window.findChildren(QStatusBar))
    # Load done: beside Synthesize, inside the window.
    assert window.messages.notice.text().startswith("Loaded demo"), window.messages.notice.text()
    assert visible_in_window(window, window.messages.notice)
    # A refused speaker name: said beside the settings tabs too.
    engine = window.host.worker.engine
    library = window.speakers.library
    for name, seed in (("Alice", 1), ("Bob", 2)):
        library.add(name, engine.sample_speaker(seed), seed)
    window.speakers.refresh()
    window.speakers.list.setCurrentRow(library.names().index("Bob"))
    monkeypatch.setattr(dialogs, "ask_name", lambda *_args, **_kwargs: "Alice")
    before = window.messages.notice.text()
    window.speakers.rename.click()
    assert library.get("Bob") is not None  # refused
    assert window.messages.notice.text() != before and "Alice" in window.messages.notice.text()
    # Save errors: beside Save.
    fast(window, "你好。")
    run(qtbot, window)
    assert not window.result.save_to(Path("/proc/x.wav"))
    note = window.result.save_note
    assert "not writable" in note.text() and "does not exist" not in note.text(), note.text()
    assert visible_in_window(window, note)
    assert_fits(qtbot, window)


def test_no_model_loaded_is_said_beside_synthesize(qtbot, make_window) -> None:
    window = make_window(model=None, wait=False)
    on_screen(window)
    window.editor.set_text("你好。")
    window.synthesis.button.click()
    assert "No model is loaded" in window.messages.notice.text()
    assert visible_in_window(window, window.messages.notice)
    assert_fits(qtbot, window)


# -- the first-run banner ------------------------------------------------------------------
def test_the_banner_shows_only_while_no_model_is_usable(qtbot, make_window, own_home) -> None:  # type: ignore[no-untyped-def]
    first = make_window(model=None, wait=False)
    assert first.model.banner.isVisible()
    first.model.banner_demo.click()
    qtbot.waitUntil(
        lambda: first.model.loaded is not None and first.jobs.current is None, timeout=RUN_MS
    )
    assert not first.model.banner.isVisible()  # a model is usable now
    first.close()
    again = make_window(model=None)  # the saved demo loads: no banner, before or after
    assert not again.model.banner.isVisible()
    again.close()


def test_a_dismissed_banner_stays_dismissed_until_the_situation_changes(
    qtbot, make_window, own_home
) -> None:  # type: ignore[no-untyped-def]
    first = make_window(model=None, wait=False)
    assert first.model.banner.isVisible()
    first.model.banner.close_button.click()
    assert not first.model.banner.isVisible()
    first.close()
    second = make_window(model=None, wait=False)
    assert not second.model.banner.isVisible()  # dismissed across starts
    second.close()
    official = own_home / "models" / "official"
    official.mkdir()  # the official weights arrive (an incomplete folder is enough here)
    third = make_window(model=None, wait=False)
    assert not third.model.banner.isVisible()
    qtbot.waitUntil(lambda: third.jobs.current is None, timeout=RUN_MS)
    third.close()
    official.rmdir()  # and go again: the situation changed twice, the banner is back
    fourth = make_window(model=None, wait=False)
    assert fourth.model.banner.isVisible()


# -- the Models dialog ---------------------------------------------------------------------
def test_models_dialog_builds_demo_full_and_words_each_state(
    qtbot, make_window, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setitem(models.DEMO_SIZES, "demo-full", models.TINY_DIMS)  # built in seconds
    window = make_window()
    window.model.show_dialog()
    dialog = window.model.dialog
    loaded = dialog.loaded_label.text()
    assert loaded.startswith("Loaded: demo (random weights") and "kind:" not in loaded
    assert loaded.count("demo") == 1
    rows = dialog.rows
    assert rows["demo"].state.text().startswith("ready") and rows["demo"].action.text() == "Loaded"
    assert rows["official"].state.text() == "not downloaded yet"
    assert rows["official"].action.text() == "Download"
    full = rows["demo-full"]
    assert full.state.text().startswith("not built yet") and full.action.text() == "Build"
    full.action.click()
    assert window.jobs.current is not None
    qtbot.waitUntil(lambda: window.jobs.current is None, timeout=RUN_MS)
    assert dialog.status_label.text().startswith("Built and verified demo-full")
    assert full.state.text().startswith("ready") and full.action.text() == "Load"
    full.action.click()  # and it loads
    qtbot.waitUntil(lambda: window.jobs.current is None, timeout=RUN_MS)
    assert window.model.loaded is not None and window.model.loaded.info.name == "demo-full"
    assert "Loaded demo-full" in dialog.status_label.text()


def test_a_failed_download_is_said_beside_the_list(qtbot, make_window, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    def failing(*_args, **_kwargs):  # type: ignore[no-untyped-def]
        raise DownloadError("The test network is down.")

    monkeypatch.setattr(chattts_studio.core.weights.download, "download_official", failing)
    window = make_window()
    window.model.show_dialog()
    dialog = window.model.dialog
    dialog.download.click()
    qtbot.waitUntil(lambda: window.jobs.current is None, timeout=RUN_MS)
    assert dialog.status_label.text() == "The test network is down."
    assert dialog.rows["demo"].state.text().startswith("ready")  # the list is still there
    assert dialog.rows["official"].action.isEnabled()


# -- history -------------------------------------------------------------------------------
def test_history_shows_every_run_with_device_and_precision(qtbot, make_window) -> None:
    window = make_window(device="cpu")
    on_screen(window)
    fast(window, "你好。")
    for _ in range(3):
        run(qtbot, window)
    window.controls.precision_buttons[Precision.BF16].setChecked(True)  # reloads the model
    qtbot.waitUntil(lambda: window.jobs.current is None and window.model.loaded is not None)
    qtbot.waitUntil(
        lambda: window.model.loaded is not None and window.model.loaded.precision is Precision.BF16,
        timeout=RUN_MS,
    )
    run(qtbot, window)
    history = window.result.history_list
    assert history.count() == 4
    titles = [history.item(i).text() for i in range(4)]
    assert all("cpu fp32" in t for t in titles[:3]) and "cpu bf16" in titles[3]
    assert all("RTF" in t and "generation seed" in t for t in titles)
    last = history.visualItemRect(history.item(3))
    assert history.viewport().rect().intersects(last)  # the newest is scrolled into view
    history.scrollToItem(history.item(0))
    assert history.viewport().rect().intersects(history.visualItemRect(history.item(0)))


# -- small things --------------------------------------------------------------------------
def test_one_segment_is_singular(qtbot, make_window) -> None:
    window = make_window()
    fast(window, "你好。", segment=50)
    window.editor.update_counts()
    assert " · 1 segment · " in window.editor.counts.text()
    run(qtbot, window)
    assert window.live.progress.text().startswith("1 segment done")


def test_stop_is_enabled_only_while_something_plays(qtbot, make_window) -> None:
    window = make_window()
    stop = window.result.stop_button
    assert not stop.isEnabled()
    fast(window, "你好。")
    run(qtbot, window)
    assert not stop.isEnabled()
    window.result.play_button.click()
    assert stop.isEnabled()
    assert window.result.player.wait(30)
    qtbot.waitUntil(lambda: not stop.isEnabled(), timeout=5_000)


def test_stop_during_a_streamed_run_silences_the_rest_of_it(qtbot, make_window) -> None:
    window = make_window()
    fast(window, LONG, segment=20)
    window.result.stream_box.setChecked(True)
    player = window.result.player
    window.menu_actions.synth.trigger()
    qtbot.waitUntil(lambda: player.playing, timeout=RUN_MS)
    window.result.stop_button.click()
    played_after: list[bool] = []
    window.live.timer.setInterval(10)  # samples enough of the rest of a fast run
    window.live.timer.timeout.connect(lambda: played_after.append(player.playing))
    qtbot.waitUntil(lambda: window.jobs.current is None, timeout=RUN_MS)
    assert played_after and not any(played_after)
    assert len(window.result.history[-1].outcome.results) > 1  # the run went on
    window.result.play_button.click()  # Play listens again
    assert window.result.stop_button.isEnabled()


def test_one_progress_source_while_loading_and_no_zero_speed(
    qtbot, make_window, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    window = make_window()
    real = models.ensure

    def slow(*args, **kwargs):  # type: ignore[no-untyped-def]
        time.sleep(0.6)  # the load's stages last long enough to be seen
        info = real(*args, **kwargs)
        time.sleep(0.6)
        return info

    monkeypatch.setattr(models, "ensure", slow)
    pairs: list[tuple[int, int]] = []
    # Sampled on the UI thread, as a person would see them side by side.
    window.live.timer.timeout.connect(
        lambda: pairs.append((window.live.bar.value() // 10, window.model.progress.value()))
    )
    window.controls.precision_buttons[Precision.BF16].setChecked(True)  # reloads the model
    qtbot.waitUntil(lambda: window.jobs.current is None, timeout=RUN_MS)
    assert pairs and all(abs(live - status) <= 1 for live, status in pairs), pairs
    assert any(status >= 50 for _, status in pairs), pairs
    assert window.live.speed.text() == "-"  # nothing has run yet: no "0.0"


def test_the_splitter_does_not_move_when_the_model_label_appears(qtbot, make_window) -> None:
    window = make_window(model=None, wait=False)
    on_screen(window)
    qtbot.wait(100)
    before = window.top_splitter.sizes()
    window.model.banner_demo.click()
    qtbot.waitUntil(
        lambda: window.model.loaded is not None and window.jobs.current is None, timeout=RUN_MS
    )
    qtbot.wait(100)
    assert window.model.label.text().startswith("Model: demo")
    assert window.top_splitter.sizes() == before


def test_a_synthesis_prints_no_deprecation_warnings(qtbot, make_window) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.resetwarnings()
        warnings.simplefilter("default")  # what a terminal would show
        window = make_window()  # the app quiets the libraries as it starts
        fast(window, "你好。Hello.")
        window.controls.refine_box.setChecked(True)  # ChatTTS's own generate: the warner
        run(qtbot, window)
        assert window.messages.notice.text().startswith("Done"), window.messages.notice.text()
    shown = [str(w.message) for w in caught if "past_key_values" in str(w.message)]
    assert not shown, shown
