"""chattts-studio-cli project: a text as a project of segments with takes, re-rolled, picked,
edited, locked and exported (core/services/project.py). Every subcommand and option:
docs/projects.md ("From the command line").
"""

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from chattts_studio.core.cli import voice as voice_options
from chattts_studio.core.cli.common import (
    DEMO_RECOGNIZER_NOTE,
    add_asr_model_option,
    add_engine_option,
    add_lexicon_option,
    add_voice_options,
    check_engine_choice,
    check_speaker_arg,
    engine_for_project,
    err,
    lexicon_entries,
    load_engine,
    read_text,
    recognizer_arg,
    set_threads,
    speaker_arg,
)
from chattts_studio.core.cli.progress import TakesProgress, cancel_on_interrupt
from chattts_studio.core.cli.project import checks
from chattts_studio.core.errors import StudioError


def _model_options(parser: argparse.ArgumentParser, defaults: bool) -> None:
    """The model to load; for an existing project, its own when not given."""
    parser.add_argument(
        "--model", default="demo" if defaults else None, help="demo, demo-full, official, a folder"
    )
    parser.add_argument("--device", default=None, help="cpu, cuda, cuda:N or mps")
    parser.add_argument(
        "--precision",
        default="fp32" if defaults else None,
        choices=["fp32", "fp16", "bf16", "int8"],
    )
    add_engine_option(parser)
    if not defaults:
        parser.set_defaults(engine=None)
    parser.add_argument("--threads", type=int, default=None, help="CPU threads for torch")


def add_parser(sub: Any) -> None:
    project = sub.add_parser("project")
    actions = project.add_subparsers(dest="action", required=True)

    new = actions.add_parser("new", help="a text made into a project of segments with takes")
    new.add_argument("text", nargs="?", help="the text to speak")
    new.add_argument("--file", help="read the text from a UTF-8 file")
    new.add_argument(
        "--script", help="a dialogue script: 'Name: text' lines voiced by library speakers"
    )
    new.add_argument(
        "--turn-pause", type=float, default=0.4, help="seconds before each line of a --script"
    )
    new.add_argument("-o", "--output", required=True, help="the project folder (NAME.chattts)")
    new.add_argument("--takes", type=int, default=1, help="takes of each segment (default 1)")
    new.add_argument("--segment-size", type=int, default=50)
    new.add_argument(
        "--best", choices=["flags", "asr"], default="flags",
        help="which take is chosen: the fewest flags, or also checked by speech recognition",
    )  # fmt: skip
    add_asr_model_option(new)
    voice_options.add_voice_check_options(
        new, "with --takes: the voice check weighs in on the best take"
    )
    _model_options(new, defaults=True)
    add_voice_options(new)
    add_lexicon_option(new)

    listed = actions.add_parser("list", help="segments, chosen take, takes, flags, locks")
    listed.add_argument("project")
    listed.add_argument("--json", action="store_true", help="machine-readable")

    _checking_parsers(actions)
    pick = actions.add_parser("pick", help="choose a segment's take by hand")
    pick.add_argument("project")
    pick.add_argument("segment", type=int)
    pick.add_argument("take", type=int)

    edit = actions.add_parser("edit", help="new text for one segment, made again")
    edit.add_argument("project")
    edit.add_argument("segment", type=int)
    edit.add_argument("text")
    edit.add_argument(
        "--seed", type=int, default=None, help="seeds from this (default: the project's)"
    )
    _model_options(edit, defaults=False)
    add_lexicon_option(edit)

    split = actions.add_parser("split", help="cut a segment in two (both made again)")
    split.add_argument("project")
    split.add_argument("segment", type=int)
    split.add_argument("at", type=int, help="how many characters the first part keeps")

    merge = actions.add_parser("merge", help="join a segment and the next one")
    merge.add_argument("project")
    merge.add_argument("segment", type=int)

    speaker = actions.add_parser("speaker", help="another library speaker for some segments")
    speaker.add_argument("project")
    speaker.add_argument("segments", help="numbers like 3,7-9")
    speaker.add_argument("name", help="a speaker of the library (speakers list)")

    for name, what in (("lock", "never re-rolled or edited"), ("unlock", "free again")):
        lock = actions.add_parser(name, help=f"segments {what}")
        lock.add_argument("project")
        lock.add_argument("segments", help="numbers like 3,7-9")

    export = actions.add_parser("export", help="the chosen takes with their pauses, to a file")
    export.add_argument("project")
    export.add_argument("output", help=".wav, .flac, .ogg or .mp3; a folder with --per-segment")
    export.add_argument("--subtitles", help="also write subtitles: .srt or .vtt")
    export.add_argument("--per-segment", action="store_true", help="one WAV per segment")
    export.add_argument("--float", action="store_true", help="32-bit float WAV")


