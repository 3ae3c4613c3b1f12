"""A render's outputs, assembled one segment at a time from the segments in its folder: chapter
files at their loudness, subtitles, the .m4b and the chapter list. An output whose inputs have not
changed is not written again.
"""

import json
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from chattts_studio.core import SAMPLE_RATE
from chattts_studio.core.align.cues import format_words
from chattts_studio.core.align.words import Alignment
from chattts_studio.core.atomic import write_text_atomic
from chattts_studio.core.audio.loudness import LoudnessMeter, LoudnessResult, plan_gain, true_peak
from chattts_studio.core.audio.m4b import AacWriter
from chattts_studio.core.audio.stream_writer import AudioStreamWriter, pause_samples
from chattts_studio.core.audio.subtitles import cues_for, write_subtitles
from chattts_studio.core.engine.cancel import CancelToken
from chattts_studio.core.errors import StudioError
from chattts_studio.core.render.book import PlannedChapter, RenderJob
from chattts_studio.core.render.names import safe_name
from chattts_studio.core.render.segment_store import Entry, digest, not_written
from chattts_studio.core.render.words import WordTimer, joined
from chattts_studio.core.weights.models import RANDOM_LABEL


@dataclass(frozen=True)
class ChapterOutput:
    number: int  # 0-based, in the book
    title: str
    file: str
    subtitles: str | None
    samples: int
    segments: int
    loudness: dict[str, Any] | None
    timeline: list[tuple[str, int, int]]  # (segment text, first sample, end sample)

    @property
    def seconds(self) -> float:
        return self.samples / SAMPLE_RATE


def _write(path: Path, write: Callable[[Path], object]) -> None:
    """`write(path)` (an atomic write), a full or read-only disk said in one sentence."""
    try:
        write(path)
    except OSError as exc:
        raise StudioError(not_written(path, exc)) from None


def stamp(seconds: float) -> str:
    ms = round(seconds * 1000)
    hours, ms = divmod(ms, 3_600_000)
    minutes, ms = divmod(ms, 60_000)
    return f"{hours:02d}:{minutes:02d}:{ms // 1000:02d}.{ms % 1000:03d}"


