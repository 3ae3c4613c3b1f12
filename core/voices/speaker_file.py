"""The speaker library's file: its JSON format (versions, limits), one entry, and reading and
parsing a library or an exported file safely (size-capped, never unpickled, damage said in one
sentence). The library itself, which changes and writes it, is speakers.py."""

import json
import time
import unicodedata
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from chattts_studio.core.errors import SpeakerError
from chattts_studio.core.messages import QT_TRANSLATE_NOOP, Sentence, not_json
from chattts_studio.core.voices.voice import Voice

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


class NewerFormat(SpeakerError):
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


def clean_name(name: str) -> str:
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
            name = clean_name(name)
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


def file_body(entries: list[SpeakerEntry], portable: bool = False) -> dict[str, Any]:
    """A library file's content; `portable` drops the paths of preview and recording files,
    which do not travel with an exported file."""
    items = [
        replace(e, preview="", recording="").to_dict() if portable else e.to_dict() for e in entries
    ]
    return {"format": 2 if any(e.cloned for e in entries) else 1, "speakers": items}


def free_name(name: str, taken: list[str]) -> str:
    free, n = name, 2
    while free in taken:
        suffix = f" ({n})"
        free, n = name[: MAX_NAME - len(suffix)].rstrip() + suffix, n + 1
    return free


def now_stamp() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def read_library(source: Path) -> str:
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


def parse_library(text: str, source: Path) -> list[SpeakerEntry]:
    """Speaker files are data: JSON only, never pickle or code, and checked entry by entry."""
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        raise SpeakerError(not_json(source)) from None
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
        raise NewerFormat(
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
