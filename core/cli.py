"""The command line: chattts-studio-cli synth | devices | doctor | model | speakers."""

import argparse
import signal
import sys
import time
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from . import SAMPLE_RATE
from .errors import Cancelled, StudioError

if TYPE_CHECKING:
    from .engine import Engine

EXIT_USER_ERROR = 2
EXIT_CANCELLED = 130


def _err(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _engine(model: str, device: str | None = None, precision: str = "fp32") -> "Engine":
    from .engine import Engine

    engine = Engine()
    loaded = engine.load(
        model,
        device,
        precision,
        progress=lambda stage, _f: _err(f"  {stage}") if stage.startswith("building") else None,
    )
    _err(
        f"model: {loaded.info.label} on {loaded.device.id}, {loaded.precision.value}, "
        f"loaded in {loaded.load_seconds:.1f} s"
    )
    return engine


def _speaker_arg(value: str | None, engine: "Engine") -> tuple[str | None, int | None]:
    """--speaker NAME|SEED|EMB -> (embedding or None, seed or None)."""
    from .speakers import SpeakerLibrary

    if value is None:
        return None, None
    if value.isdigit():
        return None, int(value)
    library = SpeakerLibrary()
    if library.problem:
        _err(library.problem)
    entry = library.get(value)
    if entry:
        return entry.embedding, entry.seed
    return engine.check_speaker(value), None


def cmd_synth(args: argparse.Namespace) -> int:
    from .audio import check_output_path, save
    from .request import SynthesisRequest, join_audio

    if args.text is not None and args.file is not None:
        raise StudioError("Give the text or --file, not both.")
    if args.file is not None:
        try:
            text = Path(args.file).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise StudioError(
                f"Cannot read {args.file}: {getattr(exc, 'strerror', None) or exc}."
            ) from None
    elif args.text is not None:
        text = args.text
    else:
        raise StudioError("Give the text to speak, or --file PATH.")
    output = Path(args.output)
    check_output_path(output)
    request = SynthesisRequest(
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
    )
    request.validate()
    if args.threads is not None:
        if not 1 <= args.threads <= 256:
            raise StudioError("The thread count must be between 1 and 256.")
        import torch

        torch.set_num_threads(args.threads)
    from .text import check_text

    check_text(text)  # bad text fails before the model loads
    engine = _engine(args.model, args.device, args.precision)
    embedding, seed = _speaker_arg(args.speaker, engine)
    from dataclasses import replace

    from .cancel import CancelToken

    request = replace(request, speaker=embedding, seed=seed if seed is not None else args.seed)
    plan = engine.plan(request)
    _err(f"{len(plan.segments)} segment(s), batch size {plan.batch_size}")
    results = []
    token = CancelToken()
    signal.signal(signal.SIGINT, lambda *_: token.cancel())
    for result in engine.synthesize(plan, cancel=token):
        results.append(result)
        _err(
            f"  segment {result.index + 1}/{result.segments}: {result.steps} steps, "
            f"{result.audio_seconds:.2f} s audio, RTF {result.rtf:.2f}"
        )
        if result.hit_cap:
            _err(
                f"  warning: segment {result.index + 1} reached the step cap without ending: "
                "its speech may be cut short; lower --segment-size"
            )
    audio = join_audio(results, request.pause_seconds)
    save(output, audio, float_wav=args.float)
    summary = engine.last_summary
    assert summary is not None
    random_note = (
        " (random demo weights: noise, not speech)"
        if engine.loaded and engine.loaded.info.random_weights
        else ""
    )
    print(
        f"wrote {output}: {len(audio) / SAMPLE_RATE:.2f} s of audio in "
        f"{summary.wall_seconds:.2f} s, RTF {summary.rtf:.3f}{random_note}"
    )
    return 0


def cmd_devices(_args: argparse.Namespace) -> int:
    from .devices import cuda_status, default_device, list_devices, precision_support

    default = default_device()
    for device in list_devices():
        usable = [p.value for p, why in precision_support(device).items() if why is None]
        mark = "*" if device == default else " "
        print(f"{mark} {device.label}  precisions: {', '.join(usable)}")
    print(cuda_status())
    return 0


def cmd_doctor(_args: argparse.Namespace) -> int:
    import platform

    import torch

    from . import paths
    from .devices import cuda_status, list_devices, precision_support

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
        for precision, why in precision_support(device).items():
            print(f"    {precision.value}: {'ok' if why is None else why}")
    print(f"data folder {paths.data_dir()}")
    from .audio import output_available

    print(f"audio output: {output_available() or 'ok'}")
    return 0


def cmd_model(args: argparse.Namespace) -> int:
    from . import models

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

    from .download import download_official

    info = download_official(progress)
    print(f"downloaded and verified {info.label} into {info.folder}")
    return 0


def cmd_speakers(args: argparse.Namespace) -> int:
    from .speakers import SpeakerLibrary

    library = SpeakerLibrary()
    if library.problem:
        _err(library.problem)
    if args.action == "list":
        for entry in library.entries:
            seed = f"seed {entry.seed}" if entry.seed is not None else "no seed"
            print(f"{entry.name}\t{seed}\t{entry.created}\t{entry.note}")
        return 0
    if args.action == "sample":
        engine = _engine(args.model)
        print(engine.sample_speaker(args.seed))
        return 0
    if args.action == "add":
        if (args.seed is None) == (args.embedding is None):
            raise StudioError("Give either --seed N or --embedding STRING.")
        embedding = args.embedding
        if embedding is None:
            embedding = _engine(args.model).sample_speaker(args.seed)
        library.add(args.name, embedding, args.seed, args.note)
        print(f"added speaker '{args.name}'")
        return 0
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
    added = library.import_file(Path(args.path))
    print(f"imported {len(added)} speaker(s): {', '.join(added)}")
    return 0


def cmd_bench(args: argparse.Namespace) -> int:
    from . import models
    from .devtools import bench

    model = args.model
    if model is None:
        official = [r for r in models.status(("official",), quick=True) if r.verified]
        model = "official" if official else "demo-full"
    sizes = [1, 2, 4, 8, 16]
    device = args.device
    from .devices import resolve_device

    if resolve_device(device).kind == "cuda":
        sizes.append(32)
    report = bench.run(
        model,
        device,
        args.repeats,
        args.long_chars,
        args.segment_size,
        args.batch_size,
        sizes,
        ["fp32", "bf16", "int8", "fp16"],
        args.threads,
        say=lambda line: _err(line),
    )
    print(bench.to_json(report) if args.json else bench.format_report(report))
    return 0


def cmd_soak(args: argparse.Namespace) -> int:
    from .devtools.soak import main as soak_main

    return soak_main(args.soak_args)


def build_parser() -> argparse.ArgumentParser:
    from .request import SynthesisRequest

    d = SynthesisRequest(text="")
    parser = argparse.ArgumentParser(
        prog="chattts-studio-cli", description="ChatTTS Studio from the command line."
    )
    sub = parser.add_subparsers(dest="command", required=True)

    synth = sub.add_parser("synth", help="synthesize text to an audio file")
    synth.add_argument("text", nargs="?", help="the text to speak")
    synth.add_argument("--file", help="read the text from a UTF-8 file")
    synth.add_argument(
        "-o", "--output", required=True, help="output file; .wav, .flac, .ogg or .mp3"
    )
    synth.add_argument(
        "--model", default="demo", help="demo, demo-full, official, or a folder (default: demo)"
    )
    synth.add_argument(
        "--device",
        default=None,
        help="cpu, cuda, cuda:N or mps (default: the first CUDA device, else cpu)",
    )
    synth.add_argument(
        "--precision",
        default="fp32",
        choices=["fp32", "fp16", "bf16", "int8"],
        help="int8: the GPT quantized, CPU only, fastest there",
    )
    synth.add_argument("--threads", type=int, default=None, help="CPU threads for torch")
    synth.add_argument("--segment-size", type=int, default=d.segment_size)
    synth.add_argument(
        "--batch-size",
        type=int,
        default=0,
        help="segments decoded together; 0 (default): automatic, up to 16",
    )
    synth.add_argument("--speaker", help="a library name, a seed, or an embedding string")
    synth.add_argument("--seed", type=int, default=d.seed)
    synth.add_argument("--temperature", type=float, default=d.temperature)
    synth.add_argument("--top-p", type=float, default=d.top_p)
    synth.add_argument("--top-k", type=int, default=d.top_k)
    synth.add_argument("--speed", type=int, default=d.speed, help="0-9 ([speed_N])")
    synth.add_argument(
        "--pause", type=float, default=d.pause_seconds, help="seconds of silence between segments"
    )
    synth.add_argument("--no-refine", action="store_true", help="skip ChatTTS's refine-text pass")
    synth.add_argument(
        "--decoder",
        default="fast",
        choices=["fast", "stock"],
        help="fast: Studio's decode loop (default); stock: ChatTTS's generate()",
    )
    synth.add_argument("--float", action="store_true", help="write 32-bit float WAV")
    synth.set_defaults(func=cmd_synth)

    sub.add_parser("devices", help="list devices and precisions").set_defaults(func=cmd_devices)
    sub.add_parser("doctor", help="versions, CUDA status, devices").set_defaults(func=cmd_doctor)

    model = sub.add_parser("model", help="model status, download, verify, build-demo")
    msub = model.add_subparsers(dest="action", required=True)
    msub.add_parser("status")
    msub.add_parser("download", help="download the official weights from Hugging Face")
    verify = msub.add_parser("verify")
    verify.add_argument("name", nargs="?", default="official")
    build = msub.add_parser("build-demo")
    build.add_argument("name", nargs="?", default="demo", choices=["demo", "demo-full"])
    model.set_defaults(func=cmd_model)

    bench = sub.add_parser("bench", help="stock ChatTTS vs the studio engine, side by side")
    bench.add_argument(
        "--model", default=None, help="default: official when downloaded, else demo-full"
    )
    bench.add_argument("--device", default=None)
    bench.add_argument("--repeats", type=int, default=3, help="timed runs per figure")
    bench.add_argument("--long-chars", type=int, default=600)
    bench.add_argument("--segment-size", type=int, default=50)
    bench.add_argument("--batch-size", type=int, default=8, help="batch of the long-text case")
    bench.add_argument("--threads", type=int, default=None, help="CPU threads for torch")
    bench.add_argument("--json", action="store_true", help="print JSON instead of tables")
    bench.set_defaults(func=cmd_bench)

    soak = sub.add_parser(
        "soak", help="many syntheses in a row and one long text, with memory", add_help=False
    )
    soak.add_argument("soak_args", nargs=argparse.REMAINDER)
    soak.set_defaults(func=cmd_soak)

    speakers = sub.add_parser("speakers", help="the speaker library")
    ssub = speakers.add_subparsers(dest="action", required=True)
    ssub.add_parser("list")
    sample = ssub.add_parser("sample", help="print the speaker embedding of a seed")
    sample.add_argument("--seed", type=int, required=True)
    sample.add_argument("--model", default="demo")
    add = ssub.add_parser("add")
    add.add_argument("name")
    add.add_argument("--seed", type=int)
    add.add_argument("--embedding")
    add.add_argument("--note", default="")
    add.add_argument("--model", default="demo")
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
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    warnings.filterwarnings("ignore")
    from .quiet import quiet_libraries

    quiet_libraries()
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["soak"]:  # its own options, --help included, belong to devtools.soak
        from .devtools.soak import main as soak_main

        return soak_main(argv[1:])
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args))
    except StudioError as exc:
        _err(f"error: {exc}")
        return EXIT_USER_ERROR
    except Cancelled:
        _err("cancelled; nothing was written")
        return EXIT_CANCELLED
    except KeyboardInterrupt:
        _err("interrupted")
        return EXIT_CANCELLED


if __name__ == "__main__":
    sys.exit(main())
