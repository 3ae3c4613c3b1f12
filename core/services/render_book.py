"""Rendering a book into a folder: planned (segments and run groups, what the folder already
holds), its missing segments made and kept as they are finished, each chapter assembled as
soon as its segments are all there, then the audiobook file and the chapter list. Stopped at
any moment, the same call resumes from what the folder holds (core/render/book.py)."""

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from chattts_studio.core.engine.cancel import CancelToken
from chattts_studio.core.engine.request import SynthesisRequest
from chattts_studio.core.errors import Cancelled, StudioError
from chattts_studio.core.render.book import RenderJob, RenderOptions, RenderProgress
from chattts_studio.core.render.output import Assembler
from chattts_studio.core.text.chapters import Book

if TYPE_CHECKING:
    from chattts_studio.core.engine.engine import Engine


class NothingToSpeak(StudioError):
    """No chapter of the book has anything ChatTTS can speak (the front ends word it)."""

    def __init__(self, title: str) -> None:
        super().__init__(f"{title} has nothing ChatTTS can speak.")
        self.title = title


class RenderCancelled(Cancelled):
    """Cancelled once what was finished is kept: `done` of `total` segments are in the folder."""

    def __init__(self, done: int, total: int) -> None:
        super().__init__(f"{done} of {total} segments kept")
        self.done, self.total = done, total


@dataclass(frozen=True)
class BookPlan:
    """What the render will do, known before any segment is made."""

    title: str
    chapters: int  # chapters with something to speak
    total: int  # their segments
    kept: int  # of those, already in the folder
    group_size: int
    skipped: list[str] = field(default_factory=list)  # chapter titles with nothing to speak


@dataclass(frozen=True)
class BookRendered:
    folder: Path
    chapter_files: list[Path]
    book_files: list[Path]  # the audiobook (m4b) and the chapter list
    made: int  # segments made by this call
    kept: int  # segments kept from before
    audio_seconds: float  # of every chapter
    made_audio_seconds: float
    made_wall_seconds: float
    warnings: list[str]
    random_weights: bool
    voice_rerolled: int = 0  # segments the voice check made again (render/voice_guard.py)
    voice_reference: str = ""  # what it held them to; "" without the check

    @property
    def files(self) -> list[Path]:
        return self.chapter_files + self.book_files

    @property
    def rtf(self) -> float | None:
        """Compute seconds per second of audio made by this call (None: nothing made)."""
        if not self.made_audio_seconds:
            return None
        return self.made_wall_seconds / self.made_audio_seconds


def render_book(
    engine: "Engine",
    book: Book,
    request: SynthesisRequest,
    folder: Path,
    options: RenderOptions,
    *,
    source: Path | None = None,
    cancel: CancelToken | None = None,
    on_plan: Callable[[BookPlan], None] | None = None,
    on_progress: Callable[[RenderProgress], None] | None = None,
    on_line: Callable[[str], None] | None = None,
) -> BookRendered:
    """Render `book` (read from `source`, when it came from a file) into `folder` with the
    request's settings. NothingToSpeak before any work for a book with nothing to speak;
    RenderCancelled once what was finished is kept."""
    token = cancel or CancelToken()
    job = RenderJob(engine, book, request, Path(folder), options, source)
    job.plan()
    if not job.chapters:
        raise NothingToSpeak(book.title)
    with job.store:
        job.refresh()
        if on_plan is not None:
            on_plan(
                BookPlan(
                    book.title,
                    len(job.chapters),
                    job.total_segments,
                    _kept(job),
                    options.group_size,
                    list(job.skipped),
                )
            )
        assembler = Assembler(job, token, say=on_line)
        try:
            stats = job.run(token, on_progress, on_chapter=assembler.chapter)
            book_files = assembler.book()
        except Cancelled:
            raise RenderCancelled(_kept(job), job.total_segments) from None
    chapters = list(assembler.done.values())
    return BookRendered(
        Path(folder),
        [Path(folder) / out.file for out in chapters],
        book_files,
        stats.made,
        stats.kept,
        sum(out.seconds for out in chapters),
        stats.made_audio_seconds,
        stats.made_wall_seconds,
        list(stats.warnings),
        job.random_weights,
        stats.voice_rerolled,
        stats.voice_reference,
    )


def _kept(job: RenderJob) -> int:
    return sum(e is not None for ch in job.chapters for e in ch.entries)
