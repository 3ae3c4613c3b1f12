"""The voice check in the real window (the stand-in engine, ops inline; projects of synthetic
takes; the demo speaker model, whose similarities are noise): the Voice column and the take
list show each check's similarity, a drift marked, the reference named in the tooltip and the
marked reference take starred; Mark as voice reference writes it off the UI thread; Check
voices fills the column, and a cancel keeps the checks made and every take; Best of N with
"Compare voices too" chooses by voice; the Models dialog downloads the speaker model."""

import threading
from dataclasses import replace
from pathlib import Path

import pytest
from project_fakes import file_hashes, saved_project, speech
from PySide6.QtCore import Qt

from chattts_studio.core.project import edits, store, writer
from chattts_studio.core.services import project_job
from chattts_studio.core.services.project_job import BestJob, VoiceJob
from chattts_studio.core.speaker import models as speaker_models
from chattts_studio.core.speaker.check import VoiceCheck
from chattts_studio.core.speaker.encoder import SpeakerEncoder
from chattts_studio.gui.project.segment_model import Column
from chattts_studio.gui.project.take_list import TakeColumn

TEXTS = ["The first sentence.", "The second sentence.", "The third one.", "And a fourth."]
TOOLTIP = Qt.ItemDataRole.ToolTipRole
RUN_MS = 60_000

pytestmark = pytest.mark.window(engine="standin")


@pytest.fixture(scope="session")
def demo_speaker() -> Path:
    """The demo speaker model in the run's cache, made once (a child process, seconds)."""
    from chattts_studio.core.speaker import demo_model

    return demo_model.demo_file()


@pytest.fixture
def shared_speaker(private_home: Path, demo_speaker: Path) -> Path:
    """The window's data folder sees the run's demo speaker model (not made again)."""
    (private_home / "cache" / "speaker").symlink_to(demo_speaker.parent)
    return demo_speaker


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """Four segments of one voice: segment 1 with two takes (the second chosen), the others
    with one; a second and more of noise at a voice's level, so each can be judged."""
    clips = [[speech(1.5, 1), speech(1.6, 2)], [speech(1.4, 3)], [speech(1.5, 4)], [speech(1.3, 5)]]
    return saved_project(tmp_path / "voices.chattts", TEXTS, clips)


def _check(
    similarity: float, reference_id: str, reference: str = "take", demo: bool = False
) -> VoiceCheck:
    return VoiceCheck(similarity, 0.82, reference, reference_id, "m.onnx", demo)


def _with_checks(folder: Path) -> None:
    """Segment 1's first take marked as the reference: itself 1.00, the chosen second 0.91;
    segment 2 drifts (0.64); 3 unchecked; 4 checked by the demo model against a typical take
    that is gone since."""
    with writer.opened(folder) as handle:
        first, second, _third, fourth = handle.project.segments
        marked = f"{first.id}/1"
        first.reference = 1
        first.takes = [
            replace(first.takes[0], voice_check=_check(1.0, marked)),
            replace(first.takes[1], voice_check=_check(0.91, marked)),
        ]
        second.takes = [replace(second.takes[0], voice_check=_check(0.64, marked))]
        gone = _check(0.95, "99/9", reference="typical", demo=True)
        fourth.takes = [replace(fourth.takes[0], voice_check=gone)]
        handle.save()


def _opened(qtbot, window, folder: Path) -> None:  # type: ignore[no-untyped-def]
    window.projects.show_folder(folder)
    qtbot.waitUntil(lambda: window.projects.panel.model.rowCount() == len(TEXTS))


