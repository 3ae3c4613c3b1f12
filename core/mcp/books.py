"""The render_book tool: a book file from an allowed folder, or a long text, rendered into a folder
inside the output folder, with MCP progress notifications. A cancel keeps every finished segment,
so the same call later resumes.
"""

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
import anyio.to_thread
from mcp import types

from chattts_studio.core.engine.cancel import CancelToken
from chattts_studio.core.engine.request import SynthesisRequest
from chattts_studio.core.errors import StudioError
from chattts_studio.core.mcp.arguments import Arguments, BadArgument
from chattts_studio.core.mcp.folders import BookFolders, OutputFolder, PathRefused
from chattts_studio.core.mcp.progress import ProgressFeed, reported
from chattts_studio.core.mcp.replies import answered
from chattts_studio.core.mcp.settings import (
    VOICE_ARGUMENTS,
    VoiceAsk,
    read_voice,
    request_for,
    voice_schema,
    writes_files,
)
from chattts_studio.core.mcp.slot import RENDER, EngineSlot
from chattts_studio.core.render.book import FORMATS, RenderOptions, RenderProgress
from chattts_studio.core.render.names import safe_name
from chattts_studio.core.services.render_book import BookRendered

if TYPE_CHECKING:
    from mcp.server.context import ServerRequestContext

    from chattts_studio.core.engine.engine import Engine
    from chattts_studio.core.services.render_book import BookPlan
    from chattts_studio.core.text.chapters import Book

TOOL = RENDER
MOST_CHARS = 100_000  # a text given in the call; a longer book is a file in a books folder
SUBTITLES = ("srt", "vtt")
ARGUMENTS = ("text", "book", "title", "folder", "format", "subtitles", *VOICE_ARGUMENTS)


def definition() -> types.Tool:
    return types.Tool(
        name=TOOL,
        title="Render a book",
        description=(
            "Render a long text, or a book file (.txt, .md, .epub) from a books folder the "
            "user allowed, into one audio file per chapter in a folder inside the output "
            "folder (chapters are found from headings such as 'Chapter 1' or '第一章'). "
            "Reports progress as it goes; cancelling stops it with the finished segments "
            "kept, and the same call later goes on where it stopped."
        ),
        input_schema={
            "type": "object",
            "properties": {
                "text": {
                    "type": "string",
                    "minLength": 1,
                    "maxLength": MOST_CHARS,
                    "description": "The text to render (give this or book).",
                },
                "book": {
                    "type": "string",
                    "description": "A book file's path, inside a books folder the server was "
                    "started with (--books); relative paths are read from that folder.",
                },
                "title": {
                    "type": "string",
                    "description": "The book's title, for a text (default: 'Text').",
                },
                "folder": {
                    "type": "string",
                    "description": "The folder inside the output folder to render into "
                    "(default: named after the title or the book's file).",
                },
                "format": {
                    "type": "string",
                    "enum": list(FORMATS),
                    "default": "flac",
                    "description": "The chapter files' format; m4b: .m4a chapters and one "
                    ".m4b audiobook with chapter marks.",
                },
                "subtitles": {
                    "type": "string",
                    "enum": list(SUBTITLES),
                    "description": "Also write subtitles beside each chapter, one cue a sentence.",
                },
                **voice_schema(refine_default=True),
            },
            "additionalProperties": False,
        },
        annotations=writes_files("Render a book", idempotent=True),
    )


@dataclass(frozen=True)
class BookAsk:
    text: str | None
    book: str | None
    title: str
    folder: str | None
    format: str
    subtitles: str | None
    voice: VoiceAsk


