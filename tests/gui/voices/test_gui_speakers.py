"""The real window, offscreen: keeping an auditioned voice under a taken name, importing a
library twice, the two seeds named for what they do, and the settings a running job uses."""

import json

import numpy as np
import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFormLayout, QLabel
from window_steps import fast

from chattts_studio.core.engine.request import AUTO_BATCH_MAX, BATCH_SIZE_RANGE
from chattts_studio.core.services.audition import Candidate
from chattts_studio.core.voices.speakers import SpeakerLibrary
from chattts_studio.gui.common import dialogs
from chattts_studio.gui.worker.jobs import JobKind

EMB = "豆" * 40
LONG = "你好，世界。今天天气很好。" * 30
RUN_MS = 120_000


pytestmark = pytest.mark.window(ready="idle")


def test_keep_under_a_taken_name_says_so_and_offers_another_name_or_replace(
    qtbot, make_window, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    window = make_window(model=None, wait=False)
    assert window.speakers.keep("Alice", EMB + "old", 1)
    window.auditions.show_audition()
    dialog = window.auditions.dialog
    first, second = (
        Candidate(11, EMB + "11", np.zeros(2400, np.float32)),
        Candidate(12, EMB + "12", np.zeros(2400, np.float32)),
    )
    dialog.show_candidates([first, second])
    asked: list[str] = []

    def answer(name: str):  # type: ignore[no-untyped-def]
        def ask(_parent, _title, _label, text=""):  # type: ignore[no-untyped-def]
            asked.append(text)
            return name if name else text  # "" : accept the suggested name

        return ask

    keep_first = dialog.rows[2]  # each row: label, play, keep, drop
    assert keep_first.text() == "Keep…"
    monkeypatch.setattr(dialogs, "ask_name", answer("Alice"))
    keep_first.click()
    assert asked == ["voice seed 11"]
    status = dialog.status.text()
    assert "Not kept" in status and "already has a speaker named 'Alice'" in status
    assert "Kept" not in status
    assert dialog.taken_row.isVisible()
    assert dialog.replace_button.isVisible() and dialog.another_name.isVisible()
    assert SpeakerLibrary().get("Alice").embedding == EMB + "old"  # type: ignore[union-attr]

    # Another name: the dialog suggests a free one.
    monkeypatch.setattr(dialogs, "ask_name", answer(""))
    dialog.another_name.click()
    assert asked[-1] == "Alice (2)"
    assert dialog.status.text() == "Kept voice seed 11 in the library as 'Alice (2)'."
    assert window.messages.notice.text() == dialog.status.text()
    assert not dialog.taken_row.isVisible()
    kept = SpeakerLibrary().get("Alice (2)")
    assert kept is not None and kept.embedding == first.embedding and kept.seed == 11
    assert window.speakers.current().label == "Alice (2)"

    # Replace: the name stays, the voice is the candidate's.
    monkeypatch.setattr(dialogs, "ask_name", answer("Alice"))
    dialog.rows[6].click()  # the second row's Keep…
    assert "already has a speaker named 'Alice'" in dialog.status.text()
    dialog.replace_button.click()
    replaced = "Replaced the voice of 'Alice' in the library with voice seed 12."
    assert dialog.status.text() == replaced
    alice = SpeakerLibrary().get("Alice")
    assert alice is not None and alice.embedding == second.embedding and alice.seed == 12
    assert SpeakerLibrary().names() == ["Alice", "Alice (2)"]
    assert not dialog.taken_row.isVisible()


def test_keep_into_a_library_that_cannot_be_written_says_so_in_the_dialog(
    qtbot, make_window, monkeypatch, private_home
) -> None:  # type: ignore[no-untyped-def]
    (private_home / "speakers.json").write_text(json.dumps({"format": 99, "speakers": []}))
    window = make_window(model=None, wait=False)
    window.auditions.show_audition()
    dialog = window.auditions.dialog
    dialog.show_candidates([Candidate(5, EMB + "5", np.zeros(2400, np.float32))])
    monkeypatch.setattr(dialogs, "ask_name", lambda *_args, **_kw: "Bob")
    dialog.rows[2].click()
    assert dialog.status.text().startswith("Not kept: The speaker library cannot be changed")
    assert not dialog.taken_row.isVisible()


def test_importing_a_library_twice_adds_nothing_and_says_how_many(
    qtbot, make_window, monkeypatch, tmp_path
) -> None:  # type: ignore[no-untyped-def]
    window = make_window(model=None, wait=False)
    source = tmp_path / "voices.json"
    speakers = [
        {"name": "Alice", "embedding": EMB + "a", "seed": 3},
        {"name": "Bob", "embedding": EMB + "b"},
    ]
    source.write_text(json.dumps({"format": 1, "speakers": speakers}), encoding="utf-8")
    monkeypatch.setattr(dialogs, "open_speaker_file", lambda *_args: source)
    window.speakers.import_button.click()
    assert window.messages.notice.text() == (
        "Imported voices.json: 2 added, 0 skipped (already in the library), 0 renamed."
    )
    window.speakers.import_button.click()
    assert window.messages.notice.text() == (
        "Imported voices.json: 0 added, 2 skipped (already in the library), 0 renamed."
    )
    assert window.speakers.library.names() == ["Alice", "Bob"]
    # Another voice under a taken name is added under a free one, and said.
    speakers.append({"name": "Alice", "embedding": EMB + "c"})
    source.write_text(json.dumps({"format": 1, "speakers": speakers}), encoding="utf-8")
    window.speakers.import_button.click()
    assert window.messages.notice.text() == (
        "Imported voices.json: 1 added, 2 skipped (already in the library), 1 renamed "
        "('Alice' as 'Alice (2)')."
    )
    assert [window.speakers.list.item(i).text() for i in range(3)] == [
        "Alice (voice seed 3)",
        "Bob",
        "Alice (2)",
    ]


def test_the_two_seeds_are_named_for_what_they_do_and_history_spells_them_out(
    qtbot, make_window
) -> None:  # type: ignore[no-untyped-def]
    window = make_window()
    speakers, controls = window.speakers, window.controls
    assert speakers.seed_mode.text() == "Voice seed"
    assert "picks the speaker" in speakers.seed_box.toolTip()
    assert "generation seed" in speakers.seed_mode.toolTip()
    form = controls.advanced.layout()
    assert isinstance(form, QFormLayout)
    label = form.labelForField(controls.seed_box)
    assert isinstance(label, QLabel) and label.text() == "Generation seed"
    assert "does not choose the voice" in controls.seed_box.toolTip()
    assert "voice seed" in controls.seed_box.toolTip()
    speakers.seed_box.setValue(2)
    controls.seed_box.setValue(0)
    fast(window, "你好。")
    window.menu_actions.synth.trigger()
    qtbot.waitUntil(lambda: window.jobs.current is None, timeout=RUN_MS)
    title = window.result.history_list.item(0).text()
    assert "voice seed 2" in title, title


def test_segment_and_batch_size_are_locked_while_a_synthesis_runs(qtbot, make_window) -> None:  # type: ignore[no-untyped-def]
    window = make_window(wait=False)
    controls = window.controls
    slider, batch = controls.segment_slider, controls.batch_box
    # The batch box's range is the engine's, and its tooltip says what auto means.
    assert (batch.minimum(), batch.maximum()) == BATCH_SIZE_RANGE
    assert batch.specialValueText() == "auto"
    assert f"auto: up to {AUTO_BATCH_MAX}" in batch.toolTip()
    assert f"up to {BATCH_SIZE_RANGE[1]}" in batch.toolTip() and "memory" in batch.toolTip()
    # A load does not use them: they stay editable meanwhile.
    assert window.jobs.current is not None and window.jobs.current.kind is JobKind.LOAD
    assert slider.isEnabled() and batch.isEnabled()
    qtbot.waitUntil(lambda: window.jobs.current is None, timeout=RUN_MS)
    fast(window, LONG)
    slider_tip, batch_tip = slider.toolTip(), batch.toolTip()
    window.menu_actions.synth.trigger()
    assert window.jobs.current is not None and window.jobs.current.kind is JobKind.SYNTHESIZE
    assert not slider.isEnabled() and not batch.isEnabled()
    assert slider.toolTip().startswith("Locked: the running synthesis uses this value")
    assert "applies to the next job" in batch.toolTip()
    counts = window.editor.counts.text()
    slider.setFocus()
    qtbot.keyClick(slider, Qt.Key.Key_End)  # a person moving it mid-run: nothing moves
    assert slider.value() == 10 and window.editor.counts.text() == counts
    window.jobs.cancel()
    qtbot.waitUntil(lambda: window.jobs.current is None, timeout=RUN_MS)
    assert slider.isEnabled() and batch.isEnabled()
    assert (slider.toolTip(), batch.toolTip()) == (slider_tip, batch_tip)
    qtbot.keyClick(slider, Qt.Key.Key_End)
    assert slider.value() == slider.maximum()


def test_the_speaker_label_in_history_is_the_name_or_the_voice_seed(qtbot, make_window) -> None:  # type: ignore[no-untyped-def]
    window = make_window(model=None, wait=False)
    assert window.speakers.keep("Narrator", EMB, None)
    choice = window.speakers.current()
    assert choice.label == "Narrator" and choice.embedding == EMB
    window.speakers.seed_mode.setChecked(True)
    window.speakers.seed_box.setValue(7)
    assert window.speakers.current().label == "voice seed 7"


def test_a_window_open_while_twelve_processes_add_shows_them_all_and_its_rename_keeps_them(
    qtbot, make_window, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    """The window reads the library again when the command line (here 12 processes
    at once) changes it, and its own next change keeps every speaker they added."""
    from concurrent_writers import EXPECTED_NAMES, EXPECTED_WORDS, every_name, run_writers

    window = make_window(model=None, wait=False)
    assert window.speakers.keep("Alice", EMB + "alice", 1)
    library, lexicon = window.speakers.library.path, window.voices.lexicon.store.path
    run_writers(library, lexicon)

    def shown() -> set[str]:
        box = window.speakers.library_box
        return {box.itemText(i) for i in range(box.count())}

    qtbot.waitUntil(lambda: shown() == EXPECTED_NAMES | {"Alice"})
    qtbot.waitUntil(lambda: {w for w, _r in window.voices.lexicon.entries()} == EXPECTED_WORDS)
    assert window.voices.lexicon.table.rowCount() == len(EXPECTED_WORDS)
    window.speakers.list.setCurrentRow(0)
    monkeypatch.setattr(dialogs, "ask_name", lambda *_a, **_k: "Alicia")
    window.speakers.rename.click()
    assert every_name(library) == EXPECTED_NAMES | {"Alicia"}
    assert shown() == EXPECTED_NAMES | {"Alicia"}
