"""The UI thread never stalls more than 50 ms: a timer ticking every 5 ms records
the longest gap between its ticks while the real window is typed into, given a 100,000
character paste, synthesizes with streamed playback, saves a long result as WAV and FLAC, shows
the Models dialog while the weights are hashed, and replays results from the history.

Slow work is made slower where it could hide: hashing a model file and writing the draft each
keep a CPU busy for 0.3 s here, so either on the UI thread would show as a stall.

A gap is the UI thread's own doing when it was busy (its CPU time in the gap) or blocked; not
when it waited for a CPU, which on a shared 2-core machine other processes take. The busy
time is always held to the limit; the whole gap, less the wait for a CPU, too while the
machine is not overloaded (its load average under its CPU count), and each figure is the best
of five tries: the window's own blocking work stalls every try, a burst of load does not."""

import contextlib
import hashlib
import os
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
from project_fakes import big_project
from PySide6.QtCore import QCoreApplication, Qt, QTimer
from PySide6.QtGui import QGuiApplication, QTextCursor

import chattts_studio.gui.draft
from chattts_studio.core import SAMPLE_RATE, paths
from chattts_studio.core.engine.request import (
    AudioChunk,
    JobSummary,
    SegmentResult,
    SynthesisRequest,
)
from chattts_studio.core.project import writer
from chattts_studio.core.services.synthesize import SynthesisJob, SynthesisOutcome
from chattts_studio.core.text.prepare import split_segments
from chattts_studio.core.weights import hashcache, models
from chattts_studio.gui.common import dialogs

LIMIT_S = 0.050
RUN_MS = 120_000
SLOW_S = 0.3  # a hash or a draft write that takes this long would be a stall on the UI thread
LONG_RESULT_S = 600  # ten minutes of audio
CHUNK = 24 * 512  # what the engine streams at a time
SCHEDSTAT = Path("/proc/thread-self/schedstat")


def _clocks(schedstat: int | None) -> tuple[float, float, float]:
    """Wall time, this thread's CPU time, and its time runnable but waiting for a CPU (Linux's
    schedstat, read from `schedstat`, a descriptor of the UI thread's; 0 elsewhere). One
    pread: each system call lets go of the GIL, and taking it back from a busy worker thread
    would be the meter's own stall."""
    waited = 0.0
    if schedstat is not None:
        with contextlib.suppress(OSError, IndexError, ValueError):
            waited = int(os.pread(schedstat, 200, 0).split()[1]) / 1e9
    return time.perf_counter(), time.thread_time(), waited


def _overloaded() -> bool:
    return os.getloadavg()[0] >= (os.cpu_count() or 1)


class StallMeter:
    """The longest gaps between ticks of a 5 ms timer on the UI thread: `wall`, `stall` (less
    the time it waited for a CPU) and `busy` (its CPU time in the gap)."""

    def __init__(self) -> None:
        self.timer = QTimer()
        self.timer.setTimerType(Qt.TimerType.PreciseTimer)
        self.timer.setInterval(5)
        self.timer.timeout.connect(self._tick)
        self.wall = self.stall = self.busy = 0.0
        self._last: tuple[float, float, float] | None = None
        try:  # opened on the UI thread, where the meter lives: thread-self is that thread
            self._schedstat: int | None = os.open(SCHEDSTAT, os.O_RDONLY)
        except OSError:
            self._schedstat = None

    def _tick(self) -> None:
        now = _clocks(self._schedstat)
        if self._last is not None:
            wall, cpu, waited = (n - last for n, last in zip(now, self._last, strict=True))
            self.wall = max(self.wall, wall)
            self.stall = max(self.stall, wall - waited)
            self.busy = max(self.busy, cpu)
        self._last = now

    def __enter__(self) -> "StallMeter":
        self._last = None
        self._tick()  # from now: work done before the loop's first turn counts too
        self.timer.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self.timer.stop()
        if self._schedstat is not None:
            os.close(self._schedstat)
            self._schedstat = None

    def problem(self, what: str, overloaded: bool) -> str | None:
        figures = (
            f"{what}: the UI thread stalled {self.stall * 1000:.0f} ms, busy "
            f"{self.busy * 1000:.0f} ms ({self.wall * 1000:.0f} ms of wall time)"
        )
        print(figures + (" on an overloaded machine" if overloaded else ""))
        if self.busy >= LIMIT_S or (self.stall >= LIMIT_S and not overloaded):
            return figures
        return None


def least_stall(what: str, attempt: Callable[[], None], tries: int = 5) -> None:
    """Run `attempt` under a StallMeter until it stays under the limit, `tries` times at most."""
    problems = []
    for _ in range(tries):
        with StallMeter() as meter:
            attempt()
        problem = meter.problem(what, _overloaded())
        if problem is None:
            return
        problems.append(problem)
    pytest.fail(f"in each of {tries} tries: " + "; ".join(problems))