def read(arguments: dict[str, Any] | None) -> BookAsk:
    args = Arguments(TOOL, arguments, ARGUMENTS)
    text = args.text("text", MOST_CHARS, "; put a longer book in a books folder and name it")
    book = args.name("book")
    if (text is None) == (book is None):
        raise BadArgument("render_book takes a text or a book, one of the two.")
    title = args.name("title")
    fmt = args.choice("format", FORMATS, "flac")
    return BookAsk(
        text=text,
        book=book,
        title=" ".join((title or "").split()),
        folder=args.name("folder"),
        format=fmt or "flac",
        subtitles=args.choice("subtitles", SUBTITLES, None),
        voice=read_voice(args, refine_default=True),
    )


def book_for(ask: BookAsk, books: BookFolders) -> tuple["Book", Path | None]:
    """The book to render and the file it came from (None for a text)."""
    from chattts_studio.core.text.chapters import read_book, text_chapters

    if ask.book is not None:
        source = books.book(ask.book)
        return read_book(source), source
    assert ask.text is not None
    from chattts_studio.core.text.prepare import check_text

    check_text(ask.text)
    book = text_chapters(ask.text, ask.title or "Text")
    if not book.chapters:
        raise StudioError("The text has nothing to read.")
    return book, None


def folder_for(output: OutputFolder, ask: BookAsk, book: "Book", source: Path | None) -> Path:
    name = ask.folder or safe_name(ask.title or (source.stem if source else book.title), "book")
    folder = output.place(name, "my-book")
    if folder.exists() and not folder.is_dir():
        raise PathRefused(f"{name!r} is a file in the output folder; give a folder's name.")
    return folder


def render(
    engine: "Engine",
    book: "Book",
    request: SynthesisRequest,
    folder: Path,
    options: RenderOptions,
    source: Path | None,
    feed: ProgressFeed,
    token: CancelToken,
) -> "BookRendered":
    """The render itself, in the engine's worker thread."""
    from chattts_studio.core.services.render_book import NothingToSpeak, render_book

    def planned(plan: "BookPlan") -> None:
        feed.set(plan.kept, plan.total, f"{plan.kept}/{plan.total} segments kept from before")

    def progress(p: "RenderProgress") -> None:
        feed.set(p.done, p.total, f"{p.done}/{p.total} segments, chapter {p.chapter}/{p.chapters}")

    try:
        return render_book(
            engine,
            book,
            request,
            folder,
            options,
            source=source,
            cancel=token,
            on_plan=planned,
            on_progress=progress,
        )
    except NothingToSpeak:
        raise StudioError(f"{book.title} has nothing ChatTTS can speak.") from None


async def call(
    slot: EngineSlot,
    output: OutputFolder,
    books: BookFolders,
    arguments: dict[str, Any] | None,
    ctx: "ServerRequestContext[Any, Any]",
) -> types.CallToolResult:
    """Everything checked (the book read, the folder placed) before the engine is asked."""
    ask = read(arguments)
    request = request_for("", ask.voice)
    book, source = await anyio.to_thread.run_sync(book_for, ask, books)  # an EPUB takes a while
    folder = folder_for(output, ask, book, source)
    options = RenderOptions(format=ask.format, subtitles=ask.subtitles)
    feed = ProgressFeed()
    done, turn = await reported(
        feed,
        ctx,
        slot,
        lambda: slot.run(
            TOOL,
            lambda engine, token: render(
                engine, book, request, folder, options, source, feed, token
            ),
        ),
    )
    rel = folder.relative_to(output.root).as_posix()
    summary = (
        f"Rendered {book.title}: {len(done.chapter_files)} chapter file(s), "
        f"{done.audio_seconds:.1f} s of audio, in {folder}; {done.made} segment(s) made, "
        f"{done.kept} kept from before."
    )
    facts = {
        "folder": str(folder),
        "name": rel,
        "title": book.title,
        "chapter_files": [str(p) for p in done.chapter_files],
        "book_files": [str(p) for p in done.book_files],
        "audio_seconds": round(done.audio_seconds, 3),
        "segments_made": done.made,
        "segments_kept": done.kept,
        "warnings": list(done.warnings),
        "waited_seconds": round(turn.waited_seconds, 3),
    }
    return answered(summary, facts, demo=done.random_weights)
