"""A render's word timings (render --word-timing): each kept segment aligned once, cached in
FOLDER/.segments/words/ for resumes, and a chapter's words placed where its segments sit. A refused
segment gets estimated times.
"""

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from chattts_studio.core import SAMPLE_RATE
from chattts_studio.core.align.recognised import TimedRecognizer
from chattts_studio.core.align.sphinx import EnglishAligner
from chattts_studio.core.align.timeline import WordTimeline
from chattts_studio.core.align.words import Alignment, Word
from chattts_studio.core.atomic import write_text_atomic
from chattts_studio.core.render.segment_store import Entry, digest

WORDS_FOLDER = "words"
CACHE_VERSION = 1


@dataclass
class SegmentWords:
    """One segment's words in its own time, how they were timed and in which language."""

    words: list[Word]
    method: str = ""
    language: str = ""

    def to_json(self, key: str) -> dict[str, Any]:
        return {
            "key": key,
            "method": self.method,
            "language": self.language,
            "words": [[w.text, w.start, w.end, w.estimated, w.tail] for w in self.words],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "SegmentWords":
        words = [
            Word(str(t), float(s), float(e), bool(x), str(tail))
            for t, s, e, x, tail in data["words"]
        ]
        return cls(words, str(data.get("method", "")), str(data.get("language", "")))


@dataclass
class WordTimer:
    """Times the words of a render's segments, cached in `store_folder`/words/."""

    store_folder: Path
    recognizer: TimedRecognizer | None = None
    english: EnglishAligner = field(default_factory=EnglishAligner)
    aligned: int = 0  # segments aligned by this render (the others came from the cache)

    def _key(self, entry: Entry, text: str) -> str:
        recognizer = getattr(self.recognizer, "name", "") if self.recognizer else ""
        return digest(CACHE_VERSION, entry.audio, text, recognizer)

    def segment(self, entry: Entry, text: str, read: Callable[[Entry], np.ndarray]) -> SegmentWords:
        """The words of the kept segment `entry`, which says `text`: from the cache when it
        holds them for this very audio and text, else aligned (and cached)."""
        key = self._key(entry, text)
        path = self.store_folder / WORDS_FOLDER / f"{Path(entry.file).stem}.json"
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            if isinstance(data, dict) and data.get("key") == key:
                return SegmentWords.from_json(data)
        except (OSError, ValueError, TypeError, KeyError):
            pass  # no cache, or one a kill cut short: align again
        timeline = WordTimeline(SAMPLE_RATE, self.recognizer, self.english)
        timeline.add(read(entry), text, 0)
        found = SegmentWords(
            timeline.words,
            timeline.methods[0] if timeline.methods else "",
            timeline.languages[0] if timeline.languages else "",
        )
        self.aligned += 1
        try:
            path.parent.mkdir(exist_ok=True)
            write_text_atomic(path, json.dumps(found.to_json(key), ensure_ascii=False))
        except OSError:
            pass  # only a cache: the words are still right
        return found

    def chapter(
        self,
        texts: Sequence[str],
        entries: Sequence[Entry],
        spans: Sequence[tuple[int, int]],
        read: Callable[[Entry], np.ndarray],
    ) -> Alignment:
        """A chapter's words in chapter time: segment n says texts[n], kept as entries[n],
        and sits at samples spans[n] (first, end) of the chapter file."""
        words: list[Word] = []
        methods: list[str] = []
        languages: list[str] = []
        end = 0
        for text, entry, (first, stop) in zip(texts, entries, spans, strict=True):
            got = self.segment(entry, text, read)
            offset = first / SAMPLE_RATE
            words += [
                Word(w.text, w.start + offset, w.end + offset, w.estimated, w.tail)
                for w in got.words
            ]
            methods += [got.method] if got.method else []
            languages += [got.language] if got.language else []
            end = max(end, stop)
        language = max(set(languages), key=languages.count, default="en")
        return Alignment(words, language, "; ".join(dict.fromkeys(methods)), end / SAMPLE_RATE)


def joined(parts: Sequence[tuple[Alignment, float]]) -> Alignment:
    """Several alignments as one, each moved to start at its offset (seconds): a book's
    chapters in the audiobook file."""
    words = [
        Word(w.text, w.start + offset, w.end + offset, w.estimated, w.tail)
        for alignment, offset in parts
        for w in alignment.words
    ]
    languages = [a.language for a, _ in parts]
    methods = "; ".join(dict.fromkeys(a.method for a, _ in parts if a.method))
    end = max((a.duration + offset for a, offset in parts), default=0.0)
    return Alignment(words, max(set(languages), key=languages.count, default="en"), methods, end)
