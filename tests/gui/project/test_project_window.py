"""The segment editor in the real window, on the demo weights (noise with the real shapes): a
project made from the editor's text, reviewed from the keyboard (Down, R, a digit, L, Space),
a segment's text edited in place and made again, the export; a second writer and a damaged
project each get one sentence. What is checked is what a take is, exactly: which segment a
re-roll changed, which take is chosen, the samples played and exported."""

import shutil
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
from project_window import make_project, prepare_project
from PySide6.QtCore import Qt

from chattts_studio.core.project import codec, reading, store, take_files, writer
from chattts_studio.gui.common import dialogs
from chattts_studio.gui.project.segment_model import Column

RUN_MS = 120_000
# Three sentences, each a segment at the smallest segment size.
TEXT = "第一句话在这里。第二句话在这里。第三句话在这里。"


pytestmark = pytest.mark.window(ready="idle")


def _idle(window) -> bool:  # type: ignore[no-untyped-def]
    return window.jobs.current is None


def _take_list_texts(panel) -> list[str]:  # type: ignore[no-untyped-def]
    model = panel.take_list.model
    return [
        str(model.index(row, column).data())
        for row in range(model.rowCount())
        for column in range(model.columnCount())
    ]


def _new_project(qtbot, window, folder: Path, monkeypatch) -> Path:  # type: ignore[no-untyped-def]
    prepare_project(window, folder, monkeypatch, TEXT)
    return make_project(qtbot, window)