class Assembler:
    """Writes a render's outputs; chapter() as each chapter's segments are all there, then
    book() once at the end."""

    def __init__(
        self, job: RenderJob, cancel: CancelToken, say: Callable[[str], None] | None = None
    ) -> None:
        self.job = job
        self.cancel = cancel
        self.say = say or (lambda _line: None)
        self.store = job.store
        self.options = job.options
        self.record = self.store.outputs()
        self.done: dict[int, ChapterOutput] = {}
        # With word timing: each chapter's words in chapter time, by chapter number.
        self.timer = WordTimer(self.store.store, self.options.recognizer)
        self.words: dict[int, Alignment] = {}
        self.read_along: dict[str, Any] | None = None  # what the EPUB read-along holds
        count = len(job.book.chapters)
        self.width = max(2, len(str(count)))
        loaded = job.engine.loaded
        self.model_label = loaded.info.label if loaded else "unknown model"

    # -- names and tags --------------------------------------------------------------------
    @property
    def extension(self) -> str:
        return "m4a" if self.options.format == "m4b" else self.options.format

    def chapter_name(self, ch: PlannedChapter) -> str:
        name = safe_name(ch.title, "chapter")
        return f"{ch.number + 1:0{self.width}d} {name}.{self.extension}"

    def note(self) -> str:
        """The line every output carries: what made it (and that demo weights make noise)."""
        label = f"ChatTTS Studio, {self.model_label}"
        if self.job.random_weights and RANDOM_LABEL not in label:
            label += f" ({RANDOM_LABEL})"
        return label

    def _tags(self, title: str, loudness: LoudnessResult | None, track: int = 0) -> dict[str, str]:
        comment = self.note() + (f"; {loudness.describe()}" if loudness else "")
        tags = {
            "title": title,
            "album": self.job.book.title,
            "artist": "ChatTTS Studio",
            "comment": comment,
        }
        if track:
            tags["tracknumber"] = str(track)
        return tags

    # -- chapters --------------------------------------------------------------------------
    def _segments(self, entries: list[Entry]) -> Iterator[tuple[Entry, np.ndarray]]:
        for entry in entries:
            self.cancel.check()
            yield entry, self.store.read(entry)

    def _measure(self, entries: list[Entry]) -> LoudnessResult | None:
        target = self.options.loudness
        if target is None:
            return None
        meter = LoudnessMeter()
        peak = 0.0
        gap = pause_samples(self.job.request.pause_seconds)
        for n, (_entry, audio) in enumerate(self._segments(entries)):
            if n and gap:
                meter.add(np.zeros(gap, dtype=np.float32))
            meter.add(audio)
            peak = max(peak, true_peak(audio))
        return plan_gain(meter.integrated(), peak, target, self.options.peak)

    def _key(self, entries: list[Entry], name: str) -> str:
        o = self.options
        return digest(
            self.job.settings,
            [e.audio for e in entries],
            name,
            o.format,
            o.loudness,
            o.peak,
            o.subtitles,
            self.job.request.pause_seconds,
            self.note(),
            # Only when on: the keys of renders made before word timings existed still hold.
            *(["word timing"] if o.word_timing else []),
        )

    def chapter(self, ch: PlannedChapter) -> ChapterOutput:
        entries = [e for e in ch.entries if e is not None]
        assert len(entries) == len(ch.segments), "the chapter is not finished"
        name = self.chapter_name(ch)
        subs = f"{Path(name).stem}.{self.options.subtitles}" if self.options.subtitles else None
        key = self._key(entries, name)
        gap = pause_samples(self.job.request.pause_seconds)
        timeline: list[tuple[str, int, int]] = []
        at = 0
        for n, (segment, entry) in enumerate(zip(ch.segments, entries, strict=True)):
            at += gap if n else 0
            # Subtitles show the words as written, not the pronunciation dictionary's.
            timeline.append((segment.shown, at, at + entry.samples))
            at += entry.samples
        if self.options.word_timing:
            spans = [(first, end) for _text, first, end in timeline]
            texts = [s.text for s in ch.segments]  # what the model said
            self.words[ch.number] = self.timer.chapter(texts, entries, spans, self.store.read)
        kept = self.record.get(name, {})
        folder = self.job.folder
        if (
            kept.get("key") == key
            and (folder / name).is_file()
            and (subs is None or (folder / subs).is_file())
        ):
            out = ChapterOutput(
                ch.number, ch.title, name, subs, at, len(entries), kept.get("loudness"), timeline
            )
            self.done[ch.number] = out
            return out
        loudness = self._measure(entries)
        gain = loudness.gain if loudness else 1.0
        tags = self._tags(ch.title, loudness, ch.number + 1)
        pause = self.job.request.pause_seconds
        writer: AudioStreamWriter | AacWriter = (
            AacWriter(folder / name, pause, gain, tags)
            if self.options.format == "m4b"
            else AudioStreamWriter(folder / name, pause_seconds=pause, gain=gain, tags=tags)
        )
        with writer:
            for _entry, audio in self._segments(entries):
                writer.add_segment(audio)
        if subs is not None and ch.number in self.words:
            words = self.words[ch.number]
            text = format_words(words, str(self.options.subtitles))
            _write(folder / subs, lambda path: write_text_atomic(path, text))
            if words.estimated:  # never shown as measured: said here too
                self.say(
                    f"note: {words.estimated} of {len(words.words)} word times in "
                    f"{folder / subs} are estimated (the aligner could not measure them)"
                )
        elif subs is not None:
            _write(
                folder / subs, lambda path: write_subtitles(path, cues_for(timeline), self.note())
            )
        record = loudness.to_json() if loudness else None
        self.record[name] = {"key": key, "loudness": record}
        self.store.save_outputs(self.record)
        out = ChapterOutput(ch.number, ch.title, name, subs, at, len(entries), record, timeline)
        self.done[ch.number] = out
        self.say(f"wrote {folder / name}" + (f" ({loudness.describe()})" if loudness else ""))
        return out

    # -- the book --------------------------------------------------------------------------
    def book(self) -> list[Path]:
        """The audiobook file (m4b), its subtitles, and the chapter list; the paths written."""
        chapters = [self.done[ch.number] for ch in self.job.chapters]
        gap = round(self.options.chapter_pause * SAMPLE_RATE)
        starts, at = [], 0
        for n, out in enumerate(chapters):
            at += gap if n else 0
            starts.append(at)
            at += out.samples
        folder = self.job.folder
        written: list[Path] = []
        audiobook = subs = None
        if self.options.format == "m4b":
            audiobook = safe_name(self.job.book.title, "chapter") + ".m4b"
            if self.options.subtitles:
                subs = f"{Path(audiobook).stem}.{self.options.subtitles}"
            self._audiobook(audiobook, subs, chapters, starts)
            written.append(folder / audiobook)
        source = self.job.source
        if self.options.word_timing and source is not None and source.suffix.lower() == ".epub":
            made = self._read_along(source, chapters)
            written += [made] if made is not None else []
        listing = json.dumps(
            self._listing(chapters, starts, at, audiobook, subs), ensure_ascii=False, indent=2
        )
        _write(folder / "chapters.json", lambda path: write_text_atomic(path, listing))
        lines = [
            f"{stamp(s / SAMPLE_RATE)} {c.title}" for c, s in zip(chapters, starts, strict=True)
        ]
        text = "\n".join(lines) + "\n"
        _write(folder / "chapters.txt", lambda path: write_text_atomic(path, text))
        written += [folder / "chapters.json", folder / "chapters.txt"]
        return written

    def _audiobook(
        self, name: str, subs: str | None, chapters: list[ChapterOutput], starts: list[int]
    ) -> None:
        folder = self.job.folder
        keys = [self.record.get(c.file, {}).get("key") for c in chapters]
        key = digest(keys, [c.title for c in chapters], self.options.chapter_pause, subs)
        if (
            self.record.get(name, {}).get("key") == key
            and (folder / name).is_file()
            and (subs is None or (folder / subs).is_file())
        ):
            return
        tags = {
            "title": self.job.book.title,
            "album": self.job.book.title,
            "artist": "ChatTTS Studio",
            "genre": "Audiobook",
            "comment": self.note() + self._loudness_note(),
        }
        gap = round(self.options.chapter_pause * SAMPLE_RATE)
        by_number = {ch.number: ch for ch in self.job.chapters}
        with AacWriter(folder / name, self.job.request.pause_seconds, 1.0, tags) as writer:
            for n, out in enumerate(chapters):
                if n:
                    writer.write_silence(gap)
                loud = out.loudness or {}
                writer.gain = float(10 ** (loud.get("gain_db", 0.0) / 20)) if loud else 1.0
                writer.mark(out.title)
                entries = [e for e in by_number[out.number].entries if e is not None]
                for _entry, audio in self._segments(entries):
                    writer.add_segment(audio)
        if subs is not None and self.options.word_timing:
            offsets = [
                (self.words[c.number], s / SAMPLE_RATE)
                for c, s in zip(chapters, starts, strict=True)
            ]
            text = format_words(joined(offsets), str(self.options.subtitles))
            _write(folder / subs, lambda path: write_text_atomic(path, text))
        elif subs is not None:
            cues = [
                cue
                for out, start in zip(chapters, starts, strict=True)
                for cue in cues_for(out.timeline, offset=start)
            ]
            _write(folder / subs, lambda path: write_subtitles(path, cues, self.note()))
        self.record[name] = {"key": key}
        self.store.save_outputs(self.record)
        self.say(f"wrote {folder / name} ({len(chapters)} chapter marks)")

    def _loudness_note(self) -> str:
        if self.options.loudness is None:
            return ""
        return (
            f"; each chapter normalised to {self.options.loudness:g} LUFS "
            f"(true peak at most {self.options.peak:g} dBTP)"
        )

    def _listing(
        self,
        chapters: list[ChapterOutput],
        starts: list[int],
        total: int,
        audiobook: str | None,
        subs: str | None,
    ) -> dict[str, Any]:
        job, o = self.job, self.options
        return {
            "book": job.book.title,
            "source": str(job.source) if job.source else None,
            "made_by": self.note(),
            "random_weights": job.random_weights,
            "format": o.format,
            "sample_rate": SAMPLE_RATE,
            "audiobook": audiobook,
            "audiobook_subtitles": subs,
            "duration": total / SAMPLE_RATE,
            "pause_seconds": job.request.pause_seconds,
            "chapter_pause_seconds": o.chapter_pause,
            "loudness": None
            if o.loudness is None
            else {"target_lufs": o.loudness, "peak_ceiling_dbtp": o.peak, "per": "chapter"},
            "settings": job.settings_record(),
            "chapters": [
                {
                    "number": out.number + 1,
                    "title": out.title,
                    "file": out.file,
                    "subtitles": out.subtitles,
                    "start": start / SAMPLE_RATE,
                    "duration": out.seconds,
                    "segments": out.segments,
                    "loudness": out.loudness,
                    **self._word_counts(out.number),
                }
                for out, start in zip(chapters, starts, strict=True)
            ],
            "skipped_chapters": job.skipped,
            "read_along": self.read_along,
        }

    # -- word timings ------------------------------------------------------------------------
    def _word_counts(self, number: int) -> dict[str, Any]:
        words = self.words.get(number)
        if words is None:
            return {}
        return {"words": len(words.words), "estimated_words": words.estimated}

    def _read_along(self, source: Path, chapters: list[ChapterOutput]) -> Path | None:
        """The EPUB read-along beside the chapters (render/readalong.py), remade only when its
        inputs changed; a book that cannot carry one is a warning, not an error."""
        from chattts_studio.core.render.readalong import (
            ChapterAudio,
            ReadAlongError,
            write_read_along,
        )

        folder = self.job.folder
        name = f"{safe_name(source.stem, 'book')} read-along.epub"
        try:
            stat = source.stat()
        except OSError as exc:
            raise StudioError(not_written(folder / name, exc)) from None
        key = digest(
            [self.record.get(c.file, {}).get("key") for c in chapters],
            [self.words[c.number].to_json() for c in chapters],
            str(source.resolve()), stat.st_size, stat.st_mtime_ns,
        )  # fmt: skip
        kept = self.record.get(name, {})
        if kept.get("key") == key and (folder / name).is_file():
            self.read_along = kept.get("read_along")
            return folder / name
        parts = [ChapterAudio(c.number, folder / c.file, self.words[c.number]) for c in chapters]
        work = self.store.store / "read-along"
        try:
            work.mkdir(exist_ok=True)
            made = write_read_along(source, folder / name, parts, work)
        except (ReadAlongError, zipfile.BadZipFile, KeyError, ValueError) as exc:
            # The book's own make-up (or a file changed since it was read): the render stands.
            reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            self.job.stats.warnings.append(f"no read-along EPUB: {reason}")
            return None
        except (OSError, RuntimeError) as exc:  # RuntimeError: libsndfile's
            raise StudioError(not_written(folder / name, exc)) from None
        finally:
            for leftover in work.glob("*") if work.is_dir() else []:
                leftover.unlink(missing_ok=True)
        self.read_along = {
            "file": name,
            "overlays": made.overlays,
            "words": made.words,
            "estimated_words": made.estimated,
            "documents_without_overlay": made.skipped,
        }
        for skipped in made.skipped:
            self.job.stats.warnings.append(f"read-along: {skipped} has no overlay")
        self.record[name] = {"key": key, "read_along": self.read_along}
        self.store.save_outputs(self.record)
        note = f", {made.estimated} estimated" if made.estimated else ""
        self.say(f"wrote {folder / name} ({made.overlays} overlays, {made.words} words{note})")
        return folder / name
