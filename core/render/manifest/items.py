"""A manifest of items to speak, one audio file each: `.jsonl` (a JSON object a line) or `.csv` (a
header row, then an item a row), with the fields `id` (the file's name: letters, digits, `_`, `-`,
`.`; unique ignoring case), `text`, `speaker` (a library name, a seed, an embedding string or a
blend) and optional `seed`.

Everything is checked before the model loads (speakers once it has); a bad row is one sentence
naming its line, and nothing is rendered. The format: docs/rendering.md."""

import csv
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from chattts_studio.core.errors import BadTextError, StudioError
from chattts_studio.core.render.names import is_reserved_name
from chattts_studio.core.seeds import MAX_SEED
from chattts_studio.core.text.prepare import check_text, estimate_seconds
from chattts_studio.core.voices.blend import (
    blend_seed,
    check_library_parts,
    library_blend,
    looks_like_blend,
)
from chattts_studio.core.voices.voice import Voice

if TYPE_CHECKING:
    from chattts_studio.core.engine.engine import Engine
    from chattts_studio.core.voices.speaker_file import SpeakerEntry

MANIFEST_SUFFIXES = (".jsonl", ".csv")
MAX_ITEMS = 1_000_000
_SAFE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")
FIELDS = {"id", "text", "speaker", "seed"}
RESERVED_IDS = {"manifest.out"}  # the output manifest's own name


class ManifestError(StudioError):
    """A manifest that cannot be rendered as given."""


@dataclass(frozen=True)
class ManifestItem:
    """One row as read (its speaker not yet resolved)."""

    line: int  # 1-based line of the file it came from
    id: str
    text: str
    speaker: str
    seed: int | None = None

    @property
    def est_seconds(self) -> float:
        return estimate_seconds(self.text)


@dataclass(frozen=True)
class WorkItem:
    """One item as the decoder takes it: its speaker resolved once, on the machine that reads
    the manifest, its seed fixed. Plain data: it travels to workers, who use it as it is."""

    id: str
    text: str
    # The 150-character embedding string, or a cloned voice as Engine.check_voice returns it
    # (its sample, its transcript normalised as the model reads it, maybe an embedding).
    speaker: str | Voice
    seed: int
    est_seconds: float


def is_manifest(path: Path) -> bool:
    return Path(path).suffix.lower() in MANIFEST_SUFFIXES


def _fail(source: Path, line: int, what: str) -> ManifestError:
    return ManifestError(f"Line {line} of {source.name}: {what}.")


def _rows(source: Path, text: str) -> list[tuple[int, Any]]:
    """(line number, row) for every row; a row is a dict when it parsed as one."""
    if source.suffix.lower() == ".jsonl":
        rows: list[tuple[int, Any]] = []
        for number, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                rows.append((number, json.loads(line)))
            except ValueError:
                raise _fail(source, number, "this is not a JSON object") from None
        return rows
    reader = csv.reader(text.splitlines(keepends=True))
    try:
        header = next(reader)
    except StopIteration:
        return []
    except csv.Error as exc:
        raise _fail(source, 1, f"the header cannot be read ({exc})") from None
    names = [h.strip().lower() for h in header]
    if "id" not in names or "text" not in names or "speaker" not in names:
        raise _fail(source, 1, "the header must name the columns id, text, speaker (and seed)")
    unknown = sorted(set(names) - FIELDS)
    if unknown:
        raise _fail(source, 1, f"the column {unknown[0]!r} is not one a manifest has")
    rows = []
    try:
        for values in reader:
            if not any(v.strip() for v in values):
                continue
            if len(values) > len(names):
                raise _fail(source, reader.line_num, "this row has more fields than the header")
            row = {n: v for n, v in zip(names, values, strict=False) if v.strip() or n == "text"}
            rows.append((reader.line_num, row))
    except csv.Error as exc:
        raise _fail(source, reader.line_num, f"this row cannot be read ({exc})") from None
    return rows


def _check_id(source: Path, line: int, value: Any) -> str:
    if isinstance(value, int) and not isinstance(value, bool):
        value = str(value)
    if not isinstance(value, str) or not value.strip():
        raise _fail(source, line, "the item has no id")
    if not _SAFE_ID.fullmatch(value) or value.endswith("."):
        raise _fail(
            source,
            line,
            f"the id {value[:60]!r} is not a safe file name (use 1-100 letters, digits, "
            "'_', '-' and '.', starting with a letter or digit)",
        )
    if is_reserved_name(value) or value.lower() in RESERVED_IDS:
        raise _fail(source, line, f"the id {value!r} is a name some systems reserve")
    return value


def _check_seed(source: Path, line: int, value: Any) -> int | None:
    if value is None:
        return None
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value.strip())
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= MAX_SEED:
        raise _fail(source, line, f"the seed must be a whole number from 0 to {MAX_SEED}")
    return value