def test_a_project_from_the_text_is_reviewed_from_the_keyboard(
    qtbot, make_window, tmp_path, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    window = make_window(model="demo")
    folder = _new_project(qtbot, window, tmp_path / "book.chattts", monkeypatch)
    panel = window.projects.panel
    before = store.load(folder)
    assert len(before.segments) == 3 and all(len(s.takes) == 1 for s in before.segments)
    assert window.editor_tabs.currentWidget() is panel  # the segments come to the front
    assert panel.model.rowCount() == 3

    view = panel.view
    view.setFocus()
    view.go_to(1)
    qtbot.keyClick(view, Qt.Key.Key_Down)
    assert view.current_number() == 2
    twin = tmp_path / "twin.chattts"  # the same project state, for a second re-roll below
    shutil.copytree(folder, twin)
    qtbot.keyClick(view, Qt.Key.Key_R)  # re-roll segment 2: a new take, chosen
    qtbot.waitUntil(lambda: _idle(window) and len(window.projects.project.at(2).takes) == 2)
    after = store.load(folder)
    assert codec.to_json(after)["segments"][0] == codec.to_json(before)["segments"][0]
    assert codec.to_json(after)["segments"][2] == codec.to_json(before)["segments"][2]
    second = after.at(2)
    assert second.takes[0] == before.at(2).takes[0] and second.chosen == 2
    assert panel.model.index(1, Column.TAKE).data() == "2/2"

    qtbot.keyClick(view, Qt.Key.Key_1)  # back to the first take, by hand
    qtbot.waitUntil(lambda: store.load(folder).at(2).chosen == 1)
    assert store.load(folder).at(2).picked
    qtbot.waitUntil(lambda: panel.model.index(1, Column.TAKE).data() == "1/2")

    qtbot.keyClick(view, Qt.Key.Key_L)  # locked: R does nothing to it now
    qtbot.waitUntil(lambda: store.load(folder).at(2).locked)
    qtbot.waitUntil(lambda: panel.model.row_at(1).locked)
    qtbot.keyClick(view, Qt.Key.Key_R)
    assert window.jobs.current is None and len(store.load(folder).at(2).takes) == 2

    played: list[np.ndarray] = []
    monkeypatch.setattr(window.result.player, "play", lambda audio, *a, **k: played.append(audio))
    qtbot.keyClick(view, Qt.Key.Key_Space)  # the chosen take of this segment, exactly
    qtbot.waitUntil(lambda: bool(played))
    chosen = store.load(folder).at(2).chosen_take
    assert chosen is not None and np.array_equal(played[0], take_files.take_audio(folder, chosen))

    # The same project state and the same click make the same take: its seed (shown in the
    # take list) and its samples.
    window.projects.show_folder(twin)
    qtbot.waitUntil(lambda: window.projects.folder == twin)
    view.go_to(2)
    qtbot.keyClick(view, Qt.Key.Key_R)
    qtbot.waitUntil(lambda: _idle(window) and len(store.load(twin).at(2).takes) == 2)
    first, again = second.takes[1], store.load(twin).at(2).takes[1]
    assert again.seed == first.seed != second.takes[0].seed
    assert np.array_equal(take_files.take_audio(twin, again), take_files.take_audio(folder, first))
    qtbot.waitUntil(lambda: str(first.seed) in _take_list_texts(panel))


def test_an_edited_segment_is_made_again_alone_and_the_export_is_the_chosen_takes(
    qtbot, make_window, tmp_path, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    window = make_window(model="demo")
    folder = _new_project(qtbot, window, tmp_path / "edit.chattts", monkeypatch)
    before = store.load(folder)
    model = window.projects.panel.model
    model.setData(model.index(0, Column.TEXT), "新的第一句话。", Qt.ItemDataRole.EditRole)
    qtbot.waitUntil(lambda: _idle(window) and len(store.load(folder).at(1).takes) == 2)
    after = store.load(folder)
    first = after.at(1)
    assert (
        first.text == "新的第一句话。" and first.chosen == 2 and first.takes[1].text == first.text
    )
    assert not first.current(first.takes[0])  # the old take reads the old text: stale
    assert [s.takes for s in after.segments[1:]] == [s.takes for s in before.segments[1:]]
    qtbot.waitUntil(lambda: model.index(0, Column.TEXT).data() == "新的第一句话。")

    out = tmp_path / "book.wav"
    monkeypatch.setattr(dialogs, "save_audio_file", lambda *_args: out)
    window.projects.export()
    qtbot.waitUntil(lambda: "Exported" in window.messages.notice.text(), timeout=RUN_MS)
    written, rate = sf.read(str(out), dtype="float32")
    expected = np.clip(reading.joined(folder, after), -1.0, 1.0)
    assert rate == 24000 and written.shape == expected.shape
    assert np.max(np.abs(written - expected)) <= 1.0 / 32767  # 16-bit PCM of the same samples
    assert not out.with_suffix(".srt").exists()  # Subtitles unticked: none written

    # The Result panel's save options apply: WebVTT subtitles beside the file, then one FLAC
    # file per segment in a folder named after the file.
    window.result.subtitles_box.setChecked(True)
    window.result.subtitle_format.setCurrentIndex(window.result.subtitle_format.findData("vtt"))
    window.projects.export()
    vtt = out.with_suffix(".vtt")
    qtbot.waitUntil(lambda: "subtitles" in window.messages.notice.text(), timeout=RUN_MS)
    assert vtt.read_text(encoding="utf-8").startswith("WEBVTT")
    assert vtt.read_text(encoding="utf-8").count("-->") == 3
    parts = tmp_path / "parts.flac"
    monkeypatch.setattr(dialogs, "save_audio_file", lambda *_args: parts)
    window.result.per_segment.setChecked(True)
    window.projects.export()
    qtbot.waitUntil(lambda: "into" in window.messages.notice.text(), timeout=RUN_MS)
    files = sorted((tmp_path / "parts").iterdir())
    assert [f.name for f in files] == ["0001.flac", "0002.flac", "0003.flac"]
    second, _ = sf.read(str(files[1]), dtype="float32")
    chosen = after.at(2).chosen_take
    assert chosen is not None
    assert np.max(np.abs(second - take_files.take_audio(folder, chosen))) <= 1.0 / 32767


def test_a_second_writer_and_a_damaged_project_are_one_sentence_each(
    qtbot, make_window, tmp_path, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    window = make_window(model="demo")
    folder = _new_project(qtbot, window, tmp_path / "shared.chattts", monkeypatch)
    before = (folder / store.PROJECT_FILE).read_text(encoding="utf-8")
    with writer.opened(folder):  # another process (the CLI) writes it now
        window.projects.panel.lock_wanted.emit([1], True)
        qtbot.waitUntil(lambda: "open in another" in window.messages.notice.text())
    assert (folder / store.PROJECT_FILE).read_text(encoding="utf-8") == before

    damaged = tmp_path / "damaged.chattts"
    damaged.mkdir()
    (damaged / store.PROJECT_FILE).write_text("{not json", encoding="utf-8")
    monkeypatch.setattr(dialogs, "open_project_folder", lambda *_args: damaged)
    window.projects.open()
    qtbot.waitUntil(lambda: "damaged" in window.messages.notice.text().lower())
    assert window.projects.folder == folder  # the open project stays open

    # A stray take record that does not read: the project opens without it, and says so.
    (folder / store.record_name(1, 9)).write_text("{cut short", encoding="utf-8")
    monkeypatch.setattr(dialogs, "open_project_folder", lambda *_args: folder)
    window.projects.open()
    qtbot.waitUntil(lambda: "was left out" in window.messages.notice.text())
    assert "s00001-t009.json" in window.messages.notice.text()
    assert window.projects.project is not None and window.projects.folder == folder


def test_the_render_queue_exports_a_projects_chosen_takes(
    qtbot, make_window, tmp_path, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    """Project > Add to the render queue: the queue's job writes the chosen takes in order
    with their pauses (nothing is made again), in the queue's format, subtitles beside."""
    window = make_window(model="demo")
    folder = _new_project(qtbot, window, tmp_path / "queued.chattts", monkeypatch)
    queue = window.render_jobs.queue
    queue.folder = tmp_path / "renders"
    queue.folder.mkdir()
    queue.format_box.setCurrentText("wav")
    queue.subtitles_box.setChecked(True)
    window.projects.add_to_queue()
    qtbot.waitUntil(lambda: queue.items and queue.items[-1].state == "done", timeout=RUN_MS)
    out = queue.folder / "queued" / "queued.wav"
    written, rate = sf.read(str(out), dtype="float32")
    expected = np.clip(reading.joined(folder, store.load(folder)), -1.0, 1.0)
    assert rate == 24000 and written.shape == expected.shape
    assert np.max(np.abs(written - expected)) <= 1.0 / 32767
    assert out.with_suffix(".srt").read_text(encoding="utf-8").count("-->") == 3
