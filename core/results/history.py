"""The window's history on disk: one ResultStore folder per result in the cache folder, reopened
after a restart, kept under the user's size limit (oldest first) and cleared on request.

Changes to the folder hold the history's lock, and a result being made marks its folder in use,
so a clear or another window's start never removes a run still being written. A result whose
files are in use (Windows refuses to delete them) loses its record at once and its files at the
next change; `leftovers` lists those folders meanwhile."""

import contextlib
import os
from pathlib import Path
from typing import Any, cast

from filelock import BaseFileLock

from chattts_studio.core.errors import StudioError
from chattts_studio.core.file_lock import HISTORY, changing, try_hold
from chattts_studio.core.messages import QT_TRANSLATE_NOOP, Sentence
from chattts_studio.core.paths import cache_dir
from chattts_studio.core.results.result_store import META, ResultStore, remove_result

DEFAULT_LIMIT_BYTES = 1 << 30  # 1 GiB: about 3 hours of float32 audio at 24 kHz
HISTORY_FOLDER = "history"
IN_USE = "in-use.lock"  # held in a result's folder while it is being made


def history_dir() -> Path:
    return cache_dir() / HISTORY_FOLDER


def size_text(count: float) -> str:
    """312 MB, 1 GB, 1.5 GB: sizes as people read them (binary units, short names)."""
    for unit, scale in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if count >= scale:
            value = count / scale
            return (
                f"{value:.0f} {unit}"
                if value >= 10 or value == int(value)
                else (f"{value:.1f} {unit}")
            )
    return Sentence(QT_TRANSLATE_NOOP("core", "{count} bytes"), count=int(count))


class _Kept(ResultStore):
    """A store of the history: deleting it also removes what earlier deletions had to leave."""

    def delete(self) -> bool:
        gone = super().delete()
        HistoryStore(self.folder.parent).sweep()
        return gone


class _Running(_Kept):
    """A store being made: its folder marked in use until it is finished or deleted (or the
    process ends: the system drops the lock then)."""

    in_use: BaseFileLock | None = None

    def finish(self, info: dict[str, Any] | None = None) -> None:
        try:
            super().finish(info)
        finally:
            self._done()

    def delete(self) -> bool:
        self._done()  # first: Windows cannot remove a file it holds open
        return super().delete()

    def _done(self) -> None:
        if self.in_use is not None:
            self.in_use.release()
            self.in_use = None


def _in_use(folder: Path) -> bool:
    """Whether a run (in this process or another) is still writing `folder`. A folder that
    cannot be marked (removed meanwhile by another window's clear, unwritable) counts as in
    use: it is not this caller's to remove. A folder with no mark is not in use (a run marks
    its folder as it makes it, under the history's lock), and gets none: a mark made here
    would land in a folder another thread is removing and keep it on disk."""
    mark = folder / IN_USE
    if not mark.exists() and not mark.is_symlink():
        return False
    try:
        lock = try_hold(mark)
    except OSError:
        return True
    if lock is None:
        return True
    lock.release()
    return False


def _left_behind(folder: Path) -> bool:
    """Whether `folder` is what a removal left: no record, and no run making it."""
    return folder.is_dir() and not (folder / META).exists() and not _in_use(folder)


def leftover_sentence(count: int) -> Sentence | None:
    """What the window says while removed results stay on disk (None when none do)."""
    if not count:
        return None
    return Sentence(
        QT_TRANSLATE_NOOP(
            "core",
            "Removed results still on disk: {count}. A file of theirs is in use (another "
            "window or program); they are deleted once it is closed.",
        ),
        count=count,
    )


