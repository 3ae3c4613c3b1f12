"""Long-form rendering: a book's chapters to audio files in a folder, resumable at any moment.

Segments are made in run groups of `group_size`, each one engine job seeded from (seed, chapter,
first segment), so a group's audio depends only on its own texts and the settings. Each finished
segment is kept at once (core/render/segment_store.py); a resumed render skips complete groups
and remakes a cut one from its start with the same seed, so the result equals an uninterrupted
run's. Chapters are then assembled from the kept segments and the book files written
(core/render/output.py)."""

import dataclasses
import hashlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from chattts_studio.core import SAMPLE_RATE
from chattts_studio.core.engine.cancel import CancelToken
from chattts_studio.core.engine.request import JobPlan, SynthesisRequest
from chattts_studio.core.errors import BadTextError
from chattts_studio.core.render.segment_store import Entry, SegmentStore, audio_digest, digest
from chattts_studio.core.render.voice_guard import (
    Judged,
    VoiceGuard,
    VoiceWatch,
    segment_name,
    voice_note,
)
from chattts_studio.core.text.chapters import Book
from chattts_studio.core.text.lexicon import Lexicon
from chattts_studio.core.text.prepare import Segment, split_segments
from chattts_studio.core.voices.voice import Voice
from chattts_studio.core.weights.models import weights_identity

if TYPE_CHECKING:
    from chattts_studio.core.align.recognised import TimedRecognizer
    from chattts_studio.core.engine.engine import Engine

FORMATS = ("flac", "wav", "mp3", "ogg", "m4b")
CHAPTER_PAUSE_SECONDS = 1.0  # silence between chapters in the audiobook file


def group_seed(seed: int, chapter: int, first: int) -> int:
    """The engine seed of the run group that starts at segment `first` of `chapter`."""
    data = f"chattts-studio render {seed} {chapter} {first}".encode()
    return int.from_bytes(hashlib.sha256(data).digest()[:4], "big") & 0x7FFFFFFF


@dataclass(frozen=True)
class RenderOptions:
    format: str = "flac"  # of the chapter files; m4b: .m4a chapters plus one .m4b book
    subtitles: str | None = None  # "srt" or "vtt"; with word_timing also "ass" or "json"
    loudness: float | None = None  # target LUFS; None: no normalisation
    peak: float = -1.0  # true-peak ceiling, dBTP
    group_size: int = 16  # segments per run group (and batch)
    chapter_pause: float = CHAPTER_PAUSE_SECONDS
    voice: VoiceGuard | None = None  # the voice check and its re-rolls; None: off
    # Word-level subtitles, and an EPUB's read-along (render/words.py, render/readalong.py).
    word_timing: bool = False
    recognizer: "TimedRecognizer | None" = None  # times Chinese words; None: estimated


@dataclass
class PlannedChapter:
    number: int  # 0-based, in the book (chapters with nothing to say keep their number)
    title: str
    segments: list[Segment]
    text_hashes: list[str]
    group_hashes: list[str]  # one per segment: the hash of the group it belongs to
    entries: list[Entry | None] = field(default_factory=list)

    def groups(self, size: int) -> list[tuple[int, int]]:
        return [(i, min(i + size, len(self.segments))) for i in range(0, len(self.segments), size)]

    @property
    def done(self) -> bool:
        return all(e is not None for e in self.entries)


@dataclass(frozen=True)
class RenderProgress:
    """Sent after every segment made."""

    done: int  # segments finished (kept ones included)
    total: int
    chapter: int  # 1-based
    chapters: int
    audio_seconds: float  # audio finished so far, all of it
    made_audio_seconds: float  # made in this run
    made_wall_seconds: float  # compute spent on it in this run
    seconds_left: float | None  # estimate
    message: str = ""

    @property
    def rtf(self) -> float | None:
        if not self.made_audio_seconds:
            return None
        return self.made_wall_seconds / self.made_audio_seconds


Progress = Callable[[RenderProgress], None]


@dataclass
class RenderStats:
    made: int = 0
    kept: int = 0
    remade: int = 0  # kept segments decoded again with their group
    mismatched: int = 0  # of those, how many came out different (another device, ...)
    made_audio_seconds: float = 0.0
    made_wall_seconds: float = 0.0
    voice_rerolled: int = 0  # segments made again because their voice drifted
    voice_reference: str = ""  # what the voice check held them to
    warnings: list[str] = field(default_factory=list)


