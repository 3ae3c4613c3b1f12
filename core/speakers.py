"""The speaker library: named voices in a human-readable JSON file shared by the app and CLI."""

import json
import time
import unicodedata
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from . import paths
from .atomic import os_error_sentence, target_problem, write_text_atomic
from .errors import SpeakerError
from .messages import QT_TRANSLATE_NOOP, Sentence, said
from .voice import Voice

# Format 1: seed or embedding speakers. Format 2 adds cloned voices (a sample and its
# transcript, no embedding), which format-1 apps would take for damage: a library is written
# as format 2 only while it holds one, so older apps refuse it (and leave it alone) instead.
# Previews and kept recordings are optional fields that format-1 readers ignore.
FORMAT = 2
MAX_FILE_BYTES = 16 << 20  # a library of thousands of speakers is well under 1 MiB
MAX_NAME = 100  # characters
MAX_SAMPLE = 65536  # characters of a sample string (30 s of codes is about 4,000)
MAX_TRANSCRIPT = 1000
_OPTIONAL = ("sample", "transcript", "preview", "recording")


class _NewerFormat(SpeakerError):
    """The file was written by a newer app: refused, never moved or overwritten."""


class SpeakerNameTaken(SpeakerError):
    """A speaker of that name is already in the library (the caller may offer to replace it
    or to choose another name)."""

    def __init__(self, name: str) -> None:
        super().__init__(
            Sentence(
                QT_TRANSLATE_NOOP("core", "A speaker named '{name}' already exists."), name=name
            )
        )
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
    """A kept voice, stored as what conditions the model (its embedding, or the encoded sample
    of a recording and its transcript), never re-derived from a seed: it sounds the same on
    every machine and version."""

    name: str
    embedding: str  # ChatTTS's base16384 speaker string; "" for a cloned voice without one
    seed: int | None = None  # the seed it came from, when it came from one
    note: str = ""
    created: str = ""  # ISO 8601, UTC
    sample: str = ""  # a recording's DVAE codes (ChatTTS's spk_smp string)
    transcript: str = ""  # what is said in the recording (txt_smp)
    preview: str = ""  # a short clip of the voice, relative to the library's folder
    recording: str = ""  # the reference recording, kept only when asked; relative likewise

    @property
    def voice(self) -> Voice:
        return Voice(self.embedding, self.sample, self.transcript)

    @property
    def cloned(self) -> bool:
        return bool(self.sample)

    def to_dict(self) -> dict[str, Any]:
        """The entry as stored: optional fields only when set (format-1 files stay as they were)."""
        return {k: v for k, v in asdict(self).items() if k not in _OPTIONAL or v}

    @staticmethod
    def from_dict(data: Any) -> "SpeakerEntry":
        if not isinstance(data, dict):
            raise SpeakerError(QT_TRANSLATE_NOOP("core", "A speaker entry is not an object."))
        name, emb = data.get("name"), data.get("embedding", "")
        seed, note = data.get("seed"), data.get("note", "")
        if isinstance(name, str):
            name = _clean_name(name)
        if not isinstance(name, str) or not name or len(name) > MAX_NAME:
            raise SpeakerError(
                QT_TRANSLATE_NOOP("core", "A speaker has no valid name (1-100 characters).")
            )
        optional = {k: data.get(k, "") for k in _OPTIONAL}
        if not all(isinstance(v, str) for v in optional.values()):
            raise SpeakerError(
                Sentence(
                    QT_TRANSLATE_NOOP(
                        "core",
                        "Speaker '{name}' has a sample, transcript or file that is not text.",
                    ),
                    name=name,
                )
            )
        optional = {k: v.strip() for k, v in optional.items()}
        if isinstance(emb, str):
            emb = emb.strip()
        if not isinstance(emb, str) or not (
            16 <= len(emb) <= 4096 or (not emb and optional["sample"])
        ):
            raise SpeakerError(
                Sentence(
                    QT_TRANSLATE_NOOP("core", "Speaker '{name}' has no valid embedding string."),
                    name=name,
                )
            )
        if optional["sample"] and not (
            16 <= len(optional["sample"]) <= MAX_SAMPLE
            and 0 < len(optional["transcript"]) <= MAX_TRANSCRIPT
        ):
            raise SpeakerError(
                Sentence(
                    QT_TRANSLATE_NOOP(
                        "core", "Speaker '{name}' has no valid voice sample and transcript."
                    ),
                    name=name,
                )
            )
        for key in ("preview", "recording"):
            if optional[key] and (
                Path(optional[key]).is_absolute() or ".." in Path(optional[key]).parts
            ):
                optional[key] = ""  # only files inside the library's folder are ever used
        if seed is not None and (not isinstance(seed, int) or isinstance(seed, bool)):
            raise SpeakerError(
                Sentence(
                    QT_TRANSLATE_NOOP(
                        "core", "Speaker '{name}' has a seed that is not a whole number."
                    ),
                    name=name,
                )
            )
        if not isinstance(note, str):
            raise SpeakerError(
                Sentence(
                    QT_TRANSLATE_NOOP("core", "Speaker '{name}' has a note that is not text."),
                    name=name,
                )
            )
        created = data.get("created", "")
        created = created if isinstance(created, str) and len(created) <= 64 else ""
        return SpeakerEntry(name, emb, seed, note, created, **optional)