class HistoryStore:
    def __init__(self, folder: Path | None = None) -> None:
        self.folder = Path(folder) if folder is not None else history_dir()
        with contextlib.suppress(OSError):  # a read-only cache: results are kept in memory
            self.folder.mkdir(parents=True, exist_ok=True)

    def _changing(self) -> contextlib.AbstractContextManager[None]:
        return changing(self.folder, HISTORY)

    def new(self) -> ResultStore:
        """A fresh store for a job that starts now, its folder marked in use from the start
        (under the lock: a restore elsewhere never sees it unmarked). Never refused: where
        the history's folder takes nothing (read-only, full) the store keeps its audio in
        memory and says why (ResultStore.failure), and finish() raises that."""
        try:
            with self._changing():
                store = cast(_Running, _Running.create(self.folder))
                if store.failure is None:
                    store.in_use = try_hold(store.folder / IN_USE)
        except (StudioError, OSError):  # no lock file (read-only, full) or another holds it
            store = cast(_Running, _Running.create(self.folder))
            if store.failure is None:  # marked in use all the same: no restore removes it
                with contextlib.suppress(StudioError, OSError):
                    store.in_use = try_hold(store.folder / IN_USE)
        return store

    def restore(self) -> list[ResultStore]:
        """Every whole result kept, oldest first. A folder without its record (a run the app
        did not finish: a crash, a kill; a removal that had to leave files in use) or with a
        damaged one is removed; one still being made (by another window) is left alone."""
        try:
            with self._changing():  # what goes is decided under the lock, removed after it
                stores, doomed = self._kept()
        except StudioError:  # a read-only cache (no lock file), another window: read only
            stores, doomed = self._kept()[0], []
        for folder in doomed:
            remove_result(folder)
        stores.sort(key=lambda s: s.made)
        return stores

    def _kept(self) -> tuple[list[ResultStore], list[Path]]:
        """The whole results, and the folders that are not one (see restore)."""
        stores: list[ResultStore] = []
        doomed: list[Path] = []
        for child in sorted(self.folder.iterdir()) if self.folder.is_dir() else []:
            if not child.is_dir():
                continue
            if not (child / META).exists():
                if not _in_use(child):
                    doomed.append(child)
                continue
            try:
                stores.append(_Kept.open(child))
            except (ValueError, OSError):
                doomed.append(child)
        return stores, doomed

    def leftovers(self) -> list[Path]:
        """The folders of removed results still on disk (a file of theirs was in use)."""
        children = sorted(self.folder.iterdir()) if self.folder.is_dir() else []
        return [child for child in children if _left_behind(child)]

    def sweep(self) -> list[Path]:
        """Remove the leftovers of earlier removals; those still left. Never raises: when
        another window holds the history's lock, its own change sweeps them."""
        try:
            with changing(self.folder, HISTORY, timeout=1.0):
                doomed = self.leftovers()
        except (StudioError, OSError):
            return []
        return [folder for folder in doomed if not remove_result(folder)]

    def usage(self) -> int:
        """Bytes the history folder holds now."""
        total = 0
        # os.walk skips a folder removed while it walks (a result dropped or cleared on
        # another thread); rglob would raise FileNotFoundError.
        for root, _dirs, files in os.walk(self.folder):
            for name in files:
                with contextlib.suppress(OSError):
                    total += os.stat(os.path.join(root, name)).st_size
        return total

    @staticmethod
    def over_limit(
        stores: list[ResultStore], limit: int, keep: ResultStore | None = None
    ) -> list[ResultStore]:
        """The oldest stores to drop so the rest fit in `limit` bytes; `keep` (the newest
        result, or the one running) is never among them, even when it alone is over."""
        sizes = {id(s): s.size_bytes for s in stores}
        total = sum(sizes.values())
        dropped: list[ResultStore] = []
        for store in sorted(stores, key=lambda s: s.made):
            if total <= limit:
                break
            if store is keep:
                continue
            dropped.append(store)
            total -= sizes[id(store)]
        return dropped

    def clear(self, keep: ResultStore | None = None) -> list[Path]:
        """Remove every result folder but `keep`'s and those of runs still being made; the
        folders that stay for now (a file of theirs in use: see leftovers)."""
        doomed: list[Path] = []
        with self._changing():  # what goes is decided under the lock, removed after it
            for child in list(self.folder.iterdir()) if self.folder.is_dir() else []:
                if keep is not None and child == keep.folder:
                    continue
                if not child.is_dir():
                    with contextlib.suppress(OSError):
                        child.unlink()
                elif not _in_use(child):
                    doomed.append(child)
        # Many large files: not under the lock.
        return [folder for folder in doomed if not remove_result(folder)]
