"""The command line: chattts-studio-cli synth | render | devices | doctor | model | speakers |
lexicon."""

import argparse
import signal
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from chattts_studio.core import SAMPLE_RATE
from chattts_studio.core.cli.admin import cmd_devices, cmd_doctor, cmd_model
from chattts_studio.core.cli.common import err as _err
from chattts_studio.core.cli.common import load_engine as _engine
from chattts_studio.core.errors import Cancelled, StudioError

if TYPE_CHECKING:
    from chattts_studio.core.engine.engine import Engine
    from chattts_studio.core.voices.voice import Voice

EXIT_USER_ERROR = 2
EXIT_CANCELLED = 130


def _speaker_arg(value: str | None, engine: "Engine") -> tuple["Voice | None", int | None]:
    """--speaker NAME|SEED|EMB -> (a library voice or embedding, or None; seed or None)."""
    from chattts_studio.core.voices.speakers import SpeakerLibrary
    from chattts_studio.core.voices.voice import Voice

    if value is None:
        return None, None
    if value.isdigit():
        return None, int(value)
    library = SpeakerLibrary()
    if library.problem:
        _err(library.problem)
    entry = library.get(value)
    if entry:
        return entry.voice, entry.seed
    return Voice(embedding=engine.check_speaker(value)), None


def lexicon_entries(args: argparse.Namespace) -> tuple[tuple[str, str], ...]:
    """The pronunciation dictionary for synth and render, unless --no-lexicon."""
    from chattts_studio.core.text.lexicon import LexiconError, LexiconStore

    if args.no_lexicon:
        return ()
    try:
        return LexiconStore().lexicon().entries
    except LexiconError as exc:
        raise LexiconError(f"{exc} (or run with --no-lexicon)") from None


def _read_text(args: argparse.Namespace) -> str:
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


def cmd_synth(args: argparse.Namespace) -> int:
    from chattts_studio.core.audio.output import check_output_path
    from chattts_studio.core.audio.stream_writer import AudioStreamWriter, pause_samples
    from chattts_studio.core.audio.subtitles import check_subtitle_path, cues_for, write_subtitles
    from chattts_studio.core.engine.request import SynthesisRequest

    text = _read_text(args)
    output = Path(args.output)
    check_output_path(output)
    subtitles = Path(args.subtitles) if args.subtitles else None
    if subtitles is not None:
        check_subtitle_path(subtitles)
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
        turn_pause_seconds=args.turn_pause,
        decoder=args.decoder,
        lexicon=lexicon_entries(args),
    )
    request.validate()
    if args.threads is not None:
        if not 1 <= args.threads <= 256:
            raise StudioError("The thread count must be between 1 and 256.")
        import torch

        torch.set_num_threads(args.threads)
    from dataclasses import replace

    from chattts_studio.core.engine.cancel import CancelToken
    from chattts_studio.core.text.prepare import check_text

    script = None
    if args.script is not None:
        from chattts_studio.core.text.dialogue import read_script, voices_for
        from chattts_studio.core.voices.speakers import SpeakerLibrary

        # The script and its speakers are checked before the model loads.
        turns = read_script(Path(args.script))
        voices = voices_for(turns, {e.name: e.voice for e in SpeakerLibrary().entries})
        script = (turns, voices)
    else:
        check_text(text)  # bad text fails before the model loads
    engine = _engine(args.model, args.device, args.precision)
    if script is not None:
        from chattts_studio.core.text.dialogue import plan_dialogue

        plan = plan_dialogue(engine, script[0], script[1], request)
    else:
        voice, seed = _speaker_arg(args.speaker, engine)
        seed = seed if seed is not None else args.seed
        plan = engine.plan(replace(request, voice=voice, seed=seed))
    _err(f"{len(plan.segments)} segment(s), batch size {plan.batch_size}")
    token = CancelToken()
    signal.signal(signal.SIGINT, lambda *_: token.cancel())
    random_note = (
        " (random demo weights: noise, not speech)"
        if engine.loaded and engine.loaded.info.random_weights
        else ""
    )
    tags = {"software": "ChatTTS Studio", "comment": f"ChatTTS Studio{random_note}"}
    # Each segment goes to the file as it is finished (flat memory); only its text, place and
    # speaker are kept, for the subtitles.
    timeline: list[tuple[str, int, int]] = []
    speakers: list[str] = []
    with AudioStreamWriter(output, args.float, 0.0, tags=tags) as writer:
        for result in engine.synthesize(plan, cancel=token):
            writer.write_silence(pause_samples(plan.pause_before(result.index)))
            timeline.append((result.text, *writer.add_segment(result.audio)))
            speakers.append(result.speaker)
            who = f" ({result.speaker})" if result.speaker else ""
            _err(
                f"  segment {result.index + 1}/{result.segments}{who}: {result.steps} steps, "
                f"{result.audio_seconds:.2f} s audio, RTF {result.rtf:.2f}"
            )
            if result.hit_cap:
                _err(
                    f"  warning: segment {result.index + 1} reached the step cap without "
                    "ending: its speech may be cut short; lower --segment-size"
                )
    if subtitles is not None:
        write_subtitles(subtitles, cues_for(timeline, speakers=speakers if script else None))
    summary = engine.last_summary
    assert summary is not None
    print(
        f"wrote {output}: {writer.frames / SAMPLE_RATE:.2f} s of audio in "
        f"{summary.wall_seconds:.2f} s, RTF {summary.rtf:.3f}{random_note}"
    )
    return 0


