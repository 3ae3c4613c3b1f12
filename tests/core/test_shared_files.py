"""Files several processes change at once: the speaker library, the
pronunciation dictionary and the history. Every change is a read-modify-write under the file's
lock, so no writer puts back a copy that misses another's change, and the panels show what
another process wrote as soon as it lands.

This module is also what the concurrent writers run (spawned processes import it): it imports
core only, never Qt or torch, at its top."""

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from concurrent_writers import (
    EXPECTED_NAMES,
    EXPECTED_WORDS,
    embedding,
    every_name,
    every_word,
    run_writers,
)
from filelock import FileLock

from chattts_studio.core import file_lock
from chattts_studio.core.errors import SpeakerError
from chattts_studio.core.results.history import HistoryStore
from chattts_studio.core.results.result_store import META
from chattts_studio.core.services.keep_voice import keep_voice
from chattts_studio.core.text.lexicon import LexiconError, LexiconStore
from chattts_studio.core.voices.speakers import SpeakerLibrary
from chattts_studio.core.voices.voice import Voice


def test_twelve_processes_adding_at_once_keep_every_entry(tmp_path: Path) -> None:
    library, lexicon = tmp_path / "speakers.json", tmp_path / "lexicon.json"
    SpeakerLibrary(library).add("kept before", embedding(99, 0))
    run_writers(library, lexicon)
    assert every_name(library) == EXPECTED_NAMES | {"kept before"}
    assert every_word(lexicon) == EXPECTED_WORDS
    assert LexiconStore(lexicon).entries["w3x4"] == "read 3 4"
    assert not list(tmp_path.glob(".*part*"))  # every write was atomic and cleaned up


def test_a_change_reads_the_file_again_and_the_object_holds_what_it_wrote(tmp_path: Path) -> None:
    library, lexicon = SpeakerLibrary(tmp_path / "s.json"), LexiconStore(tmp_path / "l.json")
    SpeakerLibrary(library.path).add("Bob", embedding(1, 1))  # another process, meanwhile
    LexiconStore(lexicon.path).add("SQL", "sequel")
    library.add("Alice", embedding(2, 2))
    lexicon.add("XML", "x m l")
    assert (
        library.names()
        == ["Bob", "Alice"]
        == [e.name for e in SpeakerLibrary(library.path).entries]
    )
    assert (
        lexicon.entries == {"SQL": "sequel", "XML": "x m l"} == LexiconStore(lexicon.path).entries
    )
    SpeakerLibrary(library.path).rename("Bob", "Robert")
    library.rename("Alice", "Alicia")  # its copy still says Bob: the file's Robert stays
    assert every_name(library.path) == {"Robert", "Alicia"}
    with pytest.raises(SpeakerError, match="no speaker named 'Bob'"):
        library.remove("Bob")  # gone meanwhile: said, nothing written
    LexiconStore(lexicon.path).remove("SQL")
    with pytest.raises(LexiconError, match="no entry 'SQL'"):
        lexicon.remove("SQL")
    assert lexicon.entries == {"XML": "x m l"}


def test_keeping_a_voice_after_long_work_keeps_what_others_added_meanwhile(
    tmp_path: Path,
) -> None:
    """`speakers add` reads the library, then makes the voice for tens of seconds: the entry is
    added to the file as it is at the end, not to the copy read at the start."""
    library = SpeakerLibrary(tmp_path / "speakers.json")

    class SlowEngine:
        def check_voice(self, _voice: Voice) -> None:  # the tens of seconds of work
            SpeakerLibrary(library.path).add("added by the window", embedding(1, 1))

    entry = keep_voice(library, SlowEngine(), "Alice", Voice(embedding(2, 2)), preview=False)  # type: ignore[arg-type]
    assert entry.name == "Alice"
    assert every_name(library.path) == {"added by the window", "Alice"}
    assert library.names() == ["added by the window", "Alice"]


def test_a_lock_held_too_long_is_one_sentence_and_changes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(file_lock, "LOCK_TIMEOUT_S", 0.2)
    library, lexicon = SpeakerLibrary(tmp_path / "s.json"), LexiconStore(tmp_path / "l.json")
    library.add("Bob", embedding(1, 1))
    before = library.path.read_bytes()
    held = [FileLock(file_lock.lock_file(p)) for p in (library.path, lexicon.path)]
    for lock in held:  # another ChatTTS Studio in the middle of a change
        lock.acquire()
    try:
        with pytest.raises(SpeakerError) as exc:
            library.rename("Bob", "Robert")
        assert str(exc.value) == (
            "Another ChatTTS Studio is changing the speaker library; try again."
        )
        with pytest.raises(LexiconError, match="changing the pronunciation dictionary; try"):
            lexicon.add("SQL", "sequel")
    finally:
        for lock in held:
            lock.release()
    assert library.path.read_bytes() == before and not lexicon.path.exists()
    assert library.names() == ["Bob"]
    library.rename("Bob", "Robert")  # free again: works
    assert every_name(library.path) == {"Robert"}