def _checking_parsers(actions: Any) -> None:
    """`project check` and `project reroll`: hearing takes and making new ones."""
    check = actions.add_parser(
        "check",
        help="speech recognition of the chosen takes, scored against their text; with --voice, "
        "their voices compared with their voice's reference",
    )
    check.add_argument("project")
    check.add_argument("segments", nargs="?", default="", help="like 3,7-9 (default: all)")
    check.add_argument("--all-takes", action="store_true", help="every take, not only the chosen")
    add_asr_model_option(check)
    voice_options.add_voice_check_options(check, "the voice check instead of speech recognition")
    check.add_argument("--threads", type=int, default=None, help="CPU threads")
    check.add_argument("--json", action="store_true", help="machine-readable")

    reroll = actions.add_parser("reroll", help="new takes of some segments (earlier ones stay)")
    reroll.add_argument("project")
    reroll.add_argument("segments", nargs="?", help="numbers like 3,7-9")
    reroll.add_argument("--takes", type=int, default=1, help="new takes of each (default 1)")
    reroll.add_argument("--flagged", action="store_true", help="every flagged segment too")
    reroll.add_argument("--unlocked", action="store_true", help="every segment not locked")
    reroll.add_argument(
        "--seed", type=int, default=None, help="seeds from this (default: the project's)"
    )
    reroll.add_argument(
        "--until-clean",
        action="store_true",
        help="with --flagged: one take at a time, checked by speech recognition, until clean",
    )
    reroll.add_argument("--max-tries", type=int, default=3, help="--until-clean's limit")
    add_asr_model_option(reroll)
    voice_options.add_voice_check_options(
        reroll, "with --until-clean: the voice check's flag counts too"
    )
    _model_options(reroll, defaults=False)
    add_lexicon_option(reroll)

    checks.add_reference_parser(actions)


def _new(args: argparse.Namespace) -> int:
    from chattts_studio.core.project import store
    from chattts_studio.core.project.edits import check_takes
    from chattts_studio.core.project.model import TakeSettings
    from chattts_studio.core.services.project import Line, new_project, new_project_for
    from chattts_studio.core.text.prepare import check_text
    from chattts_studio.core.voices.voice import Voice

    text = read_text(args)
    lines: tuple[Line, ...] = ()
    if args.script is not None:
        from chattts_studio.core.text.dialogue import read_script, voices_for
        from chattts_studio.core.voices.speakers import SpeakerLibrary

        # The script and its speakers are checked before the model loads.
        turns = read_script(Path(args.script))
        voices = voices_for(turns, {e.name: e.voice for e in SpeakerLibrary().entries})
        lines = tuple(Line(t.name, voices[t.name], t.text) for t in turns)
    else:
        text = check_text(text)
        check_speaker_arg(args.speaker)  # an unknown name before the model loads
    folder = store.check_new(args.output)
    check_takes(args.takes)
    # What a project keeps, said before the model loads (its ranges: core/project/checked.py).
    store.check_settings(
        TakeSettings(args.temperature, args.top_p, args.top_k, args.speed),
        args.pause,
        args.turn_pause,
    )
    recognizer, demo = recognizer_arg(args) if args.best == "asr" else (None, False)
    voice_options.settle_for_model(args)
    lexicon = lexicon_entries(args)
    set_threads(args.threads)
    check_engine_choice(args.device, args.precision, args.engine)
    engine = load_engine(args.model, args.device, args.precision, args.engine)
    voice, seed = speaker_arg(args.speaker, engine)
    seed = seed if seed is not None else args.seed
    spec = new_project_for(
        engine,
        text,
        voice or Voice(embedding=engine.sample_speaker(seed)),
        TakeSettings(args.temperature, args.top_p, args.top_k, args.speed),
        segment_size=args.segment_size,
        pause=args.pause,
        takes=args.takes,
        seed=args.seed,
        lines=lines,
        turn_pause=args.turn_pause,
        lexicon=lexicon,
    )
    token = cancel_on_interrupt()
    made = new_project(engine, folder, spec, token, TakesProgress())
    if recognizer is not None or args.voice:  # best of N by the checks
        checks.best_of_new(args, made, recognizer, token)
    project = store.load(made)
    note = ""
    if engine.loaded is not None and engine.loaded.info.random_weights:
        note = " (random demo weights: noise, not speech)"
    note += DEMO_RECOGNIZER_NOTE if demo else ""
    print(f"wrote {made}: {len(project.segments)} segment(s), {args.takes} take(s) each{note}")
    return 0


def _list(args: argparse.Namespace) -> int:
    from chattts_studio.core.project import store
    from chattts_studio.core.project.flags import FLAG_NAMES
    from chattts_studio.core.project.reading import listing
    from chattts_studio.core.text.lexicon import LexiconError, LexiconStore

    project = store.load(args.project)
    try:  # today's dictionary: a changed entry marks the takes it reads otherwise as stale
        entries: tuple[tuple[str, str], ...] | None = LexiconStore().lexicon().entries
    except LexiconError as exc:
        err(f"warning: {exc}; stale marks leave the dictionary out")
        entries = None
    rows = listing(project, entries)
    if args.json:
        json.dump({"title": project.title, "segments": rows}, sys.stdout, ensure_ascii=False)
        print()
        return 0
    for row in rows:
        chosen = next((t for t in row["takes"] if t["take"] == row["chosen"]), None)
        marks = ("L" if row["locked"] else " ") + ("P" if row["picked"] else " ")
        seconds = f"{chosen['seconds']:6.2f} s" if chosen else "   -    "
        names = [FLAG_NAMES.get(f["kind"], f["kind"]) for f in chosen["flags"]] if chosen else []
        flagged = ", ".join(names) if chosen else "no take"
        print(
            f"{row['index']:4d} {marks} take {row['chosen'] or '-'}/{len(row['takes'])} "
            f"{seconds}  {row['text']}" + (f"  [{flagged}]" if flagged else "")
        )
    return 0


