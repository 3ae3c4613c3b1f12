"""chattts-studio-cli render BOOK -o FOLDER: a book to chapter files, an audiobook and
subtitles, resumable (run the same command again after a kill or Ctrl+C), through the
render-a-book service; a manifest (.jsonl, .csv) goes to cli/manifest.py."""

import argparse
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from chattts_studio.core.cli.common import (
    EXIT_CANCELLED,
    add_engine_option,
    add_lexicon_option,
    add_voice_options,
    check_engine_choice,
    check_folder,
    check_speaker_arg,
    err,
    load_engine,
    request_from_args,
    set_threads,
    speaker_arg,
)
from chattts_studio.core.cli.progress import CommandProgress, facts, interrupt_cancels
from chattts_studio.core.cli.voice import add_voice_check_options, settle_for_model
from chattts_studio.core.engine.request import AUTO_BATCH_MAX, SynthesisRequest
from chattts_studio.core.errors import StudioError
from chattts_studio.core.messages import clock
from chattts_studio.core.render.book import FORMATS, RenderProgress

if TYPE_CHECKING:
    from chattts_studio.core.render.voice_guard import VoiceGuard
    from chattts_studio.core.services.render_book import BookPlan
    from chattts_studio.core.text.chapters import Book


def add_parser(sub: Any) -> None:
    """The `render` command's options (its model and decoding options are synth's; its help
    line is the registry's, in main.py)."""
    from chattts_studio.core.audio.loudness import DEFAULT_PEAK_DBTP, DEFAULT_TARGET_LUFS

    d = SynthesisRequest(text="")
    render = sub.add_parser(
        "render",
        description="Render a book, or a manifest of items, into FOLDER. Killed or stopped, the "
        "same command goes on where it stopped: finished segments are kept in FOLDER/.segments "
        "(a manifest's finished items in FOLDER).",
    )
    render.add_argument(
        "book",
        help="the book: .txt, .md or .epub (UTF-8 text); or a manifest: .jsonl or .csv with "
        "id, text, speaker and optional seed per item",
    )
    render.add_argument("-o", "--output", required=True, help="the folder to render into")
    render.add_argument(
        "--format",
        default="flac",
        choices=FORMATS,
        help="chapter files; m4b: .m4a chapters "
        "plus one .m4b audiobook with chapter marks (default: flac)",
    )
    render.add_argument(
        "--subtitles",
        choices=["srt", "vtt", "ass", "json"],
        help="also write subtitles beside each chapter: one cue a sentence (srt, vtt); with "
        "--word-timing word-level (vtt, srt, ass or json)",
    )
    render.add_argument(
        "--word-timing",
        action="store_true",
        help="word-level --subtitles: each segment aligned with its text; for an EPUB also a "
        "read-along copy of the book (EPUB 3 media overlays)",
    )
    render.add_argument(
        "--loudness",
        type=float,
        nargs="?",
        const=DEFAULT_TARGET_LUFS,
        default=None,
        metavar="LUFS",
        help=f"normalise each chapter to this loudness (default when given: "
        f"{DEFAULT_TARGET_LUFS:g} LUFS)",
    )
    render.add_argument(
        "--peak",
        type=float,
        default=DEFAULT_PEAK_DBTP,
        metavar="DBTP",
        help=f"true-peak ceiling for --loudness (default {DEFAULT_PEAK_DBTP:g} dBTP)",
    )
    _model_options(render, d)
    _ray_options(render)
    add_voice_check_options(
        render,
        "a book only: compare each segment's voice with the render's reference and make one "
        "that drifts again (--voice-tries times at most, the most alike kept)",
        flag="--voice-check",
    )
    render.add_argument("--voice-tries", type=int, default=3, metavar="N", help="default 3")
    render.add_argument(
        "--voice-reference",
        metavar="FILE",
        help="the voice to hold to (a speaker's preview or recording; default: the render's "
        "first segment long enough to judge)",
    )


