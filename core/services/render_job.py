"""A render queue job: a book (a file, or a text given as one) rendered into its folder by
render_book, or a segment editor's project exported there, with the model already loaded. Its
progress is reported as `Progress` events whose details are sentences."""

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from chattts_studio.core.engine.cancel import CancelToken
from chattts_studio.core.engine.request import AUTO_BATCH_MAX, SynthesisRequest
from chattts_studio.core.errors import StudioError
from chattts_studio.core.messages import QT_TRANSLATE_NOOP, Sentence, clock
from chattts_studio.core.project import store
from chattts_studio.core.render.names import safe_name
from chattts_studio.core.services.report import Progress, Report
from chattts_studio.core.speaker.encoder import THRESHOLD
from chattts_studio.core.text.chapters import Book, read_book, text_chapters

if TYPE_CHECKING:
    from chattts_studio.core.engine.engine import Engine
    from chattts_studio.core.render.book import RenderOptions, RenderProgress
    from chattts_studio.core.services.render_book import BookPlan

PROJECT_FORMATS = ("wav", "flac", "ogg", "mp3")  # what a project exports to (no m4b)
VOICE_THRESHOLD = THRESHOLD  # the voice check's similarity below which a segment is made again


@dataclass(frozen=True)
class RenderSpec:
    """A render job: a book file, a text as a book, or a project's chosen takes."""

    request: SynthesisRequest  # every setting; its text is not used
    folder: Path
    options: "RenderOptions"
    source: Path | None = None  # .txt, .md, .epub or a project; None: `text`
    text: str = ""
    title: str = ""
    speaker_seed: int | None = None  # the speaker of this seed when request.speaker is None
    voice_check: bool = False  # a book's segments held to its voice (render/voice_guard.py)
    voice_tries: int = 3  # how many times the check makes a drifting segment again


@dataclass(frozen=True)
class RenderDone:
    """What a finished render made: its files, and how many segments it made or kept."""

    folder: Path
    files: list[Path]
    made: int
    kept: int
    audio_seconds: float
    warnings: list[str] = field(default_factory=list)
    voice_checked: bool = False  # the voice check ran (a book asked for it; no project export)
    voice_rerolled: int = 0  # segments it made again because their voice drifted


def progress_line(p: "RenderProgress") -> Sentence:
    return Sentence(
        QT_TRANSLATE_NOOP(
            "core",
            "{done}/{total} segments, {audio} of audio, RTF {rtf}, {left} left (chapter "
            "{chapter}/{chapters})",
        ),
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
    book = text_chapters(spec.text, spec.title or Sentence(QT_TRANSLATE_NOOP("core", "Text")))
    if not book.chapters:
        raise StudioError(Sentence(QT_TRANSLATE_NOOP("core", "The text has nothing to read.")))
    return book


def export_project(spec: RenderSpec, report: Report) -> RenderDone:
    """A project in the queue: its chosen takes in order with their pauses (no model runs:
    they are made), in the queue's format and subtitles, in the job's folder."""
    import soundfile as sf

    from chattts_studio.core.project import reading

    assert spec.source is not None
    project = store.load(spec.source)  # a damaged or newer one: its sentence
    fmt = spec.options.format if spec.options.format in PROJECT_FORMATS else "flac"
    warnings: list[str] = []
    if fmt != spec.options.format:
        warnings.append(
            Sentence(
                QT_TRANSLATE_NOOP("core", "A project is exported as FLAC, not {format}."),
                format=spec.options.format,
            )
        )
    folder = Path(spec.folder)
    folder.mkdir(parents=True, exist_ok=True)
    out = folder / f"{safe_name(spec.title or spec.source.stem, 'project')}.{fmt}"
    subtitles = out.with_suffix(f".{spec.options.subtitles}") if spec.options.subtitles else None
    exporting = QT_TRANSLATE_NOOP("core", "Exporting the project's chosen takes")
    report(Progress("render", 0.0, Sentence(exporting)))
    files = reading.export(spec.source, out, subtitles)
    seconds = sf.info(str(out)).duration
    report(Progress("render", 1.0, Sentence(QT_TRANSLATE_NOOP("core", "Exported"))))
    return RenderDone(folder, files, 0, len(project.segments), seconds, warnings)


def run_render(
    engine: "Engine", spec: RenderSpec, cancel: CancelToken, report: Report
) -> RenderDone:
    """Render the spec's book into its folder; raises Cancelled once what was finished is
    kept there (the same job later resumes from it), StudioError for a bad book or folder.
    With the voice check, the speaker encoder is chosen for the loaded model and let go after
    the render."""
    from chattts_studio.core.render.voice_guard import VoiceGuard
    from chattts_studio.core.services import project_job
    from chattts_studio.core.services.render_book import NothingToSpeak, render_book

    if spec.source is not None and spec.source.suffix == store.SUFFIX:  # a project
        return export_project(spec, report)
    if engine.loaded is None:
        raise StudioError(
            Sentence(QT_TRANSLATE_NOOP("core", "No model is loaded: load one before rendering."))
        )
    book = book_of(spec)
    request = spec.request
    if request.speaker is None and spec.speaker_seed is not None:
        request = replace(request, speaker=engine.sample_speaker(spec.speaker_seed))
    options = spec.options
    if not options.group_size:
        options = replace(options, group_size=request.batch_size or AUTO_BATCH_MAX)
    encoder = project_job.speaker_for(engine) if spec.voice_check else None  # or its sentence
    if encoder is not None:
        guard = VoiceGuard(encoder, threshold=VOICE_THRESHOLD, tries=spec.voice_tries)
        options = replace(options, voice=guard)

    def planned(plan: "BookPlan") -> None:
        said = Sentence(
            QT_TRANSLATE_NOOP("core", "{kept}/{total} segments kept"),
            kept=plan.kept,
            total=plan.total,
        )
        report(Progress("render", plan.kept / plan.total if plan.total else 0.0, said))

    def progress(p: "RenderProgress") -> None:
        report(Progress("render", p.done / p.total if p.total else 1.0, progress_line(p)))

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
            on_line=lambda line: report(Progress("render", -1.0, line)),
        )
    except NothingToSpeak:
        raise StudioError(
            Sentence(
                QT_TRANSLATE_NOOP("core", "{title} has nothing ChatTTS can speak."),
                title=book.title,
            )
        ) from None
    finally:
        if encoder is not None:
            encoder.unload()
    return RenderDone(
        done.folder,
        done.files,
        done.made,
        done.kept,
        done.audio_seconds,
        done.warnings,
        voice_checked=encoder is not None,
        voice_rerolled=done.voice_rerolled,
    )
