"""chattts-studio-cli speakers list | sample | add | remove | rename | export | import |
stability: the speaker library; `add` keeps a voice through the keep-a-voice service;
`stability` ranks candidates by how steady their voice stays (core/speaker/stability.py)."""

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from chattts_studio.core.cli.common import err, load_engine
from chattts_studio.core.cli.voice import add_voice_check_options, settle_for_model
from chattts_studio.core.errors import BadTextError, StudioError
from chattts_studio.core.voices.speakers import SpeakerLibrary
from chattts_studio.core.voices.voice import Voice

if TYPE_CHECKING:
    from chattts_studio.core.engine.engine import Engine


def add_parser(sub: Any) -> None:
    speakers = sub.add_parser("speakers")
    ssub = speakers.add_subparsers(dest="action", required=True)
    ssub.add_parser("list")
    sample = ssub.add_parser("sample", help="print the speaker embedding of a seed")
    sample.add_argument("--seed", type=int, required=True)
    sample.add_argument("--model", default="demo")
    add = ssub.add_parser(
        "add", help="keep a voice: from a seed, an embedding, or a recording (--from-audio)"
    )
    add.add_argument("name")
    add.add_argument("--seed", type=int)
    add.add_argument("--embedding")
    add.add_argument(
        "--from-audio", metavar="FILE", help="clone the voice of a 3-30 s WAV/FLAC/OGG/MP3 clip"
    )
    add.add_argument("--transcript", help="what is said in the --from-audio clip, word for word")
    add.add_argument(
        "--keep-recording",
        action="store_true",
        help="also keep the clip itself (24 kHz FLAC) beside the library",
    )
    add.add_argument("--no-preview", action="store_true", help="do not make a preview clip")
    add.add_argument("--replace", action="store_true", help="give an existing name this voice")
    add.add_argument("--note", default="")
    add.add_argument("--model", default="demo")
    add.add_argument("--device", default=None)
    remove = ssub.add_parser("remove")
    remove.add_argument("name")
    rename = ssub.add_parser("rename")
    rename.add_argument("name")
    rename.add_argument("new_name")
    export = ssub.add_parser("export")
    export.add_argument("path")
    export.add_argument("names", nargs="*")
    imp = ssub.add_parser("import")
    imp.add_argument("path")
    stable = ssub.add_parser(
        "stability",
        help="how steady each candidate's voice stays over a few short lines (the voice check)",
    )
    stable.add_argument("names", nargs="*", help="library speakers (default: --seeds or --count)")
    stable.add_argument("--seeds", default="", help="seeds like 3,42,1000")
    stable.add_argument("--count", type=int, default=0, help="this many random seeds")
    stable.add_argument("--lines", default="", help="the lines to read, separated by |")
    stable.add_argument("--sort", action="store_true", help="the steadiest first")
    stable.add_argument("--json", action="store_true", help="machine-readable")
    stable.add_argument("--model", default="demo")
    stable.add_argument("--device", default=None)
    add_voice_check_options(stable, None)


def add_speaker(args: argparse.Namespace, library: SpeakerLibrary) -> int:
    from chattts_studio.core.services.keep_voice import (
        VoiceSource,
        check_name_free,
        keep_new_voice,
    )

    sources = [args.seed is not None, args.embedding is not None, args.from_audio is not None]
    if sum(sources) != 1:
        raise StudioError("Give one of --seed N, --embedding STRING or --from-audio FILE.")
    if (args.transcript is not None) != (args.from_audio is not None):
        raise StudioError("--from-audio FILE needs --transcript TEXT (what is said in it).")
    check_name_free(library, args.name, args.replace)  # before any work
    clip = None
    if args.from_audio is not None:
        from chattts_studio.core.text.prepare import check_text
        from chattts_studio.core.voices.clone import read_clip

        clip = read_clip(Path(args.from_audio))  # a bad clip fails before the model loads
        try:
            check_text(args.transcript)
        except BadTextError as exc:
            raise StudioError(f"The transcript cannot be used: {exc}") from None
    engine = load_engine(args.model, args.device)
    source = VoiceSource(args.seed, args.embedding, clip, args.transcript or "")
    entry = keep_new_voice(
        library,
        engine,
        args.name,
        source,
        note=args.note,
        replace=args.replace,
        preview=not args.no_preview,
        keep_recording=args.keep_recording,
    )
    kind = "cloned from a recording" if entry.cloned else "from an embedding"
    print(f"added speaker '{entry.name}' ({kind})")
    if entry.preview:
        print(f"  preview: {library.file(entry.preview)}")
    return 0


