"""The window keeps a job's audio on disk: the result store reads back exactly what
the segments made, its envelope equals one computed from the whole buffer, the result panel
holds no whole-job buffer in memory, and the history on disk keeps to its limit, survives a
restart and is emptied by Clear."""

import gc
import tracemalloc
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
from audio_fakes import noise

from chattts_studio.core import SAMPLE_RATE
from chattts_studio.core.engine.request import (
    AudioChunk,
    JobSummary,
    SegmentResult,
    SynthesisRequest,
    join_audio,
)
from chattts_studio.core.results.envelope import (
    ENVELOPE_BUCKETS,
    FIRST_BUCKET,
    Envelope,
    envelope_of,
)
from chattts_studio.core.results.history import HistoryStore
from chattts_studio.core.results.result_store import ResultStore
from chattts_studio.core.services.synthesize import SynthesisJob, SynthesisOutcome
from chattts_studio.gui.result.panel import ResultPanel

CHUNK = 24 * 512  # what the engine streams: 24 GPT steps of audio


def outcome_of(results: list[SegmentResult], text: str = "text") -> SynthesisOutcome:
    seconds = sum(r.audio_seconds for r in results)
    summary = JobSummary(len(results), seconds, seconds / 10, 100, 0.5, None)
    request = SynthesisRequest(text, refine_text=False, segment_size=10, batch_size=1)
    return SynthesisOutcome(SynthesisJob(request, 2, "voice seed 2"), results, summary, "")


def run_panel(panel: ResultPanel, clips: list[np.ndarray], text: str = "text") -> None:
    """A run as the worker delivers it: chunks, then each segment, then the outcome."""
    panel.begin(0.25)
    results = []
    for index, clip in enumerate(clips):
        for first in range(0, len(clip), CHUNK):
            piece = clip[first : first + CHUNK]
            panel.add_chunk(AudioChunk(index, piece, first + CHUNK >= len(clip)))
        result = SegmentResult(index, len(clips), f"s{index}", clip, 10, 0.1, 1)
        panel.add_segment(result)
        results.append(result)
    panel.end(outcome_of(results, text))


@pytest.fixture
def panel(qtbot, tmp_path: Path):  # type: ignore[no-untyped-def]
    panel = ResultPanel(history=HistoryStore(tmp_path / "history"))
    panel.stream_box.setChecked(False)  # no sound needed here
    qtbot.addWidget(panel)
    return panel


def test_the_store_reads_back_what_the_segments_made(qtbot, panel, engine) -> None:  # type: ignore[no-untyped-def]
    """Real segments, streamed in chunks by the engine as the worker streams them."""
    request = SynthesisRequest(
        "你好。Hello there. 再见。", refine_text=False, segment_size=5, batch_size=2, seed=3
    )
    panel.begin(request.pause_seconds)
    results = []
    for result in engine.synthesize(request, panel.add_chunk):
        panel.add_segment(result)
        results.append(result)
    assert len(results) >= 2
    panel.end(outcome_of(results))
    expected = join_audio(results, request.pause_seconds)
    store = panel.store
    assert np.array_equal(store.read(0, store.length), expected)  # sample for sample
    for r, shown in zip(results, panel.results, strict=True):
        start, end = store.segments[r.index]
        assert np.array_equal(store.read(start, end), r.audio)
        assert np.array_equal(shown.audio, r.audio)
    mins, maxs = envelope_of(expected, store.envelope.bucket)
    assert np.array_equal(store.envelope.mins, mins) and np.array_equal(store.envelope.maxs, maxs)


def test_the_envelope_equals_one_of_the_whole_buffer_through_growth_and_cuts(tmp_path) -> None:  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(5)
    store = ResultStore.create(tmp_path)
    parts = [rng.standard_normal(int(n)).astype(np.float32) for n in rng.integers(1, 9000, 300)]
    for part in parts:
        store.append(part)
    whole = np.concatenate(parts)
    # The buckets merged as it grew (their width doubled), and never outnumber the limit.
    assert store.envelope.bucket > FIRST_BUCKET and store.envelope.count <= ENVELOPE_BUCKETS
    store.truncate(len(whole) - 12_345)  # a segment made again (out of memory)
    store.append(parts[0])
    whole = np.concatenate([whole[: len(whole) - 12_345], parts[0]])
    mins, maxs = envelope_of(whole, store.envelope.bucket)
    assert np.array_equal(store.envelope.mins, mins) and np.array_equal(store.envelope.maxs, maxs)
    assert np.array_equal(store.read(0, store.length), whole)
    empty = Envelope()
    empty.add(np.zeros(0, np.float32))
    assert empty.count == 0 and empty.peak() == 0.0


