"""The pronunciation dictionary: the user's `word -> replacement` entries, kept as JSON in the data
folder, applied to a text before it is segmented.

A word that starts or ends with a Latin letter or digit matches only as a whole word there, case
sensitive ("SQL" not in "MySQL"); any other word matches as a plain substring ("行长" in
"银行行长"). The longest match wins, left to right, and a replaced part is never matched again.
Only what the model reads changes. The rule: docs/audiobooks.md."""

import json
import re
import time
import unicodedata
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from chattts_studio.core import paths
from chattts_studio.core.atomic import os_error_sentence, write_text_atomic
from chattts_studio.core.errors import BadTextError, StudioError
from chattts_studio.core.file_lock import DICTIONARY, changing
from chattts_studio.core.messages import QT_TRANSLATE_NOOP, Sentence, cannot_read, said

FORMAT = 1
MAX_WORD = 100  # characters
MAX_REPLACEMENT = 500
MAX_ENTRIES = 10_000
MAX_FILE_BYTES = 8 << 20
_EDGE = re.compile(r"[A-Za-z0-9]")


class LexiconError(StudioError):
    """The dictionary file or an entry is invalid."""


def _check(word: Any, replacement: Any) -> tuple[str, str]:
    """The entry, stripped; LexiconError with one sentence when it cannot be used."""
    from chattts_studio.core.text.prepare import check_tokens, clean

    if not isinstance(word, str) or not isinstance(replacement, str):
        raise LexiconError(
            QT_TRANSLATE_NOOP(
                "core", "A dictionary entry needs a word and a replacement, both text."
            )
        )
    word, replacement = clean(word).strip(), clean(replacement).strip()
    if not word or len(word) > MAX_WORD or "\n" in word:
        raise LexiconError(
            Sentence(
                QT_TRANSLATE_NOOP(
                    "core", "A dictionary word must be one line of 1-{most} characters."
                ),
                most=MAX_WORD,
            )
        )
    if "[" in word or "]" in word:
        raise LexiconError(
            QT_TRANSLATE_NOOP(
                "core", "A dictionary word cannot contain '[' or ']' (control tokens)."
            )
        )
    if not replacement or len(replacement) > MAX_REPLACEMENT or "\n" in replacement:
        raise LexiconError(
            Sentence(
                QT_TRANSLATE_NOOP(
                    "core", "The replacement for '{word}' must be one line of 1-{most} characters."
                ),
                word=word,
                most=MAX_REPLACEMENT,
            )
        )
    try:
        check_tokens(replacement)
    except BadTextError as exc:
        raise LexiconError(
            Sentence(
                QT_TRANSLATE_NOOP("core", "The replacement for '{word}': {problem}"),
                word=word,
                problem=said(exc),
            )
        ) from None
    return unicodedata.normalize("NFC", word), replacement


def _pattern(word: str) -> str:
    """Whole-word boundaries on a Latin edge only (see the module's rule)."""
    head = r"(?<![A-Za-z0-9])" if _EDGE.match(word[0]) else ""
    tail = r"(?![A-Za-z0-9])" if _EDGE.match(word[-1]) else ""
    return f"{head}{re.escape(word)}{tail}"


class Lexicon:
    """Entries ready to apply (a request carries them as `entries`, a tuple of pairs)."""

    def __init__(self, entries: Iterable[tuple[str, str]] = ()) -> None:
        self.entries = tuple(entries)
        self._by_word = dict(self.entries)
        # The longest word first: the regex alternation then takes the longest match at a place.
        ordered = sorted(self._by_word, key=len, reverse=True)
        self._regex = re.compile("|".join(_pattern(w) for w in ordered)) if ordered else None

    def __bool__(self) -> bool:
        return bool(self.entries)

    def matches(self, text: str) -> list[tuple[int, int, str]]:
        """Non-overlapping (start, end, replacement), left to right."""
        if self._regex is None:
            return []
        return [(m.start(), m.end(), self._by_word[m.group()]) for m in self._regex.finditer(text)]

    def apply(self, text: str) -> str:
        out, at = [], 0
        for start, end, replacement in self.matches(text):
            out += [text[at:start], replacement]
            at = end
        return "".join([*out, text[at:]])


def lexicon_file() -> Path:
    return paths.data_dir() / "lexicon.json"


