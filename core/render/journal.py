"""A render folder's journal store, what the book render (render/segment_store.py) and the manifest
render (render/manifest/item_store.py) both keep: FOLDER/STORE/, a hidden folder holding the lock
that keeps a second render out and a journal, one JSON line per finished piece, appended and
fsync'd only after the piece's file is in place, so a render killed at any moment resumes.
Shared here: the lock, a killed render's temp files removed, the journal read (a line cut
short skipped) and appended durably. What a line says is each store's own."""

import contextlib
import json
import os
from dataclasses import asdict
from pathlib import Path
from typing import IO, Any, Self, TypeVar

from filelock import BaseFileLock

from chattts_studio.core.atomic import os_error_sentence
from chattts_studio.core.errors import StudioError
from chattts_studio.core.file_lock import try_hold
from chattts_studio.core.messages import QT_TRANSLATE_NOOP, Sentence

JOURNAL = "journal.jsonl"
LOCK = "lock"

T = TypeVar("T")


def hold_render_folder(lock: Path, folder: Path) -> BaseFileLock:
    """The lock that keeps a second render (book or manifest) out of `folder`, held until
    released; one sentence when another holds it. filelock: an OS lock on POSIX and Windows
    alike (fcntl alone left Windows unlocked)."""
    held = try_hold(lock)
    if held is None:
        raise StudioError(
            Sentence(
                QT_TRANSLATE_NOOP(
                    "core", "Another render is working in {folder}; wait for it or stop it."
                ),
                folder=str(folder),
            )
        )
    return held


def journal_records(path: Path) -> list[dict[str, Any]]:
    """The JSON objects of a journal (one a line), in order; a line cut short by a kill is
    skipped, and ended on disk so that the next line appended starts on its own."""
    if not path.exists():
        return []
    raw = path.read_bytes()
    if raw and not raw.endswith(b"\n"):
        with open(path, "ab") as fh:
            fh.write(b"\n")
            fh.flush()
            os.fsync(fh.fileno())
    records = []
    for line in raw.decode("utf-8", errors="replace").splitlines():
        try:
            data = json.loads(line)
        except ValueError:
            continue
        if isinstance(data, dict):
            records.append(data)
    return records


def journal_entries(path: Path, kind: type[T]) -> list[T]:
    """A journal's records made into `kind` (a dataclass), in order; a record missing a field
    that has no default or holding a wrong one (a journal from another version) is skipped."""
    entries = []
    fields = vars(kind)["__dataclass_fields__"]
    for data in journal_records(path):
        try:
            entries.append(kind(**{k: data[k] for k in fields if k in data}))
        except (TypeError, KeyError):
            continue
    return entries


class RenderFolder:
    """A render's folder held open while the render works: its journal (appended to) and the
    folder's lock (a second render is kept out). A store opens it once per render, as a
    context manager or with open() and close(); it says what its journal's lines hold
    (`_read_journal`, `append`) and the version written in each line (`version`)."""

    version = 1

    def __init__(self, folder: Path, store: str) -> None:
        self.folder = Path(folder)
        self.store = self.folder / store  # the render's own files, a hidden folder
        self._journal: IO[str] | None = None
        self._lock: BaseFileLock | None = None

    def open(self) -> Self:
        """The folder made when its parent is there, the lock taken, the journal read and
        opened; one sentence when the folder cannot be used or another render holds it."""
        try:
            self._make_folder()
            self.store.mkdir(exist_ok=True)
            self._lock = hold_render_folder(self.store / LOCK, self.folder)
            self._clean_temp_files()
            self._read_journal(self.store / JOURNAL)
            self._journal = open(self.store / JOURNAL, "a", encoding="utf-8")  # noqa: SIM115
        except OSError as exc:
            self.close()
            raise StudioError(os_error_sentence("write to", self.folder, exc)) from None
        return self

    def _make_folder(self) -> None:
        if not self.folder.exists():
            if not self.folder.parent.is_dir():
                raise StudioError(
                    Sentence(
                        QT_TRANSLATE_NOOP("core", "The folder {folder} does not exist."),
                        folder=str(self.folder.parent),
                    )
                )
            self.folder.mkdir()
        elif not self.folder.is_dir():
            raise StudioError(
                Sentence(
                    QT_TRANSLATE_NOOP(
                        "core", "{folder} is not a folder; give a folder for the render."
                    ),
                    folder=str(self.folder),
                )
            )

    def _clean_temp_files(self) -> None:
        """Temp files a killed render left behind (atomic writes not yet renamed)."""
        for folder in (self.store, self.folder):
            for tmp in folder.glob(".*.part*"):
                with contextlib.suppress(OSError):
                    tmp.unlink()

    def _read_journal(self, path: Path) -> None:
        """What the journal at `path` says, kept by the store (journal_entries reads it)."""
        raise NotImplementedError

    def append(self, entry: Any) -> None:
        """One journal line for `entry` (a dataclass), flushed to the disk: called once the
        file it names is in place. Raises OSError as the disk says it."""
        assert self._journal is not None, "the store is not open"
        self._journal.write(json.dumps({"v": self.version, **asdict(entry)}) + "\n")
        self._journal.flush()
        os.fsync(self._journal.fileno())

    def close(self) -> None:
        if self._journal is not None:
            with contextlib.suppress(OSError):
                self._journal.close()
        if self._lock is not None:
            self._lock.release()
        self._journal, self._lock = None, None

    def __enter__(self) -> Self:
        return self.open()

    def __exit__(self, *_exc: object) -> None:
        self.close()
