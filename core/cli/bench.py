"""chattts-studio-cli bench: stock ChatTTS against the studio engine, side by side
(core/benchmarks/bench.py); `--sections` picks others from core/benchmarks/. See
docs/performance.md.
"""

import argparse
import dataclasses
from typing import Any

from chattts_studio.core.cli.common import err

# bench.SECTIONS, then engines.py's (not imported here, so that `--help` needs no torch).
SECTIONS = (
    "ab", "batches", "first-audio", "floor", "precisions", "engines", "takes", "anatomy", "side",
    "schedule",
)  # fmt: skip
# engines, takes, anatomy, side and schedule run when asked: engines loads four engines, takes
# writes projects, anatomy refines and synthesizes the long text once more, by stage, and side
# and schedule synthesize it 2 x --repeats times more.
DEFAULT_SECTIONS = SECTIONS[:-5]


def _sections(value: str) -> tuple[str, ...]:
    chosen = [v.strip() for v in value.split(",") if v.strip()]
    if chosen == ["all"]:
        return SECTIONS
    unknown = [v for v in chosen if v not in SECTIONS]
    if unknown or not chosen:
        raise argparse.ArgumentTypeError(
            f"choose sections among {', '.join(SECTIONS)} (or all), comma-separated"
        )
    return tuple(s for s in SECTIONS if s in chosen)


def _engine_rows(value: str) -> tuple[tuple[str, str], ...]:
    parts = (part.strip().lower().partition(":") for part in value.split(","))
    rows = tuple((engine, precision) for engine, _, precision in parts)
    known = {(e, p) for e in ("torch", "onnx") for p in ("fp32", "int8")}
    if not rows or rows[0] != ("torch", "fp32") or not all(r in known for r in rows):
        raise argparse.ArgumentTypeError(
            "give rows as engine:precision (torch or onnx, fp32 or int8), torch:fp32 first, "
            "e.g. torch:fp32,onnx:fp32"
        )
    return rows


def _sizes(value: str) -> tuple[int, ...]:
    try:
        sizes = tuple(int(v) for v in value.split(","))
    except ValueError:
        sizes = ()
    if not sizes or min(sizes) < 1:
        raise argparse.ArgumentTypeError("give batch sizes as whole numbers, e.g. 1,8,16")
    return sizes


def add_parser(sub: Any) -> None:
    bench = sub.add_parser("bench")
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
    bench.add_argument(
        "--sections",
        type=_sections,
        default=DEFAULT_SECTIONS,
        help=f"comma-separated, among {', '.join(SECTIONS)}, or all (default: all but "
        "engines, takes, anatomy, side and schedule); engines: torch and ONNX Runtime, fp32 "
        "and int8, side by side; anatomy: the long text (--long-chars) at the user's defaults "
        "(refine-text on, automatic batch, segment size 50, engine auto), its wall time by "
        "stage; side: the same text with the vocoder inline and beside the steps, A B A B, "
        "--repeats pairs; schedule: a mixed text of --long-chars with a listener, the first "
        "segment first against the first batch together, A B A B, --repeats pairs: first "
        "audio, wall time and the live panel's error",
    )
    engines = bench.add_argument_group("the engines section")
    engines.add_argument(
        "--engine-batches",
        type=_sizes,
        default=(1, 8, 16),
        help="batch sizes of its decode steps/s (default 1,8,16)",
    )
    engines.add_argument(
        "--decode-steps",
        type=int,
        default=40,
        help="steps of its timed decode runs (the steps/s are those of a run of this many "
        "minus a run of a fifth as many; default 40)",
    )
    engines.add_argument(
        "--agree-steps",
        type=int,
        default=300,
        help="teacher-forced steps whose logits are compared with torch fp32's (default 300)",
    )
    engines.add_argument(
        "--free-steps",
        type=int,
        default=100,
        help="free-running steps whose codes are compared with torch fp32's (default 100)",
    )
    engines.add_argument(
        "--engine-rows",
        type=_engine_rows,
        default=None,
        help="the rows it runs, engine:precision comma-separated, torch:fp32 first (the "
        "reference; default torch:fp32,onnx:fp32,torch:int8,onnx:int8)",
    )
    schedule = bench.add_argument_group("the schedule section")
    schedule.add_argument(
        "--schedule-refine",
        choices=("on", "off"),
        default="on",
        help="refine-text in its runs (default on, the user's default; off makes both "
        "schedules' texts, and so their work, the same on random weights)",
    )
    engines.add_argument(
        "--refine",
        action="store_true",
        help="its long text with refine-text on (the user's default; off like the other tables "
        "unless given)",
    )


def run(args: argparse.Namespace) -> int:
    from chattts_studio.core.benchmarks import bench, engines
    from chattts_studio.core.benchmarks.report import format_report, to_json
    from chattts_studio.core.engine.devices import resolve_device
    from chattts_studio.core.weights import models

    if min(args.repeats, args.decode_steps, args.agree_steps, args.free_steps) < 1:
        err("error: --repeats, --decode-steps, --agree-steps and --free-steps must be at least 1.")
        return 2
    model = args.model
    if model is None:
        official = [r for r in models.status(("official",), quick=True) if r.verified]
        model = "official" if official else "demo-full"
    sizes = [1, 2, 4, 8, 16]
    device = args.device
    if resolve_device(device).kind == "cuda":
        sizes.append(32)
    long_steps = max(2, args.decode_steps)
    settings = engines.EngineSettings(
        batch_sizes=args.engine_batches,
        short_steps=max(1, long_steps // 5),
        long_steps=long_steps,
        agree_steps=args.agree_steps,
        free_steps=args.free_steps,
        long_chars=args.long_chars,
        refine_text=args.refine,
        repeats=args.repeats,
    )
    if args.engine_rows:
        from chattts_studio.core.engine.engine_choice import EngineKind
        from chattts_studio.core.engine.request import Precision

        rows = tuple((EngineKind(e), Precision(p)) for e, p in args.engine_rows)
        settings = dataclasses.replace(settings, rows=rows)
    say = err
    report: dict[str, Any] = {}
    chosen = tuple(s for s in args.sections if s in bench.SECTIONS)
    if chosen:
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
            say,
            chosen,
        )
    if "engines" in args.sections:
        # Its own engine: the header is the same when both ran (same machine, model, torch).
        report = {**engines.run(model, device, args.threads, settings, say), **report}
    if "takes" in args.sections:
        from chattts_studio.core.benchmarks import takes

        report = {**takes.run(model, device, args.threads, args.repeats, say), **report}
    if "anatomy" in args.sections:
        from chattts_studio.core.benchmarks import anatomy

        report = {**anatomy.run(model, device, args.threads, args.long_chars, say), **report}
    if "side" in args.sections:
        from chattts_studio.core.benchmarks import side

        found = side.run(model, device, args.threads, args.long_chars, args.repeats, say)
        report = {**found, **report}
    if "schedule" in args.sections:
        from chattts_studio.core.benchmarks import schedule

        refine = args.schedule_refine == "on"
        found = schedule.run(
            model, device, args.threads, args.long_chars, args.repeats, say, refine
        )
        report = {**found, **report}
    print(to_json(report) if args.json else format_report(report))
    return 0
