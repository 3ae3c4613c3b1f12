"""The history's files under Windows' rules (tests/windows_rules.py, applied to this folder):
a result whose audio is still mapped or open cannot be deleted there. Its record goes at once
(it never comes back as a result), its files go when the last view is let go, or at the
history's next change (a deletion, a clear, a start) once the other holder closed them; until
then `leftovers` lists them."""

import gc
from pathlib import Path

import numpy as np
from windows_rules import WindowsRules

from chattts_studio.core.results.history import IN_USE, HistoryStore, leftover_sentence
from chattts_studio.core.results.result_store import AUDIO, META, ResultStore


def finished(history: HistoryStore, samples: int = 4800) -> ResultStore:
    store = history.new()
    store.append(np.linspace(-0.5, 0.5, samples, dtype=np.float32))
    store.mark_segment(0, 0, samples)
    store.finish({"text": "kept"})
    return store


def test_a_result_whose_view_is_held_goes_when_the_view_does(
    tmp_path: Path, windows_rules: WindowsRules
) -> None:
    history = HistoryStore(tmp_path / "history")
    store = finished(history)
    view = store.samples()[100:200]  # a result list's segment, still shown
    assert not store.delete()
    assert windows_rules.refused  # Windows refused the mapped audio
    assert store.folder.is_dir() and not (store.folder / META).exists()
    assert history.leftovers() == [store.folder]
    assert history.restore() == []  # never taken for a result again
    assert store.folder.is_dir()  # the restore could not remove it either
    assert float(view[0]) == float(np.linspace(-0.5, 0.5, 4800, dtype=np.float32)[100])
    del view
    gc.collect()
    assert not store.folder.exists() and history.leftovers() == []


def test_a_result_another_window_holds_is_removed_at_the_next_change(
    tmp_path: Path, windows_rules: WindowsRules
) -> None:
    history = HistoryStore(tmp_path / "history")
    first, second, third = (finished(history) for _ in range(3))
    elsewhere = ResultStore.open(first.folder)  # another window shows it
    shown = elsewhere.samples()
    assert not first.delete() and first.folder.is_dir()
    assert first.mapped() == []  # not this store's view: nothing to wait for here
    assert history.leftovers() == [first.folder]
    assert leftover_sentence(1) == (
        "Removed results still on disk: 1. A file of theirs is in use (another window or "
        "program); they are deleted once it is closed."
    )
    assert leftover_sentence(0) is None
    second.delete()  # the next deletion tries again: still held
    assert first.folder.is_dir() and not second.folder.exists()
    del shown
    elsewhere.close()
    third.delete()  # let go: the next change removes it
    assert not first.folder.exists() and not third.folder.exists()
    assert list(history.folder.iterdir()) == []


def test_a_clear_says_what_it_had_to_leave_and_a_start_removes_it(
    tmp_path: Path, windows_rules: WindowsRules
) -> None:
    history = HistoryStore(tmp_path / "history")
    held, free = finished(history), finished(history)
    with open(held.folder / AUDIO, "rb"):  # a player of another program reads it
        held.close()
        free.close()
        assert history.clear() == [held.folder]
        assert not free.folder.exists() and not (held.folder / META).exists()
        assert history.leftovers() == [held.folder]
    assert HistoryStore(history.folder).restore() == []  # the next start
    assert list(history.folder.iterdir()) == []


def test_files_written_by_the_store_replace_through_windows_rules(
    tmp_path: Path, windows_rules: WindowsRules
) -> None:
    """finish() writes its record and envelope by a rename over any earlier one: with a
    reader of the old record open, Windows refuses, and the store says so in one sentence."""
    import pytest

    from chattts_studio.core.atomic import FileInUse

    history = HistoryStore(tmp_path / "history")
    store = finished(history)
    with open(store.folder / META, "rb"), pytest.raises(FileInUse) as caught:
        store.finish({"text": "again"})
    assert str(caught.value) == (
        f"{store.folder / META} is open in another program; close it there and try again."
    )
    assert not list(store.folder.glob(".*part*"))  # nothing half-written stays
    store.finish({"text": "again"})
    assert ResultStore.open(store.folder).info == {"text": "again"}


def test_looking_for_leftovers_writes_nothing_into_a_folder_being_removed(
    tmp_path: Path,
) -> None:
    """A sweep (after a deletion) may look at a folder while a clear on another thread
    removes it: the look must not put a file there, or the folder stays on disk."""
    history = HistoryStore(tmp_path / "history")
    store = finished(history)
    store.close()
    (store.folder / META).unlink()  # what a removal does first, then its other files
    (store.folder / IN_USE).unlink()
    names = sorted(p.name for p in store.folder.iterdir())
    assert history.leftovers() == [store.folder]
    assert sorted(p.name for p in store.folder.iterdir()) == names
    running = history.new()  # marked in use as it is made: never a leftover
    assert history.leftovers() == [store.folder]
    assert history.clear(keep=None) == [] and sorted(history.folder.iterdir()) == [running.folder]
    running.delete()
