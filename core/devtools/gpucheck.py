"""The GPU run: one prepared command that proves the CUDA path on a real GPU in a few minutes.

    python -m chattts_studio.core.devtools.gpucheck [--cpu] [--out DIR] [--budget SECONDS]

Its parts (env, `pytest -m gpu`, checks against stock, bench) run each in its own process with its
own time limit, so a part that fails or poisons its CUDA context leaves the others' figures. It
writes report.md and report.json to --out and prints a summary. `--cpu` runs the same parts with
the tiny demo weights, so the suite keeps the script from rotting. What each part does:
docs/gpu.md, "Running the GPU check"."""

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from chattts_studio.core import child_process
from chattts_studio.core.devtools.gpuparts import PARTS, run_part
from chattts_studio.core.devtools.gpureport import markdown

# The bench's sweep to the largest batch and its streams search need the most time.
PART_SHARE = {"env": 0.04, "pytest": 0.14, "checks": 0.2, "bench": 0.62}


def _part_process(name: str, args: argparse.Namespace, limit: float, out: Path) -> dict[str, Any]:
    result_file = out / f"part-{name}.json"
    result_file.unlink(missing_ok=True)
    command = [
        sys.executable, "-m", "chattts_studio.core.devtools.gpucheck", "--part", name,
        "--result", str(result_file), "--limit", f"{limit:.0f}",
    ]  # fmt: skip
    if args.cpu:
        command.append("--cpu")
    started = time.perf_counter()
    try:
        proc = child_process.run_python(command, timeout=limit + 30)
        tail = (proc.stdout + proc.stderr)[-3000:]
        status = "ok" if proc.returncode == 0 else f"failed (exit {proc.returncode})"
    except subprocess.TimeoutExpired as exc:
        tail = (child_process.text(exc.stdout) + child_process.text(exc.stderr))[-3000:]
        status = f"timed out after {limit + 30:.0f} s"
    data: dict[str, Any] = {}
    if result_file.exists():
        data = json.loads(result_file.read_text(encoding="utf-8"))
        result_file.unlink()
    if data.get("error") and status == "ok":
        status = "failed"
    return {
        "part": name,
        "status": status,
        "seconds": time.perf_counter() - started,
        "data": data,
        "log_tail": tail if status != "ok" else "",
    }


def drive(args: argparse.Namespace) -> int:
    out = Path(args.out or os.environ.get("OUT") or "gpucheck-out")
    out.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    parts = []
    for name in args.parts.split(","):
        left = args.budget - (time.perf_counter() - started)
        limit = max(20.0, min(left, args.budget * PART_SHARE[name]))
        print(f"== {name} (limit {limit:.0f} s)", flush=True)
        part = _part_process(name, args, limit, out)
        print(f"   {part['status']} in {part['seconds']:.0f} s", flush=True)
        parts.append(part)
    report = {"mode": "cpu" if args.cpu else "gpu", "parts": parts}
    (out / "report.json").write_text(json.dumps(report, indent=2, default=str), encoding="utf-8")
    summary = markdown(report)
    (out / "report.md").write_text(summary, encoding="utf-8")
    print(summary)
    return 0 if all(p["status"] == "ok" for p in parts) else 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m chattts_studio.core.devtools.gpucheck")
    parser.add_argument("--cpu", action="store_true", help="CPU mode: demo weights, small sizes")
    parser.add_argument("--out", help="folder for report.md and report.json (default: $OUT)")
    parser.add_argument("--budget", type=float, default=480.0, help="seconds for all parts")
    parser.add_argument("--parts", default="env,pytest,checks,bench")
    parser.add_argument("--part", help=argparse.SUPPRESS)  # one part, in its own process
    parser.add_argument("--result", help=argparse.SUPPRESS)
    parser.add_argument("--limit", type=float, default=120.0, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.part:
        if args.part not in PARTS:
            parser.error(f"unknown part {args.part}")
        return run_part(args.part, args.cpu, args.limit, Path(args.result))
    return drive(args)


if __name__ == "__main__":
    sys.exit(main())