@pytest.fixture
def slow_disk(monkeypatch: pytest.MonkeyPatch) -> None:
    """Hashing a model file and writing the draft each keep a CPU busy for SLOW_S."""
    real_hash, real_write = models.sha256_file, chattts_studio.gui.draft.write_text_atomic

    block = bytes(2**20)

    def busy() -> None:  # CPU work that lets go of the GIL, as hashing and writing files do
        end = time.thread_time() + SLOW_S
        while time.thread_time() < end:
            hashlib.sha256(block)

    def slow_hash(*args, **kwargs):  # type: ignore[no-untyped-def]
        busy()
        return real_hash(*args, **kwargs)

    def slow_write(*args, **kwargs):  # type: ignore[no-untyped-def]
        busy()
        return real_write(*args, **kwargs)

    monkeypatch.setattr(models, "sha256_file", slow_hash)
    monkeypatch.setattr(chattts_studio.gui.draft, "write_text_atomic", slow_write)


def long_outcome(seconds: int, segments: int = 20, seed: int = 0) -> SynthesisOutcome:
    """A finished synthesis of `seconds` of audio (noise) in `segments` segments."""
    rng = np.random.default_rng(seed)
    size = seconds * SAMPLE_RATE // segments
    request = SynthesisRequest(text="长的结果。" * segments)
    results = [
        SegmentResult(
            i, segments, "长的结果。", rng.uniform(-0.5, 0.5, size).astype(np.float32), 100, 1.0, 1
        )
        for i in range(segments)
    ]
    summary = JobSummary(segments, seconds, seconds / 10, 100 * segments, 0.5, None)
    outcome = SynthesisOutcome(SynthesisJob(request, 2, "voice seed 2"), results, summary, "")
    _ = outcome.audio  # joined, as the worker hands it over
    return outcome


def arrive(window, outcome: SynthesisOutcome) -> None:  # type: ignore[no-untyped-def]
    """A long result as the worker delivers it: chunk by chunk (24 GPT steps each), each
    handled in its own turn of the event loop, into the panel's store on disk."""
    panel = window.result
    panel.begin(outcome.job.request.pause_seconds)
    for result in outcome.results:
        for first in range(0, len(result.audio), CHUNK):
            piece = result.audio[first : first + CHUNK]
            panel.add_chunk(AudioChunk(result.index, piece, first + CHUNK >= len(result.audio)))
            QCoreApplication.processEvents()
        panel.add_segment(result)
    panel.end(outcome)