def test_the_voice_column_and_the_take_list_show_each_check(
    qtbot, make_window, folder: Path
) -> None:  # type: ignore[no-untyped-def]
    _with_checks(folder)
    window = make_window(model=None)
    _opened(qtbot, window, folder)
    panel = window.projects.panel
    model = panel.model
    cells = [model.index(row, Column.VOICE) for row in range(len(TEXTS))]
    assert model.headerData(Column.VOICE, Qt.Orientation.Horizontal) == "Voice"
    assert [c.data() for c in cells] == ["0.91", "0.64 ⚠", "—", "0.95 (demo)"]
    fixed = "Judged by the fixed threshold: 0.82 or more is the same voice."  # the rule
    assert cells[0].data(TOOLTIP) == (
        f"Same voice as its reference (take 1 of segment 1).\n{fixed}"
    )
    assert cells[1].data(TOOLTIP) == (
        "The voice drifts from its reference: similarity 0.64 is below 0.82.\n"
        f"Reference: take 1 of segment 1.\n{fixed}"
    )
    assert cells[2].data(TOOLTIP) == "Not compared with its voice's reference yet (Check voices)."
    assert cells[3].data(TOOLTIP).split("\n") == [
        "Demo speaker model (random weights): its similarities judge noise, not voices.",
        "Same voice as its reference (a take no longer in the project).",
        fixed,
        "Compared with an earlier reference: Check voices compares it with the marked one.",
    ]
    # The drift is a flag like any other: named, said, and counted as flagged.
    assert model.index(1, Column.FLAGS).data() == "voice"
    assert model.index(0, Column.FLAGS).data() == ""
    assert "voice drifts from its reference" in model.index(1, Column.FLAGS).data(TOOLTIP)
    assert model.flagged_count() == 1

    # The take list: each take's similarity, the reference starred and said.
    takes = panel.take_list
    panel.view.go_to(1)
    rows = takes.model
    assert rows.headerData(TakeColumn.VOICE, Qt.Orientation.Horizontal) == "Voice"
    assert rows.index(0, TakeColumn.VOICE).data() == "★ 1.00"
    assert rows.index(1, TakeColumn.VOICE).data() == "0.91"
    assert rows.index(0, TakeColumn.VOICE).data(TOOLTIP).startswith("Its voice's reference: ")
    takes.view.setCurrentIndex(rows.index(0, 0))
    assert not takes.reference_button.isEnabled()  # the reference already
    takes.view.setCurrentIndex(rows.index(1, 0))
    assert takes.reference_button.isEnabled()
    panel.view.go_to(2)
    assert rows.index(0, TakeColumn.VOICE).data() == "0.64 ⚠"