def _body(entries: list[SpeakerEntry], portable: bool = False) -> dict[str, Any]:
    """A library file's content; `portable` drops the paths of preview and recording files,
    which do not travel with an exported file."""
    items = [
        replace(e, preview="", recording="").to_dict() if portable else e.to_dict() for e in entries
    ]
    return {"format": 2 if any(e.cloned for e in entries) else 1, "speakers": items}


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
        raise SpeakerError(
            Sentence(
                QT_TRANSLATE_NOOP(
                    "core", "{source} is too large to be a speaker library ({size} MiB)."
                ),
                source=str(source),
                size=size >> 20,
            )
        )
    data = source.read_bytes()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise SpeakerError(
            Sentence(
                QT_TRANSLATE_NOOP(
                    "core", "{source} is not a speaker library (it is not {encoding} text)."
                ),
                source=str(source),
                encoding="UTF-8",
            )
        ) from None


def _parse(text: str, source: Path) -> list[SpeakerEntry]:
    """Speaker files are data: JSON only, never pickle or code, and checked entry by entry."""
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        raise SpeakerError(
            Sentence(
                QT_TRANSLATE_NOOP("core", "{source} is not valid {format}."),
                source=str(source),
                format="JSON",
            )
        ) from None
    if not isinstance(data, dict) or not isinstance(data.get("speakers"), list):
        raise SpeakerError(
            Sentence(
                QT_TRANSLATE_NOOP("core", "{source} is not a speaker library."), source=str(source)
            )
        )
    version = data.get("format", FORMAT)
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise SpeakerError(
            Sentence(
                QT_TRANSLATE_NOOP(
                    "core", "{source} is not a speaker library (unknown format {version})."
                ),
                source=str(source),
                version=repr(version),
            )
        )
    if version > FORMAT:
        raise _NewerFormat(
            Sentence(
                QT_TRANSLATE_NOOP(
                    "core",
                    "{source} was written by a newer ChatTTS Studio (format {version}); "
                    "update the app to use it.",
                ),
                source=str(source),
                version=version,
            )
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
            raise SpeakerError(
                Sentence(
                    QT_TRANSLATE_NOOP(
                        "core", "The speaker library {path} is not a file; move it away."
                    ),
                    path=str(self.path),
                )
            )
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
                    Sentence(
                        QT_TRANSLATE_NOOP(
                            "core",
                            "The speaker library {path} is damaged ({problem}) and could not be "
                            "moved aside ({reason}); it was left as it is.",
                        ),
                        path=str(self.path),
                        problem=said(exc),
                        reason=move.strerror or str(move),
                    )
                ) from None
            self.problem = Sentence(
                QT_TRANSLATE_NOOP(
                    "core",
                    "The speaker library was damaged ({problem}); it was kept as {aside} "
                    "and a new one was started.",
                ),
                problem=said(exc),
                aside=str(aside),
            )
        except OSError as exc:
            raise SpeakerError(
                Sentence(
                    QT_TRANSLATE_NOOP("core", "Cannot read the speaker library {path}: {reason}."),
                    path=str(self.path),
                    reason=exc.strerror or str(exc),
                )
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
            locked.problem = said(exc)
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
            raise SpeakerError(
                Sentence(
                    QT_TRANSLATE_NOOP("core", "The speaker library cannot be changed: {problem}"),
                    problem=self.problem,
                )
            )
        body = _body(entries)
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
        *,
        sample: str = "",
        transcript: str = "",
        preview: str = "",
        recording: str = "",
    ) -> SpeakerEntry:
        """A new speaker at the end; with `replace`, a speaker of that name takes the new voice
        in its place (its position in the list kept). A taken name without `replace` raises
        SpeakerNameTaken. A cloned voice gives `sample` and `transcript` (and maybe no
        embedding); `preview` and `recording` are file names relative to the library's folder."""
        entry = SpeakerEntry.from_dict(
            {
                "name": name,
                "embedding": embedding,
                "seed": seed,
                "note": note,
                "created": _now(),
                "sample": sample,
                "transcript": transcript,
                "preview": preview,
                "recording": recording,
            }
        )
        old = self.get(entry.name)
        if old is None:
            self._save([*self.entries, entry])
        elif replace:
            self._save([entry if e is old else e for e in self.entries])
            self._drop_files(old)
        else:
            raise SpeakerNameTaken(entry.name)
        return entry

    def file(self, relative: str) -> Path | None:
        """A preview or recording file of an entry, as a path (None when it has none)."""
        return self.path.parent / relative if relative else None

    def _drop_files(self, gone: SpeakerEntry) -> None:
        """Remove the preview and recording of an entry no other entry uses (best effort: a
        file left behind costs disk space, never a wrong voice)."""
        used = {f for e in self.entries for f in (e.preview, e.recording) if f}
        for relative in (gone.preview, gone.recording):
            path = self.file(relative)
            if path is not None and relative not in used:
                path.unlink(missing_ok=True)

    def free_name(self, name: str) -> str:
        """`name`, or the first of 'name (2)', 'name (3)', ... that no speaker has."""
        return _free_name(_clean_name(name), self.names())

    def rename(self, old: str, new: str) -> None:
        entry = self._need(old)
        new = _clean_name(new)
        if not new or len(new) > MAX_NAME:
            raise SpeakerError(
                QT_TRANSLATE_NOOP("core", "A speaker name must have 1-100 characters.")
            )
        if self.get(new):
            raise SpeakerNameTaken(new)
        renamed = replace(entry, name=new)
        self._save([renamed if e is entry else e for e in self.entries])

    def remove(self, name: str) -> None:
        gone = self._need(name)
        self._save([e for e in self.entries if e is not gone])
        self._drop_files(gone)

    def _need(self, name: str) -> SpeakerEntry:
        entry = self.get(name)
        if entry is None:
            raise SpeakerError(
                Sentence(
                    QT_TRANSLATE_NOOP("core", "There is no speaker named '{name}'."), name=name
                )
            )
        return entry

    def export(self, target: Path, names: list[str] | None = None) -> int:
        """Write the chosen speakers (all by default) to `target` atomically; a failure leaves
        any existing file as it was and no temp file behind."""
        chosen = [self._need(n) for n in names] if names else list(self.entries)
        body = _body(chosen, portable=True)
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
            raise SpeakerError(
                Sentence(
                    QT_TRANSLATE_NOOP("core", "Cannot read {path}: {reason}."),
                    path=str(source),
                    reason=exc.strerror or str(exc),
                )
            ) from None
        entries = list(self.entries)
        voices = {e.voice for e in entries}
        added: list[str] = []
        skipped: list[str] = []
        renamed: list[tuple[str, str]] = []
        for entry in _parse(text, source):
            if entry.voice in voices:
                skipped.append(entry.name)
                continue
            name = _free_name(entry.name, [e.name for e in entries])
            if name != entry.name:
                renamed.append((entry.name, name))
            # Files named in another library's file are not ours: never adopt its paths.
            kept = replace(entry, name=name, created=entry.created or _now())
            entries.append(replace(kept, preview="", recording=""))
            voices.add(entry.voice)
            added.append(name)
        if added:
            self._save(entries)
        return ImportResult(tuple(added), tuple(skipped), tuple(renamed))