class Tally:
    """A render run's counts as segments are kept: what is done, the audio made, and the time
    left (the estimated speech still to make at this run's rate so far), each kept segment
    stored and said (with its notes) as it comes."""

    def __init__(self, run: "RenderJob", report: Progress) -> None:
        self.run, self.report = run, report
        entries = [
            (s, e) for ch in run.chapters for s, e in zip(ch.segments, ch.entries, strict=True)
        ]
        self.left_est = sum(s.est_seconds for s, e in entries if e is None)
        self.made_est = 0.0
        self.done = sum(e is not None for _s, e in entries)
        self.audio = sum(e.samples for _s, e in entries if e) / SAMPLE_RATE
        self.started = time.perf_counter()
        self.assembling = 0.0  # time spent assembling chapters: not part of the figures
        run.stats.kept = self.done

    def send(self, position: int, message: str = "") -> None:
        stats = self.run.stats
        wall = time.perf_counter() - self.started - self.assembling
        stats.made_wall_seconds = wall
        left = self.left_est * wall / self.made_est if self.made_est else None
        self.report(
            RenderProgress(
                self.done,
                self.run.total_segments,
                position + 1,
                len(self.run.chapters),
                self.audio,
                stats.made_audio_seconds,
                wall,
                left,
                message,
            )
        )

    def keep(
        self,
        position: int,
        ch: PlannedChapter,
        i: int,
        made: np.ndarray,
        hit_cap: bool,
        judged: Judged | None,
    ) -> None:
        run, stats = self.run, self.run.stats
        voice, tries = (judged.similarity, judged.tries) if judged else (None, 0)
        ch.entries[i] = run.store.add(
            ch.number, i, ch.text_hashes[i], ch.group_hashes[i], run.settings, made,
            voice, tries,
        )  # fmt: skip
        seconds = len(made) / SAMPLE_RATE
        self.done += 1
        stats.made += 1
        self.audio += seconds
        stats.made_audio_seconds += seconds
        self.made_est += ch.segments[i].est_seconds
        self.left_est -= ch.segments[i].est_seconds
        notes = []
        if hit_cap:
            notes.append(
                f"segment {i + 1} of chapter {ch.number + 1} reached the step cap: its "
                "speech may be cut short; lower --segment-size"
            )
        if tries:
            stats.voice_rerolled += 1
            notes.append(voice_note(ch.number, i, judged))
        stats.warnings.extend(notes)
        self.send(position, "; ".join(notes))


