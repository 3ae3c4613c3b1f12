"""The project command's checks: `project check` (speech recognition, or the voice check with
--voice), `project reroll --flagged --until-clean`, best of N, and `project reference`, which
marks the take the voice check compares its voice's other takes with."""

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from chattts_studio.core.cli.common import (
    DEMO_RECOGNIZER_NOTE,
    engine_for_project,
    err,
    lexicon_entries,
    recognizer_arg,
)
from chattts_studio.core.cli.progress import TakesProgress, cancel_on_interrupt
from chattts_studio.core.errors import StudioError

if TYPE_CHECKING:
    from chattts_studio.core.services.heard_takes import VoiceChecker
    from chattts_studio.core.speaker.encoder import SpeakerEncoder

DEMO_SPEAKER_NOTE = " (demo speaker model, random weights: its similarities judge noise)"


def speaker_encoder(args: argparse.Namespace, path: Path) -> "SpeakerEncoder":
    """The --speaker-model's encoder; auto takes the demo model only for a project whose
    takes are all of random (demo) weights, where any judgement is of noise."""
    from chattts_studio.core.cli.voice import settle_voice_check
    from chattts_studio.core.project import store
    from chattts_studio.core.speaker import models

    takes = [t for s in store.load(path).segments for t in s.takes]
    settle_voice_check(args, bool(takes) and all(t.maker.random_weights for t in takes))
    return models.encoder(args.speaker_model, getattr(args, "threads", None) or 1)


def voice_checker(args: argparse.Namespace, path: Path) -> "VoiceChecker | None":
    """The voice check the re-roll loops run (None without --voice)."""
    if not args.voice:
        return None
    from chattts_studio.core.services import heard_takes
    from chattts_studio.core.services.project_check import library_clips
    from chattts_studio.core.voices.speakers import SpeakerLibrary

    encoder = speaker_encoder(args, path)
    return heard_takes.voice_checker(encoder, args.voice_threshold, library_clips(SpeakerLibrary()))


def check(args: argparse.Namespace) -> int:
    from chattts_studio.core.project import store

    path = store.project_folder(args.project)
    store.load(path)  # a missing or damaged project: one sentence before the model
    if args.voice:
        return _check_voices(args, path)
    from chattts_studio.core.asr.score import percent
    from chattts_studio.core.project.reading import printable
    from chattts_studio.core.services.project_check import check_project

    recognizer, demo = recognizer_arg(args)
    checked = check_project(path, recognizer, args.segments, args.all_takes, cancel_on_interrupt())
    note = DEMO_RECOGNIZER_NOTE if demo else ""
    if args.json:
        rows = [{"index": n, "take": t, "asr": got.to_json()} for n, t, got in checked]
        json.dump({"checked": rows, "demo": demo}, sys.stdout, ensure_ascii=False)
        print()
        return 0
    for n, take, got in checked:
        shown = printable(got.transcript)
        print(f"{n:4d} take {take}: {percent(got.score):>5} differs  {shown}")
    print(f"checked {len(checked)} take(s){note}")
    return 0


def _check_voices(args: argparse.Namespace, path: Path) -> int:
    from chattts_studio.core.services.project_check import check_voices, library_clips
    from chattts_studio.core.voices.speakers import SpeakerLibrary

    encoder = speaker_encoder(args, path)
    clips = library_clips(SpeakerLibrary())
    run = check_voices(
        path, encoder, args.segments, args.all_takes, cancel_on_interrupt(),
        threshold=args.voice_threshold, clips=clips,
    )  # fmt: skip
    if args.json:
        body: dict[str, Any] = {
            "threshold": args.voice_threshold,
            "checked": [{"index": n, "take": t, "voice": c.to_json()} for n, t, c in run.checked],
            "skipped": [{"index": n, "take": t, "why": why} for n, t, why in run.skipped],
            "demo": encoder.demo,
        }
        json.dump(body, sys.stdout, ensure_ascii=False)
        print()
        return 0
    for n, take, got in run.checked:
        verdict = "same" if got.same else "DRIFTS"
        print(f"{n:4d} take {take}: {got.similarity:6.3f} {verdict:6}  vs {got.reference}")
    for n, take, why in run.skipped:
        err(f"segment {n} take {take} not checked: {why}")
    note = DEMO_SPEAKER_NOTE if encoder.demo else ""
    print(f"voice-checked {len(run.checked)} take(s) at threshold {args.voice_threshold:g}{note}")
    return 0


def until_clean(args: argparse.Namespace, path: Path) -> int:
    from chattts_studio.core.project.edits import MAX_TRIES
    from chattts_studio.core.services.heard_takes import reroll_until_clean

    if not args.flagged or args.segments or args.unlocked or args.takes != 1:
        raise StudioError("--until-clean re-rolls the flagged segments one take at a time: give "
                          "it with --flagged alone.")  # fmt: skip
    if not 1 <= args.max_tries <= MAX_TRIES:
        raise StudioError(f"--max-tries must be between 1 and {MAX_TRIES}.")
    recognizer, demo = recognizer_arg(args)
    voices = voice_checker(args, path)
    engine = engine_for_project(args, path)
    tries = reroll_until_clean(
        engine, path, recognizer, args.max_tries, args.seed, cancel_on_interrupt(), TakesProgress(),
        lexicon_entries(args), voices,
    )  # fmt: skip
    from chattts_studio.core.project import store
    from chattts_studio.core.project.reading import flagged_numbers

    left = flagged_numbers(store.load(path))
    done = ", ".join(f"{n} ({t} {'try' if t == 1 else 'tries'})" for n, t in tries.items())
    print(f"re-rolled: {done or 'none'}; still flagged: {', '.join(map(str, left)) or 'none'}"
          + (DEMO_RECOGNIZER_NOTE if demo else ""))  # fmt: skip
    return 0


def best_of_new(args: argparse.Namespace, made: Path, recognizer: Any, cancel: Any) -> None:
    """A new project's best of N: every take checked (heard, and compared by voice with
    --voice), the best chosen (heard_takes.best_by_check)."""
    from chattts_studio.core.project import writer
    from chattts_studio.core.services.heard_takes import best_by_check
    from chattts_studio.core.services.project_check import check_project

    if recognizer is not None:
        check_project(made, recognizer, all_takes=True, cancel=cancel)
    voices = voice_checker(args, made)
    if voices is not None:
        voices(made, "", cancel)
    with writer.opened(made) as handle:
        best_by_check(handle.project, handle.project.segments)
        handle.save()


def add_reference_parser(actions: Any) -> None:
    reference = actions.add_parser(
        "reference", help="mark a take as its voice's reference for the voice check"
    )
    reference.add_argument("project")
    reference.add_argument("segment", type=int)
    reference.add_argument("take", type=int, nargs="?", help="default: the chosen take")


def reference(args: argparse.Namespace) -> int:
    from chattts_studio.core.project.edits import mark_reference

    take = mark_reference(Path(args.project), args.segment, args.take)
    print(f"segment {args.segment}: take {take} is its voice's reference; "
          "run project check --voice to compare the others with it")  # fmt: skip
    return 0
