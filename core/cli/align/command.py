"""chattts-studio-cli align AUDIO [TEXT | --file PATH]: each word's start and end in the audio, as a
table, JSON or word-level subtitles. Through core/align; see docs/alignment.md.
"""

import argparse
import sys
from pathlib import Path
from typing import Any

from chattts_studio.core.cli.common import err

SUFFIXES = {".json": "json", ".vtt": "vtt", ".srt": "srt", ".ass": "ass"}


def add_parser(sub: Any) -> None:
    align = sub.add_parser("align")
    align.add_argument("audio", type=Path, help="the speech: .wav, .flac, .ogg or .mp3")
    align.add_argument("text", nargs="?", help="what the audio says")
    align.add_argument("--file", help="read the text from a UTF-8 file")
    align.add_argument(
        "--language",
        default="auto",
        choices=["auto", "en", "zh"],
        help="auto (default): Chinese when a third of the words are Chinese characters",
    )
    align.add_argument("--json", action="store_true", help="the same as --format json")
    align.add_argument(
        "--format",
        choices=["table", "json", "vtt", "srt", "ass"],
        default=None,
        help="table (default on stdout), json, vtt (a timestamp before each word), srt (a "
        "group of words a cue) or ass (karaoke \\k tags); with -o, the file's extension",
    )
    align.add_argument("-o", "--output", type=Path, help="write to this file instead of stdout")
    align.add_argument(
        "--asr-model",
        default="auto",
        help="what times Chinese: auto (default: the official recogniser when downloaded, else "
        "every word estimated), official ('model download-asr'), demo (random weights) or a "
        "folder",
    )


def _kind(args: argparse.Namespace) -> str:
    from chattts_studio.core.errors import StudioError

    if args.json:
        if args.format not in (None, "json"):
            raise StudioError("Give --json or --format, not both.")
        return "json"
    if args.format is not None:
        return str(args.format)
    if args.output is None:
        return "table"
    kind = SUFFIXES.get(args.output.suffix.lower())
    if kind is None:
        raise StudioError(
            f"Cannot tell the format of {args.output}: name it .json, .vtt, .srt or .ass, or "
            "give --format."
        )
    return kind


def _text(args: argparse.Namespace) -> str:
    from chattts_studio.core.errors import StudioError
    from chattts_studio.core.messages import cannot_read, not_text

    if (args.text is None) == (args.file is None):
        raise StudioError("Give the text the audio says, or --file PATH (one of them).")
    if args.file is None:
        return str(args.text)
    try:
        return Path(args.file).read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise StudioError(not_text(args.file)) from None
    except OSError as exc:
        raise StudioError(cannot_read(args.file, exc)) from None


def _recognizer(name: str, language: str) -> Any:
    """The recogniser that times Chinese, or None (every word estimated)."""
    if language == "en":
        return None
    from chattts_studio.core.asr import models
    from chattts_studio.core.asr.sensevoice import SenseVoice

    if name == "auto":
        if not models.official_present():
            err("note: no speech recognition model: every Chinese word's time is estimated")
            return None
        name = models.OFFICIAL
    recognizer = SenseVoice(models.recognizer_folder(name))
    if recognizer.name != SenseVoice.name:
        err("note: the demo recogniser has random weights: it hears noise, not the words")
    return recognizer


def run(args: argparse.Namespace) -> int:
    from chattts_studio.core.align.aligner import align, read_audio
    from chattts_studio.core.align.cues import format_words, write_words
    from chattts_studio.core.align.words import language_of, text_words
    from chattts_studio.core.atomic import target_problem
    from chattts_studio.core.errors import StudioError

    kind = _kind(args)
    text = _text(args)
    language = language_of(text_words(text), args.language)
    if args.output is not None:
        if kind == "table":
            raise StudioError("A table is for the terminal: give -o a .json, .vtt, .srt or .ass.")
        problem = target_problem(args.output, example="speech.vtt")
        if problem:
            raise StudioError(problem)
    audio, rate = read_audio(args.audio)
    got = align(audio, rate, text, language, _recognizer(args.asr_model, language))
    if got.estimated:
        err(
            f"note: {got.estimated} of {len(got.words)} word times are estimated "
            "(interpolated between the measured ones, not heard)"
        )
    if args.output is not None:
        write_words(args.output, got, kind)
        print(f"wrote {args.output}: {len(got.words)} words, {got.method}")
        return 0
    if kind != "table":
        sys.stdout.write(format_words(got, kind))
        return 0
    print(f"# {got.language}, {got.method}; * estimated")
    for word in got.words:
        mark = "*" if word.estimated else " "
        print(f"{word.start:8.3f} {word.end:8.3f} {mark} {word.text}")
    return 0
