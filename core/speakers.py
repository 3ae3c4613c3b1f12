"""The speaker library: named voices in a human-readable JSON file shared by the app and CLI."""

import json
import time
import unicodedata
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from . import paths
from .atomic import os_error_sentence, target_problem, write_text_atomic
from .errors import SpeakerError

FORMAT = 1
MAX_FILE_BYTES = 16 << 20  # a library of thousands of speakers is well under 1 MiB
MAX_NAME = 100  # characters


class _NewerFormat(SpeakerError):
    """The file was written by a newer app: refused, never moved or overwritten."""


class SpeakerNameTaken(SpeakerError):
    """A speaker of that name is already in the library (the caller may offer to replace it
    or to choose another name)."""

    def __init__(self, name: str) -> None:
        super().__init__(f"A speaker named '{name}' already exists.")
        self.name = name


@dataclass(frozen=True)
class ImportResult:
    """What an import did. `added` holds the names as stored, renamed ones included."""

    added: tuple[str, ...] = ()
    skipped: tuple[str, ...] = ()  # names in the file whose voice the library already had
    renamed: tuple[tuple[str, str], ...] = ()  # (name in the file, name given): name was taken

    def counts(self) -> str:
        """'2 added, 1 skipped (already in the library), 1 renamed'."""
        return (
            f"{len(self.added)} added, {len(self.skipped)} skipped (already in the library), "
            f"{len(self.renamed)} renamed"
        )


def _clean_name(name: str) -> str:
    """Control characters (newlines, NUL, ...) become spaces: a name is a label, nothing more."""
    return "".join(" " if unicodedata.category(c) == "Cc" else c for c in name).strip()


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
        if isinstance(name, str):
            name = _clean_name(name)
        if not isinstance(name, str) or not name or len(name) > MAX_NAME:
            raise SpeakerError("A speaker has no valid name (1-100 characters).")
        if isinstance(emb, str):
            emb = emb.strip()
        if not isinstance(emb, str) or not 16 <= len(emb) <= 4096:
            raise SpeakerError(f"Speaker '{name}' has no valid embedding string.")
        if seed is not None and (not isinstance(seed, int) or isinstance(seed, bool)):
            raise SpeakerError(f"Speaker '{name}' has a seed that is not a whole number.")
        if not isinstance(note, str):
            raise SpeakerError(f"Speaker '{name}' has a note that is not text.")
        created = data.get("created", "")
        created = created if isinstance(created, str) and len(created) <= 64 else ""
        return SpeakerEntry(name, emb, seed, note, created)


def _free_name(name: str, taken: list[str]) -> str:
    free, n = name, 2
    while free in taken:
        suffix = f" ({n})"
        free, n = name[: MAX_NAME - len(suffix)].rstrip() + suffix, n + 1
    return free


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def _read(source: Path) -> str:
    """The file's text. OSError when the file system refuses it; SpeakerError when the
    content cannot be a speaker library (binary, huge)."""
    size = source.stat().st_size
    if size > MAX_FILE_BYTES:
        raise SpeakerError(f"{source} is too large to be a speaker library ({size >> 20} MiB).")
    data = source.read_bytes()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise SpeakerError(f"{source} is not a speaker library (it is not UTF-8 text).") from None


