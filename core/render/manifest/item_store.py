"""What a manifest render keeps in its folder: one audio file per item (written temp file then
rename), a journal of the items made (FOLDER/.manifest/journal.jsonl, one JSON line per item,
appended and fsync'd after its file is in place) and the output manifest
(FOLDER/manifest.out.jsonl, rewritten atomically).

A journal line is trusted only when its key (a hash of the item's text, speaker, seed and the
render's settings, the model's weights and precision among them) matches the item being
planned and the file on disk has the SHA-256 the line records. Only the driver writes here:
workers send encoded bytes back."""

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from chattts_studio.core.atomic import atomic_path, os_error_sentence, write_text_atomic
from chattts_studio.core.errors import StudioError
from chattts_studio.core.render.journal import RenderFolder, journal_entries
from chattts_studio.core.render.segment_store import digest

STORE = ".manifest"
OUTPUT = "manifest.out.jsonl"


def item_key(text: str, speaker: str, seed: int, settings: str) -> str:
    """What an item's audio depends on: nothing else (not the other items of the run)."""
    return digest("item", text, speaker, seed, settings)


def file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


@dataclass(frozen=True)
class ItemEntry:
    """One finished item, as the journal records it."""

    id: str
    key: str
    file: str  # name in the folder
    samples: int
    seconds: float
    rtf: float | None
    sha256: str  # of the file


class ManifestStore(RenderFolder):
    """A manifest render's items, opened once per render (a lock file keeps a second render
    out of the folder): the items' files in FOLDER, the journal (render/journal.py) in
    FOLDER/.manifest/."""

    def __init__(self, folder: Path) -> None:
        super().__init__(folder, STORE)
        self.entries: dict[str, ItemEntry] = {}  # id -> the last line written for it
        self.made: list[str] = []  # ids made by this run, in order (each once)

    def _read_journal(self, path: Path) -> None:
        for entry in journal_entries(path, ItemEntry):
            self.entries[entry.id] = entry

    def find(self, item_id: str, key: str, file: str) -> ItemEntry | None:
        """The finished item when the journal has it for exactly this key and its file is
        there, whole (the SHA-256 the journal recorded); None when it must be made."""
        entry = self.entries.get(item_id)
        if entry is None or entry.key != key or entry.file != file:
            return None
        try:
            return entry if file_sha256(self.folder / file) == entry.sha256 else None
        except OSError:
            return None

    def add(
        self, item_id: str, key: str, file: str, data: bytes, samples: int, rtf: float | None
    ) -> ItemEntry:
        """Keep one finished item: its file (temp file, then rename), then its journal line."""
        assert self._journal is not None, "the store is not open"
        from chattts_studio.core import SAMPLE_RATE

        entry = ItemEntry(
            item_id,
            key,
            file,
            samples,
            round(samples / SAMPLE_RATE, 4),
            None if rtf is None else round(rtf, 4),
            hashlib.sha256(data).hexdigest(),
        )
        target = self.folder / file
        try:
            with atomic_path(target) as tmp:
                tmp.write_bytes(data)
            self.append(entry)
        except OSError as exc:
            raise StudioError(os_error_sentence("write to", target, exc)) from None
        self.entries[item_id] = entry
        self.made.append(item_id)
        return entry

    def write_output(self, ids: list[str]) -> Path:
        """FOLDER/manifest.out.jsonl: one line per finished item, in the manifest's order."""
        lines = []
        for item_id in ids:
            e = self.entries.get(item_id)
            if e is None:
                continue
            row = {"id": e.id, "file": e.file, "duration": e.seconds, "rtf": e.rtf}
            lines.append(json.dumps({**row, "sha256": e.sha256}, ensure_ascii=False) + "\n")
        target = self.folder / OUTPUT
        try:
            write_text_atomic(target, "".join(lines))
        except OSError as exc:
            raise StudioError(os_error_sentence("write to", target, exc)) from None
        return target