def _model_options(render: Any, d: SynthesisRequest) -> None:
    """The model and decoding options, as synth's."""
    render.add_argument("--model", default="demo", help="as synth (default: demo)")
    render.add_argument("--device", default=None, help="as synth")
    render.add_argument(
        "--precision", default="fp32", choices=["fp32", "fp16", "bf16", "int8"], help="as synth"
    )
    add_engine_option(render, help="as synth; with --ray, the workers' (default: auto)")
    render.add_argument("--threads", type=int, default=None, help="CPU threads for torch")
    render.add_argument("--segment-size", type=int, default=d.segment_size)
    render.add_argument(
        "--batch-size",
        type=int,
        default=0,
        help=f"segments decoded together, and the size of a run group; 0 (default): "
        f"{AUTO_BATCH_MAX}",
    )
    add_voice_options(render)
    render.add_argument("--no-refine", action="store_true", help="skip ChatTTS's refine-text pass")
    add_lexicon_option(render)
    render.add_argument("--decoder", default="fast", choices=["fast", "stock"])


def _ray_options(render: Any) -> None:
    """A manifest's render on a Ray cluster."""
    render.add_argument(
        "--ray",
        nargs="?",
        const="",
        default=None,
        metavar="ADDRESS",
        help="a manifest only: render on a Ray cluster (HEAD:6379; none: RAY_ADDRESS or a "
        "local Ray instance); needs pip install 'chattts-studio[cluster]'",
    )
    render.add_argument(
        "--ray-cpus-per-actor",
        type=int,
        default=None,
        metavar="N",
        help="on a cluster without GPUs: CPUs per worker, each holding one model (default: "
        "--threads, else this machine's torch threads)",
    )
    render.add_argument(
        "--ray-actors", type=int, default=None, metavar="N", help="at most N Ray workers"
    )


class ProgressView:
    """A book render's progress through the shared CommandProgress (a bar on a terminal,
    plain lines otherwise), with the chapter it is in."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self.view = CommandProgress("segments", stream)

    def line(self, text: str) -> None:
        self.view.line(text)

    def __call__(self, p: RenderProgress) -> None:
        said = facts(p.audio_seconds, p.rtf, p.seconds_left)
        self.view.show(p.done, p.total, f"{said} (chapter {p.chapter}/{p.chapters})")
        if p.message:
            self.line(f"  warning: {p.message}")

    def close(self) -> None:
        self.view.close()


def _voice_guard(args: argparse.Namespace) -> "VoiceGuard | None":
    """--voice-check's guard, every option checked before the model loads; None without it."""
    if not args.voice:
        return None
    from chattts_studio.core.render.voice_guard import MAX_TRIES, VoiceGuard
    from chattts_studio.core.speaker import models
    from chattts_studio.core.speaker.compare import read_clip
    from chattts_studio.core.speaker.encoder import usable

    if not 1 <= args.voice_tries <= MAX_TRIES:
        raise StudioError(f"--voice-tries must be between 1 and {MAX_TRIES}.")
    settle_for_model(args)
    reference = Path(args.voice_reference) if args.voice_reference else None
    if reference is not None:
        usable(*read_clip(reference), str(reference))  # a bad clip is said now
    encoder = models.encoder(args.speaker_model, args.threads or 1)
    return VoiceGuard(encoder, args.voice_threshold, args.voice_tries, reference)


def _word_timing(args: argparse.Namespace, book: "Book") -> Any:
    """--word-timing's checks before the model loads, and what times Chinese words: the
    official recogniser when downloaded, else None (every Chinese word estimated)."""
    if not args.word_timing:
        if args.subtitles in ("ass", "json"):
            raise StudioError(f"--subtitles {args.subtitles} is word-level: add --word-timing.")
        return None
    from chattts_studio.core.align.sphinx import EnglishAligner
    from chattts_studio.core.align.words import language_of, text_words

    if args.subtitles is None:
        raise StudioError("--word-timing needs --subtitles vtt, srt, ass or json.")
    EnglishAligner.check()
    sample = "\n".join(c.text for c in book.chapters)[:20_000]
    try:
        chinese = language_of(text_words(sample)) == "zh"
    except StudioError:
        return None
    from chattts_studio.core.asr import models

    if not chinese:
        return None
    if not models.official_present():
        err("note: no speech recognition model: every Chinese word's time is estimated")
        return None
    from chattts_studio.core.asr.sensevoice import SenseVoice

    return SenseVoice(models.official_folder())