def read_manifest(path: Path) -> list[ManifestItem]:
    """Every item of the manifest, checked (not the embeddings: see resolve_items)."""
    source = Path(path)
    try:
        raw = source.read_bytes()
    except FileNotFoundError:
        raise ManifestError(f"The manifest {source} does not exist.") from None
    except OSError as exc:
        raise ManifestError(f"Cannot read the manifest {source}: {exc.strerror}.") from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise ManifestError(f"The manifest {source.name} is not UTF-8 text.") from None
    items: list[ManifestItem] = []
    seen: dict[str, int] = {}
    for line, row in _rows(source, text):
        if not isinstance(row, dict):
            raise _fail(source, line, "this is not a JSON object")
        unknown = sorted(set(row) - FIELDS)
        if unknown:
            raise _fail(source, line, f"the field {unknown[0]!r} is not one a manifest has")
        item_id = _check_id(source, line, row.get("id"))
        if item_id.lower() in seen:
            raise _fail(
                source, line, f"the id {item_id!r} is used on line {seen[item_id.lower()]} too"
            )
        seen[item_id.lower()] = line
        text_value = row.get("text")
        if not isinstance(text_value, str) or not text_value.strip():
            raise _fail(source, line, f"the item {item_id!r} has no text")
        try:
            check_text(text_value)
        except BadTextError as exc:
            raise _fail(source, line, f"{str(exc).rstrip('.')} (item {item_id!r})") from None
        speaker = row.get("speaker")
        if isinstance(speaker, int) and not isinstance(speaker, bool):
            speaker = str(speaker)
        if not isinstance(speaker, str) or not speaker.strip():
            raise _fail(source, line, f"the item {item_id!r} has no speaker")
        seed = _check_seed(source, line, row.get("seed"))
        items.append(ManifestItem(line, item_id, text_value, speaker.strip(), seed))
        if len(items) > MAX_ITEMS:
            raise _fail(source, line, f"a manifest holds at most {MAX_ITEMS} items")
    if not items:
        raise ManifestError(f"The manifest {source.name} has no items.")
    return items


def _blend_failed(source: Path, item: ManifestItem, exc: StudioError) -> ManifestError:
    return _fail(source, item.line, f"{str(exc).rstrip('.')} (item {item.id!r})")


def check_speakers(items: list[ManifestItem], source: Path) -> None:
    """What can be checked without the model: a short speaker must be a library name or a
    seed number (a library speaker is an embedding or a cloned voice: the library checked
    its form when it read it)."""
    from chattts_studio.core.voices.speakers import SpeakerLibrary

    library = SpeakerLibrary.open_or_locked()
    voices = {e.name: e.voice for e in library.entries}
    for item in items:
        if item.speaker.isdigit():
            if int(item.speaker) > MAX_SEED:
                raise _fail(source, item.line, f"a speaker seed must be at most {MAX_SEED}")
            continue
        if item.speaker not in voices and looks_like_blend(item.speaker):
            try:  # its form and its library parts; its embeddings once the model is loaded
                check_library_parts(item.speaker, voices)
            except StudioError as exc:
                raise _blend_failed(source, item, exc) from None
            continue
        if library.get(item.speaker) is None and len(item.speaker) < 100:
            raise _fail(
                source,
                item.line,
                f"the speaker {item.speaker[:60]!r} is not in the speaker library, not a seed "
                "and not an embedding",
            )


def resolve_items(items: list[ManifestItem], engine: "Engine", source: Path) -> list[WorkItem]:
    """Every item with its speaker as an embedding string or a checked cloned voice, each
    distinct speaker resolved once (here, on the driver: workers never re-derive a speaker
    from a seed, nor normalise a transcript with their own model)."""
    from chattts_studio.core.voices.speakers import SpeakerLibrary

    library = SpeakerLibrary.open_or_locked()
    voices = {e.name: e.voice for e in library.entries}
    seeds = {e.name: e.seed for e in library.entries}
    resolved: dict[str, tuple[str | Voice, int | None]] = {}
    out: list[WorkItem] = []
    for item in items:
        if item.speaker not in resolved:
            try:
                resolved[item.speaker] = _resolve(
                    item.speaker, library.get(item.speaker), engine, voices, seeds
                )
            except StudioError as exc:
                if looks_like_blend(item.speaker):
                    raise _blend_failed(source, item, exc) from None
                raise _fail(source, item.line, str(exc).rstrip(".")) from None
        embedding, speaker_seed = resolved[item.speaker]
        seed = item.seed if item.seed is not None else (speaker_seed or 0)
        out.append(WorkItem(item.id, item.text, embedding, seed, item.est_seconds))
    return out


def _resolve(
    speaker: str,
    entry: "SpeakerEntry | None",
    engine: "Engine",
    voices: dict[str, Voice],
    seeds: dict[str, int | None],
) -> tuple[str | Voice, int | None]:
    """An item's speaker as the decoder takes it, and the seed it brings (a library name is
    looked up whole first: a name may hold '+')."""
    if speaker.isdigit():
        seed = int(speaker)
        return engine.sample_speaker(seed), seed
    if entry is not None and entry.cloned:
        return engine.check_voice(entry.voice), entry.seed  # as synth takes a library voice
    if entry is not None:
        return engine.check_speaker(entry.embedding), entry.seed
    if looks_like_blend(speaker):  # its first part's seed, as the API takes it
        return library_blend(speaker, voices, engine), blend_seed(speaker, seeds)
    return engine.check_speaker(speaker), None


def speaker_id(speaker: str | Voice) -> str:
    """What an item's journal key holds of its speaker: an embedding string as it is (keys of
    renders made before cloned voices were taken stay valid), a cloned voice by its hash."""
    return speaker if isinstance(speaker, str) else f"voice:{speaker.key()}"