def test_mark_as_voice_reference_writes_it_off_the_ui_thread(
    qtbot, make_window, folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    _with_checks(folder)
    writers: list[bool] = []
    real = edits.mark_reference

    def marking(path: Path, number: int, take_id: int | None = None) -> int:
        writers.append(threading.current_thread() is threading.main_thread())
        return real(path, number, take_id)

    monkeypatch.setattr(edits, "mark_reference", marking)
    window = make_window(model=None)
    _opened(qtbot, window, folder)
    panel, takes = window.projects.panel, window.projects.panel.take_list
    panel.view.go_to(2)
    assert takes.reference_button.isEnabled()
    qtbot.mouseClick(takes.reference_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: store.load(folder).at(2).reference == 1)
    assert writers == [False]  # written once, on the thread pool
    on_disk = store.load(folder)
    assert on_disk.at(1).reference is None  # one reference a voice
    notice = window.messages.notice
    qtbot.waitUntil(lambda: notice.text().startswith("Segment 2: take 1 is its voice's reference"))
    # Shown again from disk: the new reference starred, the old checks out of date.
    qtbot.waitUntil(lambda: takes.model.index(0, TakeColumn.VOICE).data() == "★ 0.64 ⚠")
    assert not takes.reference_button.isEnabled()
    tip = panel.model.index(0, Column.VOICE).data(TOOLTIP)
    assert tip.endswith(
        "Compared with an earlier reference: Check voices compares it with the marked one."
    )


def test_check_voices_fills_the_column_and_a_cancel_keeps_the_project_whole(
    qtbot, make_window, folder: Path, shared_speaker: Path, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    edits.mark_reference(folder, 1)  # so the order of the embeddings is known
    takes_before = file_hashes(folder / "takes")
    window = make_window(model="demo")
    _opened(qtbot, window, folder)
    panel, notice = window.projects.panel, window.messages.notice
    idle = lambda: window.jobs.current is None  # noqa: E731

    # Cancelled while the third take is judged: it is kept, the fourth is never checked.
    embedded: list[int] = []
    real = SpeakerEncoder.embed

    def embed(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        embedded.append(1)
        if len(embedded) == 3:
            window.jobs.cancel()  # Esc, while the job runs
        return real(self, *args, **kwargs)

    monkeypatch.setattr(SpeakerEncoder, "embed", embed)
    assert panel.voice_button.isEnabled()
    qtbot.mouseClick(panel.voice_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: idle() and notice.text().startswith("Cancelled"), timeout=RUN_MS)
    assert notice.text() == "Cancelled; the takes already made are kept."
    cancelled = store.load(folder)  # whole: it loads, every take still there
    assert [s.chosen_take.voice_check is not None for s in cancelled.segments] == [
        True,
        True,
        True,
        False,
    ]
    assert file_hashes(folder / "takes") == takes_before
    qtbot.waitUntil(lambda: panel.model.index(2, Column.VOICE).data() != "—")
    assert panel.model.index(3, Column.VOICE).data() == "—"

    # Again, to the end: only the fourth is compared, and every cell shows its number.
    monkeypatch.setattr(SpeakerEncoder, "embed", real)
    qtbot.mouseClick(panel.voice_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: idle() and "compared in" in notice.text(), timeout=RUN_MS)
    assert notice.text().startswith("Voices of 1 take compared in ")
    assert notice.text().endswith(
        "Compared by the demo speaker model (random weights): its similarities judge noise."
    )
    checked = store.load(folder)
    assert checked.at(4).chosen_take.voice_check is not None  # type: ignore[union-attr]
    for row, segment in enumerate(checked.segments):
        check = segment.chosen_take.voice_check  # type: ignore[union-attr]
        assert check is not None and check.demo and check.model == shared_speaker.name
        shown = f"{check.similarity:.2f}" + ("" if check.same else " ⚠") + " (demo)"
        qtbot.waitUntil(lambda r=row, s=shown: panel.model.index(r, Column.VOICE).data() == s)


def test_best_of_n_with_compare_voices_chooses_the_closest_voice(
    qtbot, make_window, tmp_path: Path, shared_speaker: Path, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    """Two takes of each segment (the second chosen), segment 1's first marked as the
    reference; every take heard alike: Best of 2 with voices compared ends segment 1 on its
    reference, and compares every take."""

    class HearsTheSame:
        name = "stand-in recogniser"

        def transcribe(self, *_args: object) -> str:
            return "sentence"

        def unload(self) -> None:
            pass

    monkeypatch.setattr(project_job, "recognizer_for", lambda _engine: HearsTheSame())
    clips = [[speech(1.5, 10 * n), speech(1.5, 10 * n + 1)] for n in range(2)]
    folder = saved_project(tmp_path / "best.chattts", TEXTS[:2], clips)
    edits.mark_reference(folder, 1, 1)
    window = make_window(model="demo")
    _opened_two = lambda: window.projects.panel.model.rowCount() == 2  # noqa: E731
    window.projects.show_folder(folder)
    qtbot.waitUntil(_opened_two)
    panel = window.projects.panel
    panel.takes_box.setValue(2)
    panel.voice_box.setChecked(True)
    qtbot.mouseClick(panel.best_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(
        lambda: window.jobs.current is None and "made in" in window.messages.notice.text(),
        timeout=RUN_MS,
    )
    assert "every take heard and its voice compared" in window.messages.notice.text()
    best = store.load(folder)
    assert all(t.voice_check is not None for s in best.segments for t in s.takes)
    assert best.at(1).chosen == 1  # its reference: similarity 1, the hearing a tie


@pytest.mark.window(home="own_home", engine="standin")
def test_the_models_dialog_downloads_the_speaker_model(
    qtbot, make_window, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    asked: list[str] = []

    def download(progress, cancelled, *_args: object) -> Path:  # type: ignore[no-untyped-def]
        asked.append("speaker")
        progress(28 << 20, 28 << 20)
        target = speaker_models.official_file()
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(b"the model's bytes")
        return target

    monkeypatch.setattr(speaker_models, "download", download)
    window = make_window(model=None)
    window.model.show_dialog()
    dialog = window.model.dialog
    row = dialog.speaker
    qtbot.waitUntil(lambda: row.action.isVisible())
    assert row.title.text() == "Speaker model"
    assert row.state.text() == "voice check: not downloaded yet (28 MB)"
    assert row.action.text() == "Download" and row.action.isEnabled()
    assert row.action.accessibleName() == "Download Speaker model"
    qtbot.mouseClick(row.action, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.jobs.current is None and asked == ["speaker"], timeout=RUN_MS)
    qtbot.waitUntil(
        lambda: (
            dialog.status_label.text()
            == "The voice check's speaker model is downloaded and verified."
        )
    )
    assert row.state.text() == "voice check: downloaded"
    assert row.action.text() == "Download again" and row.action.isEnabled()
    assert speaker_models.CAMPPLUS.present()
    dialog.close()


def test_what_a_voice_job_says_when_it_ends() -> None:
    from chattts_studio.gui.project import said

    assert said.working(VoiceJob(Path("p"))) == "Comparing voices…  (Esc cancels)"
    short = "Take 1 of segment 2 is 0.40 s long; the voice check needs at least 1 s."
    assert said.finished(VoiceJob(Path("p")), 2, 0.5, demo=False, skipped=(short,)) == (
        f"Voices of 2 takes compared in 0.5 s. 1 take not compared: {short}"
    )
    # Best of N with voices: what was made, and which models judged.
    assert said.finished(BestJob(Path("p"), 4, voice=True), 4, 2.0, True, voice_demo=True) == (
        "4 takes made in 2.0 s; every take heard and its voice compared. Heard by the demo "
        "recogniser (random weights): not a real hearing. Compared by the demo speaker model "
        "(random weights): its similarities judge noise."
    )
    assert "voice" not in said.finished(BestJob(Path("p"), 4), 4, 2.0, False, voice_demo=True)