class RenderJob:
    """One book into one folder: plan(), then, with the store open, refresh() and run() (the
    segments); render_output.Assembler writes the outputs."""

    def __init__(
        self,
        engine: "Engine",
        book: Book,
        request: SynthesisRequest,
        folder: Path,
        options: RenderOptions,
        source: Path | None = None,
    ) -> None:
        self.engine = engine
        self.book = book
        self.request = request  # every setting; its text is not used
        self.folder = Path(folder)
        self.options = options
        self.source = source
        self.chapters: list[PlannedChapter] = []
        self.skipped: list[str] = []
        self.speaker = ""
        self.voice: Voice | None = None
        self.settings = ""
        self.stats = RenderStats()
        self.store = SegmentStore(self.folder)

    @property
    def random_weights(self) -> bool:
        loaded = self.engine.loaded
        return bool(loaded and loaded.info.random_weights)

    def settings_record(self) -> dict[str, object]:
        """Everything that shapes a segment's audio besides its text and group."""
        r = self.request
        loaded = self.engine.loaded
        record: dict[str, object] = {
            "version": 1,
            "model": loaded.info.name if loaded else None,
            "precision": loaded.precision.value if loaded else None,
            # Other weights in the same folder (the same model name) make other audio.
            "weights": weights_identity(loaded.info) if loaded else None,
            "speaker": self.speaker,
            "seed": r.seed,
            "temperature": r.temperature,
            "top_p": r.top_p,
            "top_k": r.top_k,
            "refine_text": r.refine_text,
            "speed": r.speed,
            "oral": r.oral,
            "laugh": r.laugh,
            "break": r.break_level,
            "segment_size": r.segment_size,
            "decoder": r.decoder,
            "group_size": self.options.group_size,
        }
        if self.voice is not None and self.voice.cloned:
            # Only then: the records (and so the kept segments) of earlier renders stay valid.
            record["voice"] = self.voice.key()
        if self.options.voice is not None:  # likewise: its re-rolls make other audio
            record["voice_check"] = self.options.voice.record()
        return record

    # -- planning --------------------------------------------------------------------------
    def plan(self) -> None:
        """Segments and groups of every chapter, and what the folder already holds."""
        self.request.validate()
        r = self.request
        self.voice = self.engine.resolve_voice(r)
        self.speaker = self.voice.embedding
        self.settings = digest(self.settings_record())
        lexicon = Lexicon(r.lexicon) if r.lexicon else None
        self.chapters, self.skipped = [], []
        for number, chapter in enumerate(self.book.chapters):
            try:
                segments = split_segments(chapter.text, r.segment_size, lexicon)
            except BadTextError:
                self.skipped.append(chapter.title)
                continue
            texts = [digest(s.text) for s in segments]
            groups: list[str] = []
            for first in range(0, len(segments), self.options.group_size):
                last = min(first + self.options.group_size, len(segments))
                groups += [digest(first, texts[first:last])] * (last - first)
            self.chapters.append(PlannedChapter(number, chapter.title, segments, texts, groups))

    def refresh(self) -> None:
        """What the store already holds for the plan."""
        for ch in self.chapters:
            ch.entries = [
                self.store.find(ch.number, i, ch.text_hashes[i], ch.group_hashes[i], self.settings)
                for i in range(len(ch.segments))
            ]

    @property
    def total_segments(self) -> int:
        return sum(len(ch.segments) for ch in self.chapters)

    # -- making the segments ---------------------------------------------------------------
    def run(
        self,
        cancel: CancelToken,
        progress: Progress | None = None,
        on_chapter: Callable[[PlannedChapter], object] | None = None,
    ) -> RenderStats:
        """Make every segment the folder does not hold yet, group by group; `on_chapter` is
        called as each chapter's segments are all there (to assemble it). Raises Cancelled
        once what was finished is kept."""
        tally = Tally(self, progress or (lambda _p: None))
        keep = tally.keep
        stats = self.stats
        watch = VoiceWatch(self.options.voice) if self.options.voice is not None else None
        if watch is not None:
            self._reference_from_kept(watch)
        for position, ch in enumerate(self.chapters):
            for first, last in ch.groups(self.options.group_size):
                if all(ch.entries[i] is not None for i in range(first, last)):
                    continue
                fresh: dict[int, tuple[np.ndarray, bool]] = {}
                for result in self.engine.synthesize(
                    self._group_plan(ch, first, last), cancel=cancel
                ):
                    if result.partial:
                        continue
                    i = first + result.index
                    kept = ch.entries[i]
                    if kept is not None:  # decoded again with its group: the kept file stays
                        stats.remade += 1
                        if kept.audio != audio_digest(result.audio):
                            stats.mismatched += 1
                        continue
                    if watch is None:
                        keep(position, ch, i, result.audio, result.hit_cap, None)
                    else:  # judged once the group is made (the reference may be in it)
                        fresh[i] = (result.audio, result.hit_cap)
                if watch is not None:
                    self._offer_reference(
                        watch, ch, first, last,
                        lambda i: keep(position, ch, i, *fresh.pop(i), None),  # noqa: B023
                    )  # fmt: skip
                    for i, (made, hit_cap) in sorted(fresh.items()):
                        judged = watch.judge(made, self._remaker(ch, i, first, cancel))
                        keep(position, ch, i, judged.audio, hit_cap, judged)
            if on_chapter is not None:
                begun = time.perf_counter()
                on_chapter(ch)
                tally.assembling += time.perf_counter() - begun
        if watch is not None:
            stats.voice_reference = watch.source
        if stats.mismatched:
            stats.warnings.append(
                f"{stats.mismatched} kept segment(s) came out differently when their group was "
                "made again (another device or thread count?): the kept audio was used"
            )
        return stats

    def _reference_from_kept(self, watch: VoiceWatch) -> None:
        """A resumed render's reference: the first kept segment long enough, in book order,
        as long as every segment before it is kept (else it is found as they are made)."""
        for ch in self.chapters:
            for i, entry in enumerate(ch.entries):
                if entry is None or watch.offer(self.store.read(entry), segment_name(ch.number, i)):
                    return

    def _offer_reference(
        self,
        watch: VoiceWatch,
        ch: PlannedChapter,
        first: int,
        last: int,
        keep_now: Callable[[int], None],
    ) -> None:
        """No reference yet: the group's first segment long enough, in order, read back from
        the store (as a resumed render will read it). Segments before it are too short to
        judge, so they are kept as made; `keep_now` keeps one just made."""
        for i in range(first, last):
            if watch.reference is not None:
                return
            if ch.entries[i] is None:
                keep_now(i)
            entry = ch.entries[i]
            if entry is not None:
                watch.offer(self.store.read(entry), segment_name(ch.number, i))

    def _remaker(
        self, ch: PlannedChapter, i: int, first: int, cancel: CancelToken
    ) -> Callable[[int], np.ndarray]:
        """Segment `i` made alone, each try with a seed of its own drawn from its group's."""

        def remake(attempt: int) -> np.ndarray:
            segment = dataclasses.replace(ch.segments[i], index=0)
            base = group_seed(self.request.seed, ch.number, first)
            request = dataclasses.replace(
                self.request,
                text=segment.text,
                speaker=self.speaker,
                seed=group_seed(base, i, attempt),
                batch_size=1,
            )
            plan = JobPlan(request, (segment,), 1, self.speaker, self.voice)
            results = self.engine.synthesize(plan, cancel=cancel)
            return next(r.audio for r in results if not r.partial)

        return remake

    def _group_plan(self, ch: PlannedChapter, first: int, last: int) -> JobPlan:
        segments = tuple(
            dataclasses.replace(s, index=n) for n, s in enumerate(ch.segments[first:last])
        )
        request = dataclasses.replace(
            self.request,
            text="".join(s.text for s in segments),
            speaker=self.speaker,
            seed=group_seed(self.request.seed, ch.number, first),
            batch_size=len(segments),
        )
        return JobPlan(request, segments, len(segments), self.speaker, self.voice)