def test_the_ui_thread_never_stalls(  # type: ignore[no-untyped-def]
    qtbot, make_window, slow_disk, monkeypatch, tmp_path
) -> None:
    window = make_window()
    editor = window.editor.editor
    saved = chattts_studio.gui.draft.draft_path()
    tries = iter(range(1_000))

    # Typing: a key at a time, as a person types, into a text long enough to count in the
    # background; the draft is written a moment after typing stops.
    window.editor.set_text("今天天气很好，我们去公园散步。Hello there.\n" * 400)

    def typing() -> None:
        editor.moveCursor(QTextCursor.MoveOperation.End)
        typed = f" Typed key by key, try {next(tries)}."
        for key in typed:
            qtbot.keyClick(editor, key)
            qtbot.wait(20)
        qtbot.waitUntil(lambda: _read(saved).endswith(typed), timeout=10_000)

    least_stall("typing", typing)

    # A paste of 100,000 characters over the text: counted and written in the background.
    base = "今天天气很好，我们去公园散步。Hello there, it is a nice day.\n" * 2_500
    pastes = iter(range(100, 200))  # three digits each: the same segments for every try
    # Counted here, off the measured stretch: the splitter takes a few hundred ms on it.
    size = window.controls.segment_slider.value()
    parts = len(split_segments(f"{base}Try 100.", size, first_apart=True))

    def paste() -> None:
        big = f"{base}Try {next(pastes)}."
        QGuiApplication.clipboard().setText(big)
        editor.selectAll()
        editor.paste()
        counted = f"{len(big)} characters · {parts} segments"
        qtbot.waitUntil(lambda: window.editor.counts.text().startswith(counted), timeout=20_000)
        qtbot.waitUntil(lambda: _read(saved) == big, timeout=20_000)

    least_stall("a long paste", paste)

    # A synthesis, played as it is made.
    window.editor.set_text("你好，世界。Hello there. 今天天气很好。" * 3)
    window.controls.segment_slider.setValue(10)
    window.controls.batch_box.setValue(2)
    window.controls.refine_box.setChecked(False)
    window.result.stream_box.setChecked(True)

    def synthesis() -> None:
        window.menu_actions.synth.trigger()
        qtbot.waitUntil(lambda: window.jobs.current is None, timeout=RUN_MS)
        assert window.messages.notice.text().startswith("Done"), window.messages.notice.text()
        window.result.player.wait(30)

    # A synthesis was held to 150 ms for a while: the UI thread waited 30-70 ms for the GIL at
    # every job's start. The cause, found by sampling the threads: drawing a speaker encodes it
    # as ChatTTS does (LZMA2 at preset 9e), whose encoder set up a 64 MiB dictionary in 35-45 ms
    # with the GIL held; core/voices/speaker_codec.py makes the same bytes with a small
    # dictionary.
    least_stall("a synthesis", synthesis)

    # A long result arrives, and is saved as WAV and as FLAC.
    arriving = iter([long_outcome(LONG_RESULT_S, seed=seed) for seed in range(3)])

    def long_result() -> None:
        window.result.stop()
        arrive(window, next(arriving))
        qtbot.wait(50)

    least_stall("a long result arriving", long_result)
    for name in ("long.wav", "long.flac"):
        target = tmp_path / name
        monkeypatch.setattr(dialogs, "save_audio_file", lambda *_args, t=target: t)

        def save() -> None:
            window.menu_actions.save.trigger()
            qtbot.waitUntil(lambda: not window.result.exporting, timeout=RUN_MS)

        least_stall(f"saving {name}", save)
        assert window.messages.notice.text().startswith(f"Saved {name}")
        assert sf.info(str(target)).frames == len(window.result.audio)

    # The Models dialog, with every file hashed again (the cache gone).
    dialog = window.model.dialog

    def models_dialog() -> None:
        (paths.data_dir() / hashcache.CACHE_NAME).unlink(missing_ok=True)
        window.model.show_dialog()
        qtbot.waitUntil(lambda: not dialog.checking, timeout=RUN_MS)
        assert dialog.rows["demo"].state.text().startswith("ready")
        dialog.close()

    least_stall("the Models dialog", models_dialog)

    # The history: long results, each replayed by selecting it.
    arrive(window, long_outcome(LONG_RESULT_S // 2, seed=next(tries)))
    history = window.result.history_list
    assert history.count() >= 3

    def replay() -> None:
        for row in range(history.count()):
            history.setCurrentRow(row)
            qtbot.wait(30)

    least_stall("the history", replay)


def test_a_long_export_can_be_cancelled_and_writes_nothing(  # type: ignore[no-untyped-def]
    qtbot, make_window, monkeypatch, tmp_path
) -> None:
    window = make_window()
    result = window.result
    result.end(long_outcome(LONG_RESULT_S))
    result.per_segment.setChecked(True)  # twenty files: the cancel lands between two
    out = tmp_path / "out"
    out.mkdir()
    target = out / "long.flac"
    monkeypatch.setattr(dialogs, "save_audio_file", lambda *_args: target)
    window.menu_actions.save.trigger()
    assert result.exporting and result.save_button.text() == "Cancel saving"
    result.save_button.click()
    qtbot.waitUntil(lambda: not result.exporting, timeout=RUN_MS)
    assert result.save_note.text() == "Saving cancelled; no file was written."
    assert list(out.iterdir()) == []
    assert result.save_button.text() == "Save…"


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except OSError:
        return ""


def test_a_thousand_segment_project_opens_and_scrolls_without_stalls(  # type: ignore[no-untyped-def]
    qtbot, make_window, tmp_path
) -> None:
    """The target: 1,000 segments of 3 takes each, read off the UI thread and shown as
    a model (only the rows in view are asked for), then scrolled page by page and walked with
    the keyboard. The time to a usable window is printed (a figure, not a limit here)."""
    window = make_window()
    folder = tmp_path / "big.chattts"
    with writer.created(folder, big_project(1_000)) as handle:
        handle.save()
    projects = window.projects
    view = projects.panel.view
    opened: list[float] = []

    def open_it() -> None:
        projects.close_project()
        start = time.perf_counter()
        projects.show_folder(folder)
        qtbot.waitUntil(
            lambda: projects.panel.model.rowCount() == 1_000 and view.isVisible(), timeout=20_000
        )
        qtbot.wait(1)  # the first rows painted
        opened.append(time.perf_counter() - start)

    least_stall("opening a 1,000-segment project", open_it)
    print(f"a 1,000-segment project usable in {min(opened) * 1000:.0f} ms")
    assert window.editor_tabs.currentWidget() is projects.panel

    def scroll() -> None:
        bar = view.verticalScrollBar()
        for value in range(0, bar.maximum() + 1, max(1, bar.pageStep())):
            bar.setValue(value)
            qtbot.wait(5)
        view.setFocus()
        view.go_to(1)
        for _ in range(30):  # each key in a turn of its own, as typed: a stall is one event's
            qtbot.keyClick(view, Qt.Key.Key_Down)  # (keyClick sends it at once, unqueued)
            qtbot.wait(1)
        qtbot.keyClick(view, Qt.Key.Key_End, Qt.KeyboardModifier.ControlModifier)
        qtbot.wait(20)
        assert view.current_number() == 1_000

    least_stall("scrolling it", scroll)
