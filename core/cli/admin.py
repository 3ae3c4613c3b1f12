"""The command line's library and machine commands: devices, doctor, model, speakers, lexicon."""

import argparse
import time
from pathlib import Path
from typing import Any

from chattts_studio.core.cli.common import err as _err
from chattts_studio.core.cli.common import load_engine as _engine
from chattts_studio.core.errors import BadTextError, StudioError


def cmd_devices(_args: argparse.Namespace) -> int:
    from chattts_studio.core.engine.devices import (
        cuda_status,
        default_device,
        list_devices,
        precision_support,
    )

    default = default_device()
    for device in list_devices():
        mark = "*" if device == default else " "
        if device.problem:
            print(f"{mark} {device.label}  unusable: {device.problem}")
            continue
        usable = [p.value for p, why in precision_support(device).items() if why is None]
        print(f"{mark} {device.label}  precisions: {', '.join(usable)}")
    print(cuda_status())
    return 0


def cmd_doctor(_args: argparse.Namespace) -> int:
    import platform

    import torch

    from chattts_studio.core import paths
    from chattts_studio.core.engine.devices import cuda_status, list_devices, precision_support

    print(f"python {platform.python_version()} on {platform.platform()}")
    print(f"torch {torch.__version__} (CUDA build: {torch.version.cuda or 'none, CPU only'})")
    try:
        from importlib.metadata import version

        print(f"chattts {version('chattts')}, torchaudio {version('torchaudio')}")
    except Exception:
        pass
    print(cuda_status())
    for device in list_devices():
        print(f"device {device.label}")
        if device.problem:
            print(f"    unusable: {device.problem}")
            continue
        for precision, why in precision_support(device).items():
            print(f"    {precision.value}: {'ok' if why is None else why}")
    print(f"data folder {paths.data_dir()}")
    from chattts_studio.core.audio.output import output_available

    print(f"audio output: {output_available() or 'ok'}")
    return 0


def cmd_model(args: argparse.Namespace) -> int:
    from chattts_studio.core.weights import models

    if args.action == "status":
        for row in models.status():
            state = (
                "verified"
                if row.verified
                else ("present, NOT verified" if row.present else "absent")
            )
            print(f"{row.info.name:10} {row.info.kind:9} {state:22} {row.info.folder}")
            if row.info.random_weights:
                print(f"{'':10} {models.RANDOM_LABEL}")
            if row.problem and row.present:
                print(f"{'':10} {row.problem}")
        return 0
    if args.action == "verify":
        info = models.resolve(args.name)
        models.verify(info.folder, models.hashes_for(info), info.name)
        print(f"{info.label}: every file matches its sha256 hash ({info.folder})")
        return 0
    if args.action == "build-demo":
        info = models.build_demo(args.name, progress=lambda s: _err(f"  {s}"))
        print(f"built {info.label} in {info.folder}")
        return 0
    last = [0.0]

    def progress(done: int, total: int) -> None:
        if time.monotonic() - last[0] > 1 or (total and done >= total):
            last[0] = time.monotonic()
            share = f" of {total / 2**20:.0f} MiB ({100 * done / total:.0f} %)" if total else ""
            _err(f"  {done / 2**20:.0f} MiB{share}")

    from chattts_studio.core.weights.download import download_official

    info = download_official(progress)
    print(f"downloaded and verified {info.label} into {info.folder}")
    return 0


def add_speakers_parser(sub: Any) -> None:
    speakers = sub.add_parser("speakers", help="the speaker library")
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
    speakers.set_defaults(func=cmd_speakers)