def cmd_bench(args: argparse.Namespace) -> int:
    from chattts_studio.core.benchmarks import bench
    from chattts_studio.core.weights import models

    model = args.model
    if model is None:
        official = [r for r in models.status(("official",), quick=True) if r.verified]
        model = "official" if official else "demo-full"
    sizes = [1, 2, 4, 8, 16]
    device = args.device
    from chattts_studio.core.engine.devices import resolve_device

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
    from chattts_studio.core.benchmarks.soak import main as soak_main

    return soak_main(args.soak_args)


def build_parser() -> argparse.ArgumentParser:
    from chattts_studio.core.engine.request import SynthesisRequest

    d = SynthesisRequest(text="")
    parser = argparse.ArgumentParser(
        prog="chattts-studio-cli", description="ChatTTS Studio from the command line."
    )
    sub = parser.add_subparsers(dest="command", required=True)

    synth = sub.add_parser("synth", help="synthesize text to an audio file")
    synth.add_argument("text", nargs="?", help="the text to speak")
    synth.add_argument("--file", help="read the text from a UTF-8 file")
    synth.add_argument(
        "--script", help="a dialogue script: 'Name: text' lines voiced by library speakers"
    )
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
    synth.add_argument(
        "--turn-pause",
        type=float,
        default=d.turn_pause_seconds,
        help="seconds of silence between the lines of a --script",
    )
    synth.add_argument("--no-refine", action="store_true", help="skip ChatTTS's refine-text pass")
    synth.add_argument(
        "--no-lexicon", action="store_true", help="do not apply the pronunciation dictionary"
    )
    synth.add_argument(
        "--decoder",
        default="fast",
        choices=["fast", "stock"],
        help="fast: Studio's decode loop (default); stock: ChatTTS's generate()",
    )
    synth.add_argument("--float", action="store_true", help="write 32-bit float WAV")
    synth.add_argument("--subtitles", help="also write subtitles, one cue a sentence: .srt or .vtt")
    synth.set_defaults(func=cmd_synth)

    from chattts_studio.core.cli.render import add_render_parser
    from chattts_studio.core.cli.serve import add_serve_parser

    add_render_parser(sub, d)
    add_serve_parser(sub)

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

    from chattts_studio.core.cli.admin import add_lexicon_parser, add_speakers_parser

    add_speakers_parser(sub)
    add_lexicon_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    warnings.filterwarnings("ignore")
    from chattts_studio.core.engine.quiet import quiet_libraries

    quiet_libraries()
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["soak"]:  # its own options, --help included, belong to devtools.soak
        from chattts_studio.core.benchmarks.soak import main as soak_main

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