class LexiconStore:
    """The dictionary file. A damaged file or one from a newer version is refused and never
    overwritten (the sentence says what to do)."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = Path(path) if path else lexicon_file()
        self.entries: dict[str, str] = {}
        if self.path.exists():
            self.entries = self._read()

    def _read(self) -> dict[str, str]:
        where = Sentence(
            QT_TRANSLATE_NOOP("core", "The pronunciation dictionary {path}"), path=str(self.path)
        )
        try:
            if self.path.stat().st_size > MAX_FILE_BYTES:
                raise LexiconError(
                    Sentence(
                        QT_TRANSLATE_NOOP("core", "{where} is too large to be a dictionary."),
                        where=where,
                    )
                )
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except OSError as exc:
            raise LexiconError(cannot_read(self.path, exc)) from None
        except (ValueError, RecursionError):
            raise LexiconError(
                Sentence(
                    QT_TRANSLATE_NOOP(
                        "core", "{where} is not valid {format}; fix or move it away."
                    ),
                    where=where,
                    format="JSON",
                )
            ) from None
        if not isinstance(data, dict) or not isinstance(data.get("entries"), list):
            raise LexiconError(
                Sentence(
                    QT_TRANSLATE_NOOP(
                        "core", "{where} is not a dictionary file; fix or move it away."
                    ),
                    where=where,
                )
            )
        version = data.get("format", FORMAT)
        if not isinstance(version, int) or version > FORMAT:
            raise LexiconError(
                Sentence(
                    QT_TRANSLATE_NOOP(
                        "core",
                        "{where} was written by a newer ChatTTS Studio; update the app to use it.",
                    ),
                    where=where,
                )
            )
        entries: dict[str, str] = {}
        for item in data["entries"]:
            if not isinstance(item, dict):
                raise LexiconError(
                    Sentence(
                        QT_TRANSLATE_NOOP("core", "{where} has an entry that is not an object."),
                        where=where,
                    )
                )
            word, replacement = _check(item.get("word"), item.get("replacement"))
            entries[word] = replacement
        return entries

    def lexicon(self) -> Lexicon:
        return Lexicon(tuple(self.entries.items()))

    def reload(self) -> bool:
        """Take the entries on disk now (another process may have changed the file); True when
        they differ from the ones held. LexiconError when the file cannot be used as it is."""
        entries = self._read() if self.path.exists() else {}
        changed = entries != self.entries
        self.entries = entries
        return changed

    def _change(self, change: Callable[[dict[str, str]], dict[str, str]]) -> None:
        """One read-modify-write under the dictionary's lock: the file read again (another
        process may have changed it since), `change` applied, written atomically, adopted."""
        with changing(self.path, DICTIONARY, LexiconError):
            self.entries = self._read() if self.path.exists() else {}  # held even if refused
            entries = change(self.entries)
            body = {
                "format": FORMAT,
                "saved": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                "entries": [{"word": w, "replacement": r} for w, r in sorted(entries.items())],
            }
            try:
                text = json.dumps(body, ensure_ascii=False, indent=2) + "\n"
                write_text_atomic(self.path, text)
            except (OSError, ValueError) as exc:
                raise LexiconError(os_error_sentence("save", self.path, exc)) from None
            self.entries = entries

    def add(self, word: str, replacement: str) -> tuple[str, bool]:
        """Add or change an entry; the word as stored, and True when it was new."""
        word, replacement = _check(word, replacement)
        new = False

        def change(entries: dict[str, str]) -> dict[str, str]:
            nonlocal new
            new = word not in entries
            if new and len(entries) >= MAX_ENTRIES:
                raise LexiconError(
                    Sentence(
                        QT_TRANSLATE_NOOP("core", "The dictionary is full ({count} entries)."),
                        count=MAX_ENTRIES,
                    )
                )
            return {**entries, word: replacement}

        self._change(change)
        return word, new

    def remove(self, word: str) -> None:
        word = unicodedata.normalize("NFC", word.strip())

        def change(entries: dict[str, str]) -> dict[str, str]:
            if word not in entries:
                raise LexiconError(
                    Sentence(
                        QT_TRANSLATE_NOOP(
                            "core", "The pronunciation dictionary has no entry '{word}'."
                        ),
                        word=word,
                    )
                )
            return {w: r for w, r in entries.items() if w != word}

        self._change(change)