def _parse(text: str, source: Path) -> list[SpeakerEntry]:
    """Speaker files are data: JSON only, never pickle or code, and checked entry by entry."""
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        raise SpeakerError(f"{source} is not valid JSON.") from None
    if not isinstance(data, dict) or not isinstance(data.get("speakers"), list):
        raise SpeakerError(f"{source} is not a speaker library.")
    version = data.get("format", FORMAT)
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise SpeakerError(f"{source} is not a speaker library (unknown format {version!r}).")
    if version > FORMAT:
        raise _NewerFormat(
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
        if not self.path.is_file():
            raise SpeakerError(f"The speaker library {self.path} is not a file; move it away.")
        try:
            self.entries = _parse(_read(self.path), self.path)
        except _NewerFormat:
            raise
        except SpeakerError as exc:
            aside = self.path.with_name(f"{self.path.name}.damaged-{int(time.time())}")
            try:
                self.path.replace(aside)
            except OSError as move:
                raise SpeakerError(
                    f"The speaker library {self.path} is damaged ({exc}) and could not be "
                    f"moved aside ({move.strerror or move}); it was left as it is."
                ) from None
            self.problem = (
                f"The speaker library was damaged ({exc}); it was kept as {aside} "
                "and a new one was started."
            )
        except OSError as exc:
            raise SpeakerError(
                f"Cannot read the speaker library {self.path}: {exc.strerror or exc}."
            ) from None

    @classmethod
    def open_or_locked(cls, path: Path | None = None) -> "SpeakerLibrary":
        """The library, or, when it cannot be used (a newer format, unreadable), an empty one
        that refuses every change, so the file is never overwritten; `problem` says why."""
        try:
            return cls(path)
        except SpeakerError as exc:
            locked = cls.__new__(cls)
            locked.path = Path(path) if path else paths.speakers_file()
            locked.entries = []
            locked.problem = str(exc)
            locked.locked = True
            return locked

    locked = False

    def names(self) -> list[str]:
        return [e.name for e in self.entries]

    def get(self, name: str) -> SpeakerEntry | None:
        return next((e for e in self.entries if e.name == name), None)

    def _save(self, entries: list[SpeakerEntry]) -> None:
        """Write `entries` atomically, then adopt them; on failure nothing changes."""
        if self.locked:
            raise SpeakerError(f"The speaker library cannot be changed: {self.problem}")
        body = {"format": FORMAT, "speakers": [asdict(e) for e in entries]}
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            write_text_atomic(self.path, json.dumps(body, ensure_ascii=False, indent=2) + "\n")
        except (OSError, ValueError) as exc:
            raise SpeakerError(
                os_error_sentence("save the speaker library", self.path, exc)
            ) from None
        self.entries = entries

    def add(
        self,
        name: str,
        embedding: str,
        seed: int | None = None,
        note: str = "",
        replace: bool = False,
    ) -> SpeakerEntry:
        """A new speaker at the end; with `replace`, a speaker of that name takes the new voice
        in its place (its position in the list kept). A taken name without `replace` raises
        SpeakerNameTaken."""
        entry = SpeakerEntry.from_dict(
            {"name": name, "embedding": embedding, "seed": seed, "note": note, "created": _now()}
        )
        old = self.get(entry.name)
        if old is None:
            self._save([*self.entries, entry])
        elif replace:
            self._save([entry if e is old else e for e in self.entries])
        else:
            raise SpeakerNameTaken(entry.name)
        return entry

    def free_name(self, name: str) -> str:
        """`name`, or the first of 'name (2)', 'name (3)', ... that no speaker has."""
        return _free_name(_clean_name(name), self.names())

    def rename(self, old: str, new: str) -> None:
        entry = self._need(old)
        new = _clean_name(new)
        if not new or len(new) > MAX_NAME:
            raise SpeakerError("A speaker name must have 1-100 characters.")
        if self.get(new):
            raise SpeakerNameTaken(new)
        renamed = SpeakerEntry(new, entry.embedding, entry.seed, entry.note, entry.created)
        self._save([renamed if e is entry else e for e in self.entries])

    def remove(self, name: str) -> None:
        gone = self._need(name)
        self._save([e for e in self.entries if e is not gone])

    def _need(self, name: str) -> SpeakerEntry:
        entry = self.get(name)
        if entry is None:
            raise SpeakerError(f"There is no speaker named '{name}'.")
        return entry

    def export(self, target: Path, names: list[str] | None = None) -> int:
        """Write the chosen speakers (all by default) to `target` atomically; a failure leaves
        any existing file as it was and no temp file behind."""
        chosen = [self._need(n) for n in names] if names else list(self.entries)
        body = {"format": FORMAT, "speakers": [asdict(e) for e in chosen]}
        target = Path(target)
        problem = target_problem(target, example="speakers.json")
        if problem:
            raise SpeakerError(problem)
        try:
            write_text_atomic(target, json.dumps(body, ensure_ascii=False, indent=2) + "\n")
        except (OSError, ValueError) as exc:
            raise SpeakerError(os_error_sentence("write", target, exc)) from None
        return len(chosen)

    def import_file(self, source: Path) -> ImportResult:
        """Add every speaker in `source` whose voice (embedding) the library does not have yet;
        one already there, under any name, is skipped. A name already taken by another voice
        gets ' (2)', ' (3)', ... Names are labels inside the library file: no file is ever named
        after one. Nothing is written when nothing is added."""
        source = Path(source)
        try:
            text = _read(source)
        except OSError as exc:
            raise SpeakerError(f"Cannot read {source}: {exc.strerror or exc}.") from None
        entries = list(self.entries)
        voices = {e.embedding for e in entries}
        added: list[str] = []
        skipped: list[str] = []
        renamed: list[tuple[str, str]] = []
        for entry in _parse(text, source):
            if entry.embedding in voices:
                skipped.append(entry.name)
                continue
            name = _free_name(entry.name, [e.name for e in entries])
            if name != entry.name:
                renamed.append((entry.name, name))
            entries.append(
                SpeakerEntry(name, entry.embedding, entry.seed, entry.note, entry.created or _now())
            )
            voices.add(entry.embedding)
            added.append(name)
        if added:
            self._save(entries)
        return ImportResult(tuple(added), tuple(skipped), tuple(renamed))
