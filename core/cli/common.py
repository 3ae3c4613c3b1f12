"""What the command line's commands share: messages on stderr, exit codes, loading a model,
--speaker, the pronunciation dictionary option, --threads, the folder a render goes into."""

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from chattts_studio.core.errors import SpeakerError, StudioError

if TYPE_CHECKING:
    from chattts_studio.core.engine.engine import Engine
    from chattts_studio.core.engine.engine_choice import EngineKind
    from chattts_studio.core.engine.request import SynthesisRequest
    from chattts_studio.core.voices.voice import Voice

EXIT_USER_ERROR = 2
EXIT_CANCELLED = 130


def err(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


ENGINE_HELP = (
    "what runs the GPT's decode step: auto (default): onnx on the CPU when ONNX Runtime is "
    "installed and the precision is fp32 or int8, else torch; torch: PyTorch, every device "
    "and precision; onnx: ONNX Runtime on the CPU, fp32 or int8 (exported once per model, "
    "needs pip install 'chattts-studio[onnx]')"
)


def add_engine_option(parser: argparse.ArgumentParser, help: str = ENGINE_HELP) -> None:
    parser.add_argument("--engine", default="auto", choices=["auto", "torch", "onnx"], help=help)


def check_engine_choice(
    device: str | None, precision: str, engine: str, decoder: str = "fast"
) -> "EngineKind":
    """The engine that will run (auto resolved); one that cannot run on the device at the
    precision: one sentence (DeviceError) before the heavy work, not after the text or book
    was read and the model loaded."""
    from chattts_studio.core.engine.devices import check_precision, resolve_device
    from chattts_studio.core.engine.engine_choice import check_engine

    if decoder == "stock" and engine == "onnx":
        # ChatTTS's generate() runs its own torch loop: the exported step would go unused.
        raise StudioError("--decoder stock runs in PyTorch; give --engine torch or auto with it.")

    target = resolve_device(device)
    return check_engine(target, check_precision(target, precision), engine)


def _said_stage(stage: str) -> bool:
    """The load's stages worth a line: the slow, once-only ones (demo weights, an export)."""
    return stage.startswith(("building", "making"))


def read_text(args: argparse.Namespace) -> str:
    """The text of synth and project new: given, --file, or "" for a --script (read by its
    caller); one sentence for none, or more than one."""
    given = [n for n, v in (("the text", args.text), ("--file", args.file)) if v is not None]
    if args.script is not None:
        given.append("--script")
    if len(given) > 1:
        raise StudioError(f"Give only one of {', '.join(given)}.")
    if args.script is not None and args.speaker is not None:
        raise StudioError("A script names its speakers on each line; leave out --speaker.")
    if args.file is not None:
        try:
            return Path(args.file).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise StudioError(
                f"Cannot read {args.file}: {getattr(exc, 'strerror', None) or exc}."
            ) from None
    if args.text is not None:
        return str(args.text)
    if args.script is None:
        raise StudioError("Give the text to speak, --file PATH or --script PATH.")
    return ""


def load_engine(
    model: str, device: str | None = None, precision: str = "fp32", engine: str = "torch"
) -> "Engine":
    """A model loaded for a command; `engine`: auto, torch or onnx (the --engine of the
    commands that have it; torch, the library's default, for those that only sample or
    preview a voice: an export would cost them more than it saves)."""
    from chattts_studio.core.engine.engine import Engine

    studio = Engine()
    loaded = studio.load(
        model,
        device,
        precision,
        progress=lambda stage, _f: err(f"  {stage}") if _said_stage(stage) else None,
        engine=engine,
    )
    err(
        f"model: {loaded.info.label} on {loaded.device.id}, {loaded.precision.value}, "
        f"{loaded.engine.value} engine, loaded in {loaded.load_seconds:.1f} s"
    )
    return studio


def check_speaker_arg(value: str | None) -> None:
    """--speaker checked before any model loads: a library name, a seed (42, seed:42), a blend
    whose short parts are those, or a string long enough to be an embedding (its values are
    checked once the model is loaded). Anything else is a name the library lacks: one
    sentence that names the library and how to list it, instead of a load and then a word on
    embeddings."""
    from chattts_studio.core.voices.blend import (
        EMBEDDING_LEAST,
        check_library_parts,
        looks_like_blend,
        seed_of,
    )
    from chattts_studio.core.voices.speakers import SpeakerLibrary

    if value is None or value.isdigit():
        return
    library = SpeakerLibrary()
    if library.problem:
        err(library.problem)
    if library.get(value) is not None:
        return
    if looks_like_blend(value):
        check_library_parts(value, {e.name: e.voice for e in library.entries})
        return
    if seed_of(value) is not None or len(value.strip()) >= EMBEDDING_LEAST:
        return
    raise SpeakerError(
        f"{value[:60]!r} is not a valid speaker: the speaker library ({library.path}) has no "
        "speaker of that name ('chattts-studio-cli speakers list' lists them), and it is not "
        "a seed (42, seed:42) or a speaker embedding."
    )


def speaker_arg(value: str | None, engine: "Engine") -> tuple["Voice | None", int | None]:
    """--speaker NAME|SEED|EMB|BLEND -> (a library voice or embedding, or None; seed or None).
    A blend ("Ann*0.7+seed:42*0.3") mixes parts of those kinds; a library name is looked up
    whole first (a name may hold '+'). check_speaker_arg says what is wrong before the load."""
    from chattts_studio.core.voices.blend import (
        blend_seed,
        library_blend,
        looks_like_blend,
        seed_of,
    )
    from chattts_studio.core.voices.speakers import SpeakerLibrary
    from chattts_studio.core.voices.voice import Voice

    if value is None:
        return None, None
    if value.isdigit():
        return None, int(value)
    library = SpeakerLibrary()
    if library.problem:
        err(library.problem)
    entry = library.get(value)
    if entry:
        return entry.voice, entry.seed
    if not looks_like_blend(value) and (seed := seed_of(value)) is not None:
        return None, seed  # "seed:42" (or an OpenAI voice name), as a blend's part reads it
    if looks_like_blend(value):
        voices = {e.name: e.voice for e in library.entries}
        seeds = {e.name: e.seed for e in library.entries}
        embedding = library_blend(value, voices, engine)
        return Voice(embedding=embedding), blend_seed(value, seeds)
    return Voice(embedding=engine.check_speaker(value)), None


def add_lexicon_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--no-lexicon", action="store_true", help="do not apply the pronunciation dictionary"
    )


