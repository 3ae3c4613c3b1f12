"""The history on a full or read-only disk: a run never stops for it (its audio is kept in
memory, whole and in order), finishing says why it cannot be kept (an OSError the window says
in one sentence), nothing is half-written, and the results kept before stay intact."""

import errno
from pathlib import Path
from typing import Any

import numpy as np
from audio_fakes import noise
from disk_faults import enospc, files_under, fill, read_only, small_disk

from chattts_studio.core.results.history import HistoryStore
from chattts_studio.core.results.result_store import AUDIO, META, ResultStore

CHUNK = 24 * 512


def _run(history: HistoryStore, audio: np.ndarray) -> ResultStore:
    """A run's audio into a new store of `history`, chunk by chunk, as the window does."""
    store = history.new()
    for first in range(0, len(audio), CHUNK):
        store.append(audio[first : first + CHUNK])
    store.mark_segment(0, 0, store.length)
    return store


def _finish_refused(store: ResultStore, code: int) -> None:
    try:
        store.finish({"text": "refused"})
    except OSError as exc:
        assert exc.errno == code, exc
    else:
        raise AssertionError("finish() kept a result the disk has no room for")


def test_a_full_disk_keeps_the_run_in_memory_and_the_earlier_results(tmp_path: Path) -> None:
    with small_disk(tmp_path / "disk") as disk:
        history = HistoryStore(disk / "history")
        first_audio = noise(0.5, 1)
        first = _run(history, first_audio)
        first.finish({"text": "kept"})
        before = files_under(disk)
        fill(disk, leave=120_000)  # room for two chunks, not the run
        audio = noise(3.0, 2)  # 288 KB: more than the disk has
        store = _run(history, audio)  # never raises
        assert store.failure is not None and store.failure.errno == errno.ENOSPC
        assert 0 < store.on_disk < store.length == len(audio)
        assert np.array_equal(store.read(0, store.length), audio)
        assert np.array_equal(store.samples(), audio)
        assert np.array_equal(
            store.read(store.on_disk - 10, store.on_disk + 10),
            audio[store.on_disk - 10 : store.on_disk + 10],
        )
        on_disk = (store.folder / AUDIO).stat().st_size
        assert on_disk == 4 * store.on_disk  # whole samples only: nothing half-written
        _finish_refused(store, errno.ENOSPC)
        assert not (store.folder / META).exists()
        assert not [p for p in disk.rglob("*.part*")], "a temp file was left"
        assert np.array_equal(store.read(0, store.length), audio)  # still there to save
        store.delete()
        assert files_under(disk) == before  # the earlier result, byte for byte
        again = HistoryStore(disk / "history").restore()
        assert len(again) == 1 and np.array_equal(again[0].samples(), first_audio)
        for kept in again:
            kept.close()
        first.close()


def test_room_made_before_the_end_keeps_the_whole_run(tmp_path: Path) -> None:
    with small_disk(tmp_path / "disk") as disk:
        history = HistoryStore(disk / "history")
        filler = fill(disk, leave=20_000)
        audio = noise(1.5, 3)
        store = _run(history, audio)
        assert store.failure is not None
        filler.unlink()  # the person made room: finish writes what was held in memory
        store.finish({"text": "whole"})
        store.close()
        kept = HistoryStore(disk / "history").restore()
        assert len(kept) == 1 and np.array_equal(kept[0].samples(), audio)
        kept[0].close()


def test_a_read_only_history_is_shown_and_a_run_is_kept_in_memory(tmp_path: Path) -> None:
    with small_disk(tmp_path / "disk", size="1m") as disk:
        history = HistoryStore(disk / "history")
        first_audio = noise(0.5, 4)
        first = _run(history, first_audio)
        first.finish({"text": "kept"})
        first.close()
        before = files_under(disk)
        read_only(disk)
        shown = HistoryStore(disk / "history").restore()  # no lock file to make: read anyway
        assert len(shown) == 1 and np.array_equal(shown[0].samples(), first_audio)
        audio = noise(1.0, 5)
        store = _run(HistoryStore(disk / "history"), audio)
        assert store.failure is not None and store.failure.errno == errno.EROFS
        assert np.array_equal(store.read(0, store.length), audio)
        _finish_refused(store, errno.EROFS)
        store.delete()
        for kept in shown:
            kept.close()
        assert files_under(disk) == before


def test_a_write_refused_part_way_is_cut_back_to_whole_samples(
    tmp_path: Path, monkeypatch: Any
) -> None:
    """Injected (no file system needed): the disk takes 1000 bytes of a chunk, then refuses."""
    store = ResultStore.create(tmp_path / "history")
    head = noise(0.2, 6)
    store.append(head)
    real = store._file

    class Refusing:
        def __init__(self) -> None:
            self.taken = False

        def write(self, data: Any) -> int:
            if not self.taken:
                self.taken = True
                return int(real.write(bytes(data)[:1000]))
            raise enospc(store.path)

        def __getattr__(self, name: str) -> Any:
            return getattr(real, name)

    monkeypatch.setattr(store, "_file", Refusing())
    tail = noise(0.5, 7)
    store.append(tail)
    assert store.failure is not None and store.on_disk == len(head)
    assert store.path.stat().st_size == 4 * len(head)  # the part-written chunk cut back
    both = np.concatenate([head, tail])
    assert np.array_equal(store.read(0, store.length), both)
    store.truncate(len(head) + 100)  # a segment made again: memory and disk agree
    assert np.array_equal(store.read(0, store.length), both[: len(head) + 100])
    monkeypatch.setattr(store, "_file", real)
    store.finish()  # the disk takes it now
    store.close()
    reopened = ResultStore.open(store.folder)
    assert np.array_equal(reopened.samples(), both[: len(head) + 100])
    reopened.close()