def _reroll(args: argparse.Namespace) -> int:
    from chattts_studio.core.project import store
    from chattts_studio.core.project.edits import check_takes, parse_numbers, refuse_locked
    from chattts_studio.core.services.project import reroll

    path = store.project_folder(args.project)
    project = store.load(path)
    if not args.segments and not args.flagged and not args.unlocked:
        raise StudioError(
            "Name the segments to re-roll (like 3,7-9), or give --flagged or --unlocked."
        )
    if args.until_clean:
        return checks.until_clean(args, path)
    check_takes(args.takes)  # checked before the model loads
    if args.segments:
        refuse_locked(project, parse_numbers(args.segments, len(project.segments)))
    lexicon = lexicon_entries(args)
    engine = engine_for_project(args, path)
    numbers = reroll(
        engine, path, args.segments, args.takes, args.flagged, args.seed, None,
        cancel_on_interrupt(), TakesProgress(), lexicon, args.unlocked,
    )  # fmt: skip
    print(f"re-rolled {len(numbers)} segment(s): {', '.join(map(str, numbers)) or 'none'}")
    return 0


def _edit(args: argparse.Namespace) -> int:
    from chattts_studio.core.project import store
    from chattts_studio.core.project.edits import parse_numbers, refuse_locked
    from chattts_studio.core.services.project import edit
    from chattts_studio.core.text.prepare import check_text

    path = store.project_folder(args.project)
    project = store.load(path)
    refuse_locked(project, parse_numbers(str(args.segment), len(project.segments)))
    check_text(args.text)
    lexicon = lexicon_entries(args)
    engine = engine_for_project(args, path)
    edit(
        engine,
        path,
        args.segment,
        args.text,
        args.seed,
        cancel_on_interrupt(),
        TakesProgress(),
        lexicon,
    )
    print(f"segment {args.segment} made again")
    return 0


def _warn(path: str) -> None:
    """What reading the project left out (a take record that does not read), one `warning:`
    line each on stderr; a missing or damaged project is the command's one error sentence."""
    from chattts_studio.core.project import store

    for warning in store.load(path).warnings:
        err(f"warning: {warning}")


def run(args: argparse.Namespace) -> int:
    from chattts_studio.core.project import edits, reading

    if args.action == "new":
        return _new(args)
    _warn(args.project)
    if args.action == "list":
        return _list(args)
    if args.action == "check":
        return checks.check(args)
    if args.action == "reference":
        return checks.reference(args)
    if args.action == "reroll":
        return _reroll(args)
    if args.action == "edit":
        return _edit(args)
    if args.action == "pick":
        edits.pick(Path(args.project), args.segment, args.take)
        print(f"segment {args.segment}: take {args.take} chosen")
        return 0
    if args.action == "split":
        edits.split(Path(args.project), args.segment, args.at)
        print(f"segment {args.segment} cut in two; make both with project reroll")
        return 0
    if args.action == "merge":
        edits.merge(Path(args.project), args.segment)
        print(f"segments {args.segment} and {args.segment + 1} joined; make it with project reroll")
        return 0
    if args.action == "speaker":
        from chattts_studio.core.voices.speakers import SpeakerLibrary

        entry = SpeakerLibrary().get(args.name)
        if entry is None:
            raise StudioError(f"There is no speaker named '{args.name}' in the library.")
        numbers = edits.set_voice(Path(args.project), args.segments, entry.voice, entry.name)
        print(f"segment(s) {', '.join(map(str, numbers))} now read by {entry.name}")
        return 0
    if args.action in ("lock", "unlock"):
        numbers = edits.set_locked(Path(args.project), args.segments, args.action == "lock")
        print(f"{args.action}ed segment(s) {', '.join(map(str, numbers))}")
        return 0
    from chattts_studio.core.audio.output import check_output_path
    from chattts_studio.core.audio.subtitles import check_subtitle_path

    output = Path(args.output)
    if not args.per_segment:
        check_output_path(output)
    subtitles = Path(args.subtitles) if args.subtitles else None
    if subtitles is not None:
        check_subtitle_path(subtitles)
    written = reading.export(Path(args.project), output, subtitles, args.per_segment, args.float)
    print(f"wrote {', '.join(map(str, written[:3]))}" + (" ..." if len(written) > 3 else ""))
    return 0