# -- the history -------------------------------------------------------------------------------


def test_a_result_being_made_survives_another_windows_restore_and_clear(tmp_path: Path) -> None:
    folder = tmp_path / "history"
    window = HistoryStore(folder)
    running = window.new()
    running.append(np.ones(2400, dtype=np.float32))
    abandoned = folder / "20240101-000000-crashed"  # a run whose app was killed
    abandoned.mkdir()
    (abandoned / "audio.f32").write_bytes(b"\0" * 64)

    other = HistoryStore(folder)  # another window (or a clear on the thread pool)
    assert other.restore() == []
    assert running.folder.is_dir() and not abandoned.exists()
    other.clear()
    assert running.folder.is_dir()
    running.append(np.ones(2400, dtype=np.float32))
    running.finish({"text": "kept"})
    assert (running.folder / META).exists()

    restored = other.restore()
    assert [s.info for s in restored] == [{"text": "kept"}] and restored[0].length == 4800
    for store in restored:
        store.close()
    other.clear()  # finished: no longer in use, so a clear removes it
    assert list(folder.iterdir()) == []


def test_the_history_lock_held_too_long_is_one_sentence(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(file_lock, "LOCK_TIMEOUT_S", 0.2)
    history = HistoryStore(tmp_path / "history")
    # A synthesis is never refused for it: its store is made, marked in use, so another
    # window's restore leaves it alone.
    with FileLock(file_lock.lock_file(history.folder)):
        store = history.new()
    assert store.failure is None and store.in_use is not None
    assert [p for p in history.folder.iterdir() if p.is_dir()] == [store.folder]


# -- the panels --------------------------------------------------------------------------------


def listed(panel: Any) -> list[str]:
    return [panel.list.item(i).text() for i in range(panel.list.count())]


def test_the_speaker_panel_shows_what_another_process_adds_and_its_rename_keeps_it(
    qtbot: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from chattts_studio.gui.common import dialogs
    from chattts_studio.gui.panels.speakers import SpeakerPanel

    monkeypatch.setenv("CHATTTS_STUDIO_HOME", str(tmp_path))
    panel = SpeakerPanel()
    qtbot.addWidget(panel)
    panel.store("Alice", embedding(1, 1), 1)
    path = panel.library.path

    SpeakerLibrary(path).add("Bob", embedding(2, 2))  # the command line, meanwhile
    qtbot.waitUntil(lambda: "Bob" in listed(panel))
    assert [panel.library_box.itemText(i) for i in range(2)] == ["Alice", "Bob"]
    SpeakerLibrary(path).add("Carol", embedding(3, 3))  # the watch outlives a replace
    qtbot.waitUntil(lambda: "Carol" in listed(panel))

    panel.list.setCurrentRow(0)
    monkeypatch.setattr(dialogs, "ask_name", lambda *_a, **_k: "Alicia")
    panel.rename.click()
    assert every_name(path) == {"Alicia", "Bob", "Carol"}
    assert listed(panel)[0].startswith("Alicia")


def test_the_lexicon_panel_shows_what_another_process_adds_and_its_add_keeps_it(
    qtbot: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from chattts_studio.gui.panels.lexicon import LexiconPanel

    monkeypatch.setenv("CHATTTS_STUDIO_HOME", str(tmp_path))
    panel = LexiconPanel()
    qtbot.addWidget(panel)
    path = panel.store.path

    def words() -> list[str]:
        return [panel.table.item(r, 0).text() for r in range(panel.table.rowCount())]

    LexiconStore(path).add("SQL", "sequel")  # the command line, meanwhile
    qtbot.waitUntil(lambda: words() == ["SQL"])
    assert panel.entries() == (("SQL", "sequel"),)  # what the next job reads with, too
    panel.word.setText("XML")
    panel.replacement.setText("x m l")
    panel.add_button.click()
    assert every_word(path) == {"SQL", "XML"} and words() == ["SQL", "XML"]

    path.write_text("{ damaged", encoding="utf-8")  # a third party breaks it
    with qtbot.waitSignal(panel.message) as said:
        pass
    assert "not valid JSON" in said.args[0]
    panel.word.setText("YAML")
    panel.replacement.setText("yammel")
    panel.add_button.click()
    assert path.read_text(encoding="utf-8") == "{ damaged"  # refused, never overwritten
