"""The window's history on disk: one ResultStore folder per result in the cache folder,
reopened after a restart, kept under a size limit the user sets (the oldest results go
first), and cleared on request. UI-free: the window shows it, this keeps it."""

import contextlib
import os
import shutil
from pathlib import Path

from .messages import QT_TRANSLATE_NOOP, Sentence
from .paths import cache_dir
from .result_store import META, ResultStore

DEFAULT_LIMIT_BYTES = 1 << 30  # 1 GiB: about 3 hours of float32 audio at 24 kHz
HISTORY_FOLDER = "history"


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


class HistoryStore:
    def __init__(self, folder: Path | None = None) -> None:
        self.folder = Path(folder) if folder is not None else history_dir()
        self.folder.mkdir(parents=True, exist_ok=True)

    def new(self) -> ResultStore:
        """A fresh store for a job that starts now."""
        return ResultStore.create(self.folder)

    def restore(self) -> list[ResultStore]:
        """Every whole result kept, oldest first. A folder without its record (a run the app
        did not finish: a crash, a kill) or with a damaged one is removed."""
        stores: list[ResultStore] = []
        for child in sorted(self.folder.iterdir()) if self.folder.is_dir() else []:
            if not child.is_dir():
                continue
            if not (child / META).exists():
                shutil.rmtree(child, ignore_errors=True)
                continue
            try:
                stores.append(ResultStore.open(child))
            except (ValueError, OSError):
                shutil.rmtree(child, ignore_errors=True)
        stores.sort(key=lambda s: s.made)
        return stores

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

    def clear(self, keep: ResultStore | None = None) -> None:
        """Remove every result folder but `keep`'s (a run still being made)."""
        for child in list(self.folder.iterdir()) if self.folder.is_dir() else []:
            if keep is not None and child == keep.folder:
                continue
            if child.is_dir():
                shutil.rmtree(child, ignore_errors=True)
            else:
                with contextlib.suppress(OSError):
                    child.unlink()
