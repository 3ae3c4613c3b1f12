"""The speaker library: named voices in a human-readable JSON file shared by the app and CLI."""

import json
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from . import paths
from .atomic import write_text_atomic
from .errors import SpeakerError

FORMAT = 1


@dataclass(frozen=True)
class SpeakerEntry:
    name: str
    embedding: str  # ChatTTS's base16384 speaker string
    seed: int | None = None  # the seed it came from, when it came from one
    note: str = ""
    created: str = ""  # ISO 8601, UTC

    @staticmethod
    def from_dict(data: Any) -> "SpeakerEntry":
        if not isinstance(data, dict):
            raise SpeakerError("A speaker entry is not an object.")
        name, emb = data.get("name"), data.get("embedding")
        seed, note = data.get("seed"), data.get("note", "")
        if not isinstance(name, str) or not name.strip() or len(name) > 100:
            raise SpeakerError("A speaker has no valid name (1-100 characters).")
        if not isinstance(emb, str) or not 16 <= len(emb) <= 4096:
            raise SpeakerError(f"Speaker '{name}' has no valid embedding string.")
        if seed is not None and (not isinstance(seed, int) or isinstance(seed, bool)):
            raise SpeakerError(f"Speaker '{name}' has a seed that is not a whole number.")
        if not isinstance(note, str):
            raise SpeakerError(f"Speaker '{name}' has a note that is not text.")
        return SpeakerEntry(name.strip(), emb.strip(), seed, note, str(data.get("created", "")))


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def _parse(text: str, source: Path) -> list[SpeakerEntry]:
    try:
        data = json.loads(text)
    except ValueError:
        raise SpeakerError(f"{source} is not valid JSON.") from None
    if not isinstance(data, dict) or not isinstance(data.get("speakers"), list):
        raise SpeakerError(f"{source} is not a speaker library.")
    version = data.get("format")
    if isinstance(version, int) and version > FORMAT:
        raise SpeakerError(
            f"{source} was written by a newer ChatTTS Studio (format {version}); "
            "update the app to use it."
        )
    return [SpeakerEntry.from_dict(item) for item in data["speakers"]]


class SpeakerLibrary:
    """Loaded on creation. A damaged file is moved aside (never overwritten) and reported in
    `problem`; a file from a newer version is refused and left alone."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = Path(path) if path else paths.speakers_file()
        self.problem = ""
        self.entries: list[SpeakerEntry] = []
        if not self.path.exists():
            return
        try:
            text = self.path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            text = "\0"  # unreadable bytes: treat as damaged
        try:
            self.entries = _parse(text, self.path)
        except SpeakerError as exc:
            if "newer" in str(exc):
                raise
            aside = self.path.with_name(f"{self.path.name}.damaged-{int(time.time())}")
            self.path.replace(aside)
            self.problem = (
                f"The speaker library was damaged ({exc}); it was kept as {aside} "
                "and a new one was started."
            )

    def names(self) -> list[str]:
        return [e.name for e in self.entries]

    def get(self, name: str) -> SpeakerEntry | None:
        return next((e for e in self.entries if e.name == name), None)

    def _save(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        body = {"format": FORMAT, "speakers": [asdict(e) for e in self.entries]}
        write_text_atomic(self.path, json.dumps(body, ensure_ascii=False, indent=2) + "\n")

    def add(
        self, name: str, embedding: str, seed: int | None = None, note: str = ""
    ) -> SpeakerEntry:
        entry = SpeakerEntry.from_dict(
            {"name": name, "embedding": embedding, "seed": seed, "note": note, "created": _now()}
        )
        if self.get(entry.name):
            raise SpeakerError(f"A speaker named '{entry.name}' already exists.")
        self.entries.append(entry)
        self._save()
        return entry

    def rename(self, old: str, new: str) -> None:
        entry = self._need(old)
        if not new.strip() or len(new) > 100:
            raise SpeakerError("A speaker name must have 1-100 characters.")
        if self.get(new.strip()):
            raise SpeakerError(f"A speaker named '{new.strip()}' already exists.")
        self.entries[self.entries.index(entry)] = SpeakerEntry(
            new.strip(), entry.embedding, entry.seed, entry.note, entry.created
        )
        self._save()

    def remove(self, name: str) -> None:
        self.entries.remove(self._need(name))
        self._save()

    def _need(self, name: str) -> SpeakerEntry:
        entry = self.get(name)
        if entry is None:
            raise SpeakerError(f"There is no speaker named '{name}'.")
        return entry

    def export(self, target: Path, names: list[str] | None = None) -> int:
        chosen = [self._need(n) for n in names] if names else list(self.entries)
        body = {"format": FORMAT, "speakers": [asdict(e) for e in chosen]}
        target = Path(target)
        if target.is_dir():
            raise SpeakerError(f"{target} is a folder; give a file name.")
        try:
            write_text_atomic(target, json.dumps(body, ensure_ascii=False, indent=2) + "\n")
        except OSError as exc:
            raise SpeakerError(f"Cannot write {target}: {exc.strerror or exc}.") from None
        return len(chosen)

    def import_file(self, source: Path) -> list[str]:
        """Add every speaker in `source`; a name already taken gets ' (2)', ' (3)', ..."""
        source = Path(source)
        try:
            text = source.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise SpeakerError(
                f"Cannot read {source}: {getattr(exc, 'strerror', None) or exc}."
            ) from None
        added = []
        for entry in _parse(text, source):
            name, n = entry.name, 2
            while self.get(name):
                name, n = f"{entry.name} ({n})", n + 1
            self.entries.append(
                SpeakerEntry(name, entry.embedding, entry.seed, entry.note, entry.created or _now())
            )
            added.append(name)
        self._save()
        return added