def test_the_panel_holds_no_whole_job_buffer(qtbot, panel) -> None:  # type: ignore[no-untyped-def]
    """Ten minutes of audio (57 MB as float32) pass through the panel; what it allocates at
    its peak stays a small fraction of that, and what it holds of the job is file views."""
    seconds, segments = 600, 20
    per_segment = seconds * SAMPLE_RATE // segments
    total_bytes = seconds * SAMPLE_RATE * 4
    tracemalloc.start()
    try:
        panel.begin(0.25)
        rng = np.random.default_rng(1)
        results = []
        for index in range(segments):
            for first in range(0, per_segment, CHUNK):
                piece = rng.uniform(-0.5, 0.5, min(CHUNK, per_segment - first)).astype(np.float32)
                panel.add_chunk(AudioChunk(index, piece, first + CHUNK >= per_segment))
            result = SegmentResult(index, segments, "s", np.zeros(0, np.float32), 10, 0.1, 1)
            panel.add_segment(result)
            results.append(result)
            qtbot.wait(1)  # the panel's ticks draw the waveform as it grows
        panel.end(outcome_of(results))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert panel.length >= seconds * SAMPLE_RATE - segments
    assert peak < total_bytes / 10, f"{peak / 2**20:.1f} MiB traced for a 57 MB job"
    # What the panel and its history keep of the job: views of the file, never a copy.
    held = [v for v in vars(panel).values() if isinstance(v, np.ndarray)]
    held += [r.audio for r in panel.results] + [panel.history[-1].outcome.audio]
    assert all(isinstance(a, np.memmap) or a.size < CHUNK for a in held)
    _times, values = panel.wave_curve.getData()
    assert len(values) <= 2 * ENVELOPE_BUCKETS  # the drawing is bounded too


def quit_panel(panel: ResultPanel) -> None:
    """What the app's end does to a panel: gone, and with it every view of its results' files
    (on Windows a file another window maps cannot be deleted)."""
    from PySide6.QtCore import QCoreApplication, QEvent

    panel.close()
    panel.deleteLater()
    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    for entry in panel.history:  # the process ends: its files close
        if entry.store is not None:
            entry.store.close()
    panel.history.clear()
    panel.store, panel.results = None, []
    gc.collect()


def test_history_keeps_to_its_limit_survives_a_restart_and_clears(qtbot, tmp_path) -> None:  # type: ignore[no-untyped-def]
    folder = tmp_path / "history"
    panel = ResultPanel(history=HistoryStore(folder))
    panel.stream_box.setChecked(False)
    clips = [[noise(12.5, 10 * n + k) for k in range(2)] for n in range(4)]  # 2.4 MB each
    for n, pair in enumerate(clips):
        run_panel(panel, pair, f"result {n}")
    assert len(list(folder.iterdir())) == 4
    panel.set_history_limit(6 * 2**20)  # room for two: the two oldest go, from the disk too
    qtbot.waitUntil(lambda: len(list(folder.iterdir())) == 2, timeout=10_000)
    assert [e.outcome.job.request.text for e in panel.history] == ["result 2", "result 3"]
    qtbot.waitUntil(lambda: panel.usage_label.text().startswith("History uses 4."))
    assert panel.usage_label.text().endswith(" MB of 6 MB")

    # A restart: the entries come back from the folder, newest shown, audio and titles intact.
    titles = [panel.history_list.item(i).text() for i in range(2)]
    quit_panel(panel)
    again = ResultPanel(history=HistoryStore(folder))
    qtbot.addWidget(again)
    assert [again.history_list.item(i).text() for i in range(2)] == titles
    assert np.array_equal(again.audio, join_audio(again.history[-1].outcome.results, 0.25))
    assert np.array_equal(again.history[-1].outcome.results[1].audio, clips[3][1])
    assert again.save_to(tmp_path / "again.flac")
    assert sf.info(str(tmp_path / "again.flac")).frames == again.length

    said: list[str] = []
    again.message.connect(said.append)
    again.clear_button.click()
    qtbot.waitUntil(lambda: not list(folder.iterdir()) or bool(said), timeout=10_000)
    assert not list(folder.iterdir()), said  # a clear that failed says why in the panel
    assert again.history == [] and again.history_list.count() == 0 and again.length == 0
    qtbot.waitUntil(lambda: again.usage_label.text().startswith("History uses 0 bytes"))