def _add_speaker(args: argparse.Namespace, library: Any) -> int:
    from chattts_studio.core.voices.keep import keep_voice
    from chattts_studio.core.voices.speaker_file import SpeakerNameTaken, clean_name
    from chattts_studio.core.voices.voice import Voice

    sources = [args.seed is not None, args.embedding is not None, args.from_audio is not None]
    if sum(sources) != 1:
        raise StudioError("Give one of --seed N, --embedding STRING or --from-audio FILE.")
    if (args.transcript is not None) != (args.from_audio is not None):
        raise StudioError("--from-audio FILE needs --transcript TEXT (what is said in it).")
    if not args.replace and library.get(clean_name(args.name)) is not None:
        raise SpeakerNameTaken(clean_name(args.name))  # before any work
    clip = None
    if args.from_audio is not None:
        from chattts_studio.core.text.prepare import check_text
        from chattts_studio.core.voices.clone import read_clip

        clip = read_clip(Path(args.from_audio))  # a bad clip fails before the model loads
        try:
            check_text(args.transcript)
        except BadTextError as exc:
            raise StudioError(f"The transcript cannot be used: {exc}") from None
    engine = _engine(args.model, args.device)
    if clip is not None:
        voice = engine.clone_voice(clip, args.transcript)
    elif args.seed is not None:
        voice = Voice(embedding=engine.sample_speaker(args.seed))
    else:
        voice = Voice(embedding=engine.check_speaker(args.embedding))
    entry = keep_voice(
        library,
        engine,
        args.name,
        voice,
        seed=args.seed,
        note=args.note,
        replace=args.replace,
        preview=not args.no_preview,
        recording=clip if args.keep_recording else None,
    )
    kind = "cloned from a recording" if entry.cloned else "from an embedding"
    print(f"added speaker '{entry.name}' ({kind})")
    if entry.preview:
        print(f"  preview: {library.file(entry.preview)}")
    return 0


def cmd_speakers(args: argparse.Namespace) -> int:
    from chattts_studio.core.voices.speakers import SpeakerLibrary

    library = SpeakerLibrary()
    if library.problem:
        _err(library.problem)
    if args.action == "list":
        for entry in library.entries:
            seed = f"seed {entry.seed}" if entry.seed is not None else "no seed"
            kind = "cloned" if entry.cloned else "embedding"
            print(f"{entry.name}\t{seed}\t{entry.created}\t{entry.note}\t{kind}")
        return 0
    if args.action == "sample":
        engine = _engine(args.model)
        print(engine.sample_speaker(args.seed))
        return 0
    if args.action == "add":
        return _add_speaker(args, library)
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


def add_lexicon_parser(sub: Any) -> None:
    lexicon = sub.add_parser("lexicon", help="the pronunciation dictionary")
    lsub = lexicon.add_subparsers(dest="action", required=True)
    lsub.add_parser("list")
    add = lsub.add_parser("add", help="read WORD as REPLACEMENT (a new entry or a change)")
    add.add_argument("word")
    add.add_argument("replacement")
    remove = lsub.add_parser("remove")
    remove.add_argument("word")
    preview = lsub.add_parser("preview", help="print what the model will read for TEXT")
    preview.add_argument("text")
    preview.add_argument("--no-lexicon", action="store_true")
    preview.add_argument("--segment-size", type=int, default=50)
    lexicon.set_defaults(func=cmd_lexicon)


def cmd_lexicon(args: argparse.Namespace) -> int:
    from chattts_studio.core.text.lexicon import Lexicon, LexiconStore, preview

    store = LexiconStore()
    if args.action == "list":
        for word, replacement in sorted(store.entries.items()):
            print(f"{word}\t{replacement}")
        return 0
    if args.action == "add":
        word, new = store.add(args.word, args.replacement)
        print(f"{'added' if new else 'changed'} '{word}' -> '{store.entries[word]}'")
        return 0
    if args.action == "remove":
        store.remove(args.word)
        print(f"removed '{args.word.strip()}'")
        return 0
    if not 5 <= args.segment_size <= 500:
        raise StudioError("The segment size must be between 5 and 500.")
    lexicon = Lexicon() if args.no_lexicon else store.lexicon()
    for line in preview(args.text, lexicon, args.segment_size):
        print(line.model_text.strip())
    return 0
