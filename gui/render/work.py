"""A render queue job's work, run by the worker with the engine it already holds: the spec's
book (a file, or the editor's text) rendered by the render-a-book service
(chattts_studio.core.services.render_book), its progress said in the window's words. No Qt
here: progress goes out through a plain callback."""

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from chattts_studio.core.engine.cancel import CancelToken
from chattts_studio.core.engine.request import AUTO_BATCH_MAX
from chattts_studio.core.errors import StudioError
from chattts_studio.core.messages import clock
from chattts_studio.core.project import store
from chattts_studio.core.render.names import safe_name
from chattts_studio.core.text.chapters import Book, read_book, text_chapters
from chattts_studio.gui.i18n import translate
from chattts_studio.gui.worker.jobs import RenderDone, RenderSpec

if TYPE_CHECKING:
    from chattts_studio.core.engine.engine import Engine
    from chattts_studio.core.render.book import RenderProgress
    from chattts_studio.core.services.render_book import BookPlan

Report = Callable[[str, float, str], None]  # stage, fraction (0..1), detail


def progress_line(p: "RenderProgress") -> str:
    """One line of a render's progress (made on the worker thread: translate() is safe)."""
    return translate(
        "RenderWork",
        "{done}/{total} segments, {audio} of audio, RTF {rtf}, {left} left (chapter "
        "{chapter}/{chapters})",
    ).format(
        done=p.done,
        total=p.total,
        audio=clock(p.audio_seconds),
        rtf=f"{p.rtf:.2f}" if p.rtf is not None else "-",
        left=clock(p.seconds_left),
        chapter=p.chapter,
        chapters=p.chapters,
    )


def book_of(spec: RenderSpec) -> Book:
    if spec.source is not None:
        return read_book(spec.source)
    book = text_chapters(spec.text, spec.title or translate("RenderQueue", "Text"))
    if not book.chapters:
        raise StudioError(translate("RenderWork", "The text has nothing to read."))
    return book


PROJECT_FORMATS = ("wav", "flac", "ogg", "mp3")  # what a project exports to (no m4b)


def export_project(spec: RenderSpec, report: Report) -> RenderDone:
    """A segment editor's project in the queue: its chosen takes in order with their pauses
    (no model runs: they are made), in the queue's format and subtitles, in the job's folder."""
    import soundfile as sf

    from chattts_studio.core.project import reading

    assert spec.source is not None
    project = store.load(spec.source)  # a damaged or newer one: its sentence
    fmt = spec.options.format if spec.options.format in PROJECT_FORMATS else "flac"
    warnings = []
    if fmt != spec.options.format:
        warnings.append(
            translate("RenderWork", "A project is exported as FLAC, not {format}.").format(
                format=spec.options.format
            )
        )
    folder = Path(spec.folder)
    folder.mkdir(parents=True, exist_ok=True)
    out = folder / f"{safe_name(spec.title or spec.source.stem, 'project')}.{fmt}"
    subtitles = out.with_suffix(f".{spec.options.subtitles}") if spec.options.subtitles else None
    report("render", 0.0, translate("RenderWork", "Exporting the project's chosen takes"))
    files = reading.export(spec.source, out, subtitles)
    seconds = sf.info(str(out)).duration
    report("render", 1.0, translate("RenderWork", "Exported"))
    return RenderDone(folder, files, 0, len(project.segments), seconds, warnings)


def run_render(
    engine: "Engine", spec: RenderSpec, cancel: CancelToken, report: Report
) -> RenderDone:
    """Render the spec's book into its folder; raises Cancelled once what was finished is
    kept there (the same job later resumes from it), StudioError for a bad book or folder."""
    from chattts_studio.core.services.render_book import NothingToSpeak, render_book

    if spec.source is not None and spec.source.suffix == store.SUFFIX:  # a project
        return export_project(spec, report)
    if engine.loaded is None:
        raise StudioError(translate("RenderWork", "No model is loaded: load one before rendering."))
    book = book_of(spec)
    request = spec.request
    if request.speaker is None and spec.speaker_seed is not None:
        request = replace(request, speaker=engine.sample_speaker(spec.speaker_seed))
    options = spec.options
    if not options.group_size:
        options = replace(options, group_size=request.batch_size or AUTO_BATCH_MAX)

    def planned(plan: "BookPlan") -> None:
        said = translate("RenderWork", "{kept}/{total} segments kept").format(
            kept=plan.kept, total=plan.total
        )
        report("render", plan.kept / plan.total if plan.total else 0.0, said)

    def progress(p: "RenderProgress") -> None:
        report("render", p.done / p.total if p.total else 1.0, progress_line(p))

    try:
        done = render_book(
            engine,
            book,
            request,
            Path(spec.folder),
            options,
            source=spec.source,
            cancel=cancel,
            on_plan=planned,
            on_progress=progress,
            on_line=lambda line: report("render", -1.0, line),
        )
    except NothingToSpeak:
        raise StudioError(
            translate("RenderWork", "{title} has nothing ChatTTS can speak.").format(
                title=book.title
            )
        ) from None
    return RenderDone(
        done.folder, done.files, done.made, done.kept, done.audio_seconds, done.warnings
    )