def lexicon_entries(args: argparse.Namespace) -> tuple[tuple[str, str], ...]:
    """The pronunciation dictionary for synth and render, unless --no-lexicon."""
    from chattts_studio.core.text.lexicon import LexiconError, LexiconStore

    if args.no_lexicon:
        return ()
    try:
        return LexiconStore().lexicon().entries
    except LexiconError as exc:
        raise LexiconError(f"{exc} (or run with --no-lexicon)") from None


def set_threads(threads: int | None) -> None:
    """--threads: torch's CPU threads for this process (None: torch's own choice)."""
    if threads is None:
        return
    if not 1 <= threads <= 256:
        raise StudioError("The thread count must be between 1 and 256.")
    import torch

    torch.set_num_threads(threads)


def check_folder(folder: Path) -> None:
    """A render's folder: an existing folder, or a new one in an existing folder."""
    if folder.exists() and not folder.is_dir():
        raise StudioError(f"{folder} is not a folder; give a folder for the render.")
    if not folder.exists() and not folder.parent.is_dir():
        raise StudioError(f"The folder {folder.parent} does not exist.")


def add_voice_options(parser: argparse.ArgumentParser) -> None:
    """Who speaks and how: the options `synth` and `render` share, defaults from the request."""
    from chattts_studio.core.engine.request import SynthesisRequest

    d = SynthesisRequest(text="")
    parser.add_argument(
        "--speaker",
        help="a library name, a seed, an embedding string, or a blend of them: "
        "'Ann*0.7+seed:42*0.3'",
    )
    parser.add_argument("--seed", type=int, default=d.seed)
    parser.add_argument("--temperature", type=float, default=d.temperature)
    parser.add_argument("--top-p", type=float, default=d.top_p)
    parser.add_argument("--top-k", type=int, default=d.top_k)
    parser.add_argument("--speed", type=int, default=d.speed, help="0-9 ([speed_N])")
    parser.add_argument(
        "--pause", type=float, default=d.pause_seconds, help="seconds of silence between segments"
    )


def request_from_args(args: argparse.Namespace, text: str, **extra: Any) -> "SynthesisRequest":
    """The request `synth` and `render` make from their shared options (not yet validated)."""
    from chattts_studio.core.engine.request import SynthesisRequest

    return SynthesisRequest(
        text=text,
        seed=args.seed,
        temperature=args.temperature,
        top_p=args.top_p,
        top_k=args.top_k,
        refine_text=not args.no_refine,
        speed=args.speed,
        segment_size=args.segment_size,
        batch_size=args.batch_size,  # 0: automatic, settled by Engine.plan
        pause_seconds=args.pause,
        decoder=args.decoder,
        lexicon=lexicon_entries(args),
        **extra,
    )


def add_asr_model_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--asr-model",
        default="official",
        help="official (SenseVoice-Small, from 'model download-asr'; the default), demo "
        "(random weights: noise, for trying the plumbing) or a folder with SenseVoice's "
        "sherpa-onnx files (model.onnx or model.int8.onnx, tokens.txt)",
    )


def recognizer_arg(args: argparse.Namespace) -> tuple[Any, bool]:
    """The --asr-model's recogniser, and whether it is the demo's; one sentence without one."""
    from chattts_studio.core.asr import models
    from chattts_studio.core.asr.sensevoice import SenseVoice

    folder = models.recognizer_folder(args.asr_model)
    threads = getattr(args, "threads", None) or 2
    return SenseVoice(folder, threads=threads), args.asr_model == models.DEMO


DEMO_RECOGNIZER_NOTE = " (demo recogniser, random weights: its transcripts are noise)"


def engine_for_project(args: argparse.Namespace, path: Path) -> Any:
    """The model a change needs: the command's options, else the project's own."""
    from chattts_studio.core.project import store

    project = store.load(path)  # a missing or damaged project says so before any load
    model = args.model or project.model
    precision = args.precision or project.precision
    engine = args.engine or project.engine
    device = args.device if args.device is not None else project.device
    set_threads(args.threads)
    check_engine_choice(device, precision, engine)
    return load_engine(model, device, precision, engine)