def run(args: argparse.Namespace) -> int:
    from chattts_studio.core.render.book import RenderOptions
    from chattts_studio.core.render.manifest.items import is_manifest
    from chattts_studio.core.services.render_book import (
        NothingToSpeak,
        RenderCancelled,
        render_book,
    )
    from chattts_studio.core.text.chapters import read_book

    if is_manifest(Path(args.book)):
        from chattts_studio.core.cli.manifest import render_manifest_command

        if args.voice:
            raise StudioError("--voice-check works on a book; a manifest's items are not checked.")
        if args.word_timing:
            raise StudioError("--word-timing works on a book; a manifest's items are not timed.")
        return render_manifest_command(args)
    if args.ray is not None:
        raise StudioError("--ray renders a manifest (.jsonl or .csv), not a book.")
    request = request_from_args(args, "")
    request.validate()
    set_threads(args.threads)
    check_engine_choice(args.device, args.precision, args.engine, args.decoder)
    if not -70.0 <= (args.loudness if args.loudness is not None else -16.0) <= 0.0:
        raise StudioError("The loudness target must be between -70 and 0 LUFS.")
    if not -20.0 <= args.peak <= 0.0:
        raise StudioError("The peak ceiling must be between -20 and 0 dBTP.")
    folder = Path(args.output)
    check_folder(folder)
    book = read_book(Path(args.book))  # a bad book fails before the model loads
    recognizer = _word_timing(args, book)
    check_speaker_arg(args.speaker)  # so does an unknown speaker
    options = RenderOptions(
        format=args.format,
        subtitles=args.subtitles,
        loudness=args.loudness,
        peak=args.peak,
        group_size=args.batch_size or AUTO_BATCH_MAX,
        voice=_voice_guard(args),
        word_timing=args.word_timing,
        recognizer=recognizer,
    )
    engine = load_engine(args.model, args.device, args.precision, args.engine)
    voice, seed = speaker_arg(args.speaker, engine)
    request = replace(request, voice=voice, seed=seed if seed is not None else args.seed)
    view = ProgressView()

    def planned(plan: "BookPlan") -> None:
        err(
            f"{plan.title}: {plan.chapters} chapter(s), {plan.total} segment(s), "
            f"run groups of {plan.group_size}; {plan.kept} segment(s) already in {folder}"
        )
        for title in plan.skipped:
            err(f"  skipped (nothing to speak): {title}")

    with interrupt_cancels() as token:
        try:
            done = render_book(
                engine,
                book,
                request,
                folder,
                options,
                source=Path(args.book),
                cancel=token,
                on_plan=planned,
                on_progress=view,
                on_line=view.line,
            )
        except NothingToSpeak:
            raise StudioError(f"The book {args.book} has nothing ChatTTS can speak.") from None
        except RenderCancelled as stop:
            view.line(
                f"cancelled: {stop.done} of {stop.total} segments are kept in {folder}; "
                "run the same command to go on"
            )
            return EXIT_CANCELLED
        finally:
            view.close()
    for warning in done.warnings:
        err(f"warning: {warning}")
    note = " (random demo weights: noise, not speech)" if done.random_weights else ""
    rtf = f", RTF {done.rtf:.3f}" if done.rtf is not None else ""
    print(
        f"rendered {folder}: {len(done.chapter_files)} chapter(s), {clock(done.audio_seconds)} "
        f"of audio; {done.made} segment(s) made{rtf}, {done.kept} kept from before{note}"
    )
    if options.voice is not None:
        held = done.voice_reference or "no segment long enough to judge yet"
        print(f"voice check: {done.voice_rerolled} segment(s) made again; reference: {held}")
    for path in done.book_files:
        print(f"  {path}")
    return 0
