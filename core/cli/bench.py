"""chattts-studio-cli bench: stock ChatTTS against the studio engine, side by side
(chattts_studio.core.benchmarks.bench)."""

import argparse
from typing import Any

from chattts_studio.core.cli.common import err


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


def run(args: argparse.Namespace) -> int:
    from chattts_studio.core.benchmarks import bench
    from chattts_studio.core.benchmarks.report import format_report, to_json
    from chattts_studio.core.engine.devices import resolve_device
    from chattts_studio.core.weights import models

    model = args.model
    if model is None:
        official = [r for r in models.status(("official",), quick=True) if r.verified]
        model = "official" if official else "demo-full"
    sizes = [1, 2, 4, 8, 16]
    device = args.device
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
        say=lambda line: err(line),
    )
    print(to_json(report) if args.json else format_report(report))
    return 0