def _candidates(args: argparse.Namespace, library: SpeakerLibrary) -> list[tuple[str, int | None]]:
    """(name shown, seed or None) of every candidate, checked before the model loads."""
    import random

    from chattts_studio.core.services.audition import SEEDS

    found: list[tuple[str, int | None]] = []
    for name in args.names:
        if library.get(name) is None:
            raise StudioError(f"There is no speaker named '{name}' in the library.")
        found.append((name, None))
    try:
        seeds = [int(part) for part in args.seeds.split(",") if part.strip()]
    except ValueError:
        raise StudioError("--seeds takes whole numbers separated by commas, like 3,42.") from None
    if not 0 <= args.count <= 64:
        raise StudioError("--count must be between 0 and 64.")
    seeds += random.sample(SEEDS, args.count)
    found += [(f"seed {seed}", seed) for seed in seeds]
    if not found:
        raise StudioError("Name library speakers, or give --seeds or --count.")
    return found


def _voice(engine: "Engine", library: SpeakerLibrary, name: str, seed: int | None) -> Voice:
    """A candidate's voice: drawn from its seed, or its library entry's (checked to exist)."""
    if seed is not None:
        return Voice(engine.sample_speaker(seed))
    entry = library.get(name)
    if entry is None:
        raise StudioError(f"There is no speaker named '{name}' in the library.")
    return entry.voice


def _stability(args: argparse.Namespace, library: SpeakerLibrary) -> int:
    import json

    from chattts_studio.core.engine.request import SynthesisRequest
    from chattts_studio.core.services.audition import stability_of
    from chattts_studio.core.speaker import models

    candidates = _candidates(args, library)
    lines = tuple(line.strip() for line in args.lines.split("|") if line.strip())
    if args.lines and len(lines) < 2:
        raise StudioError("--lines needs two lines or more, separated by |.")
    settle_for_model(args)
    encoder = models.encoder(args.speaker_model)
    engine = load_engine(args.model, args.device)
    voices = [_voice(engine, library, name, seed) for name, seed in candidates]
    request = SynthesisRequest(text=lines[0] if lines else "", seed=1)
    found = stability_of(engine, request, voices, encoder, lines, threshold=args.voice_threshold)
    rows = list(zip(candidates, found, strict=True))
    if args.sort:
        rows.sort(key=lambda row: -1.0 if row[1] is None else -row[1].mean)
    if args.json:
        body = [
            {"name": name, "seed": seed, "stability": None if got is None else got.to_json()}
            for (name, seed), got in rows
        ]
        print(json.dumps({"threshold": args.voice_threshold, "demo": encoder.demo,
                          "speakers": body}, ensure_ascii=False))  # fmt: skip
        return 0
    for (name, _seed), got in rows:
        if got is None:
            print(f"{name}: too little audio to judge")
            continue
        print(f"{name}: stability {got.mean:.3f} (lowest pair {got.lowest:.3f}, "
              f"{got.below} of {got.pairs} pairs below {args.voice_threshold:g})")  # fmt: skip
    if encoder.demo:
        err("note: the demo speaker model has random weights: these scores judge noise")
    return 0


def run(args: argparse.Namespace) -> int:
    library = SpeakerLibrary()
    if library.problem:
        err(library.problem)
    if args.action == "list":
        for entry in library.entries:
            seed = f"seed {entry.seed}" if entry.seed is not None else "no seed"
            kind = "cloned" if entry.cloned else "embedding"
            print(f"{entry.name}\t{seed}\t{entry.created}\t{entry.note}\t{kind}")
        return 0
    if args.action == "sample":
        engine = load_engine(args.model)
        print(engine.sample_speaker(args.seed))
        return 0
    if args.action == "add":
        return add_speaker(args, library)
    if args.action == "stability":
        return _stability(args, library)
    if args.action == "remove":
        library.remove(args.name)
        print(f"removed speaker '{args.name}'")
        return 0
    if args.action == "rename":
        library.rename(args.name, args.new_name)
        print(f"renamed '{args.name}' to '{args.new_name}'")
        return 0
    if args.action == "export":
        count = library.export(Path(args.path), args.names or None)
        print(f"exported {count} speaker(s) to {args.path}")
        return 0
    result = library.import_file(Path(args.path))
    print(f"imported {args.path}: {result.counts()}")
    if result.added:
        print(f"added: {', '.join(result.added)}")
    if result.skipped:
        print(f"skipped, voice already in the library: {', '.join(result.skipped)}")
    for old, new in result.renamed:
        print(f"renamed: '{old}' -> '{new}' (the name was taken)")
    return 0
