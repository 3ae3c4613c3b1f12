"""Soak test: many syntheses in a row, then one very long text, watching the process's memory.

    chattts-studio-cli soak [--runs 200] [--model demo] [--long-chars 100000] [--device cpu]
    chattts-studio-cli soak --output-rss 1000,100000 [--through synth|render] [--model demo]
    chattts-studio-cli soak --output-rss 1000,100000 --through store [--source engine|synthetic]

Growth with the number of runs is a leak; growth with the text's length means audio is kept
somewhere. `--through store` drives the window's result store as the result panel does; `--source
synthetic` feeds it noise at speech rate instead of the model. Exit 0 when both growths stay under
--max-growth-mib, 1 otherwise, 2 for a user mistake."""

import argparse
import gc
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import psutil

from chattts_studio.core import child_process, platforms
from chattts_studio.core.benchmarks.texts import mixed_text
from chattts_studio.core.errors import StudioError

SHORT_TEXT = "四川美食确实以辣闻名。Hello, this is a soak test of ChatTTS Studio."
MIB = 2**20
RSS_SAMPLE_S = 0.05  # between readings of a child's memory where the OS keeps no peak for us


def rss() -> int:
    return int(psutil.Process().memory_info().rss)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="chattts-studio-cli soak", description=__doc__.splitlines()[0] if __doc__ else None
    )
    parser.add_argument("--runs", type=int, default=200, help="short syntheses in a row")
    parser.add_argument("--model", default="demo", help="demo, demo-full, official or a folder")
    parser.add_argument("--long-chars", type=int, default=100000, help="length of the long text")
    parser.add_argument("--device", default="cpu")
    parser.add_argument(
        "--decoder", choices=("fast", "stock"), default=None, help="default: the request's"
    )
    parser.add_argument(
        "--max-growth-mib",
        type=float,
        default=200.0,
        help="RSS growth (after warm-up) above which the soak fails",
    )
    parser.add_argument(
        "--output-rss",
        metavar="CHARS,CHARS",
        help="peak RSS of the command line writing texts of these lengths (instead of the soak)",
    )
    parser.add_argument("--through", choices=("synth", "render", "store"), default="synth")
    parser.add_argument(
        "--source",
        choices=("engine", "synthetic"),
        default="engine",
        help="--through store: audio from the model, or noise at the speech rate",
    )
    parser.add_argument("--store-run", type=int, metavar="CHARS", help=argparse.SUPPRESS)
    parser.add_argument("--max-output-growth-mib", type=float, default=150.0)
    args = parser.parse_args(argv)
    if args.store_run is not None:
        from chattts_studio.core.benchmarks.store_soak import store_run

        return store_run(args.store_run, args)
    if args.output_rss:
        try:
            lengths = [int(n) for n in args.output_rss.split(",")]
        except ValueError:
            parser.error("--output-rss takes lengths such as 1000,100000")
        return output_rss(lengths, args)
    if args.runs < 1 or args.long_chars < 0:
        parser.error("--runs must be at least 1 and --long-chars at least 0")

    from chattts_studio.core.engine.engine import Engine
    from chattts_studio.core.engine.request import SynthesisRequest

    extra = {"decoder": args.decoder} if args.decoder else {}

    def request(text: str) -> SynthesisRequest:
        return SynthesisRequest(text, refine_text=False, segment_size=50, batch_size=4, **extra)

    engine = Engine()
    try:
        started = time.perf_counter()
        engine.load(args.model, args.device, "fp32")
        print(f"loaded {args.model} on {args.device} in {time.perf_counter() - started:.1f} s")
        samples: list[int] = []
        run_started = time.perf_counter()
        for number in range(args.runs):
            for result in engine.synthesize(request(SHORT_TEXT)):
                del result
            samples.append(rss())
            if (number + 1) % max(1, args.runs // 10) == 0:
                print(f"  run {number + 1}/{args.runs}: RSS {samples[-1] / MIB:.0f} MiB")
        run_wall = time.perf_counter() - run_started
        # Growth after the first run: the first one warms caches (allocator, kernels, tokens).
        run_growth = (samples[-1] - samples[0]) / MIB

        segments, audio_seconds, long_wall = 0, 0.0, 0.0
        long_before = long_peak = long_after = rss()
        if args.long_chars:
            gc.collect()
            long_before = long_peak = rss()
            long_started = time.perf_counter()
            for result in engine.synthesize(request(mixed_text(args.long_chars))):
                segments += 1
                audio_seconds += result.audio_seconds
                del result
                long_peak = max(long_peak, rss())
            long_wall = time.perf_counter() - long_started
            long_after = rss()
    except StudioError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    finally:
        engine.unload()
    long_growth = (long_peak - long_before) / MIB

    def mib(*values: float) -> str:
        return " / ".join(f"{v / MIB:.0f}" for v in values) + " MiB"

    rows = [
        ("short runs", f"{args.runs} in {run_wall:.1f} s"),
        ("RSS first / last / max", mib(samples[0], samples[-1], max(samples))),
        ("RSS growth over the runs", f"{run_growth:+.1f} MiB"),
        ("long text", f"{args.long_chars} characters, {segments} segments"),
        ("long text audio", f"{audio_seconds:.1f} s"),
        ("long text wall", f"{long_wall:.1f} s"),
        ("RSS before / peak / after", mib(long_before, long_peak, long_after)),
        ("RSS growth over the long text", f"{long_growth:+.1f} MiB"),
    ]
    width = max(len(name) for name, _ in rows)
    for name, value in rows:
        print(f"{name:<{width}}  {value}")
    ok = run_growth <= args.max_growth_mib and long_growth <= args.max_growth_mib
    print("memory: steady" if ok else f"memory: grew more than {args.max_growth_mib:g} MiB")
    return 0 if ok else 1


def peak_rss_of(argv: list[str]) -> tuple[int, float, int, str]:
    """(peak RSS in bytes, wall seconds, exit status, stderr's last line) of one command."""
    started = time.perf_counter()
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(
            argv, stdout=subprocess.DEVNULL, stderr=err, env=child_process.child_env()
        )
        peak = _waited_peak(proc) if hasattr(os, "wait4") else _sampled_peak(proc)
        err.seek(0)
        lines = err.read().decode("utf-8", "replace").strip().splitlines()
    assert proc.returncode is not None
    return peak, time.perf_counter() - started, proc.returncode, lines[-1] if lines else ""


def _waited_peak(proc: "subprocess.Popen[bytes]") -> int:
    """POSIX: the kernel's own peak of the child (and its waited-for children), from wait4."""
    _pid, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    return platforms.max_rss_bytes(usage.ru_maxrss)


def _sampled_peak(proc: "subprocess.Popen[bytes]") -> int:
    """Where there is no wait4 (Windows): the largest peak among the child and its own
    children, read until it exits. Windows keeps each process's peak working set (peak_wset,
    the counterpart of ru_maxrss), so a brief peak between two readings still counts; where
    psutil has no peak, the largest RSS read. The children count because a virtual
    environment's python.exe on Windows is a launcher that runs the real interpreter as its
    child."""
    peaks: dict[int, int] = {}
    try:
        child = psutil.Process(proc.pid)
    except psutil.Error:
        child = None
    while True:
        if child is not None:
            try:
                tree = [child, *child.children(recursive=True)]
            except psutil.Error:
                tree = []
            for member in tree:
                try:
                    info = member.memory_info()
                except psutil.Error:  # it ended between the listing and the reading
                    continue
                peak = int(getattr(info, "peak_wset", info.rss))
                peaks[member.pid] = max(peaks.get(member.pid, 0), peak)
        try:
            proc.wait(timeout=RSS_SAMPLE_S)
            break
        except subprocess.TimeoutExpired:
            continue
    return max(peaks.values(), default=0)


def output_rss(lengths: list[int], args: argparse.Namespace) -> int:
    """Peak RSS of `synth -o` (or `render`) for each text length, each in its own process."""
    rows: list[tuple[int, int, float, str]] = []
    with tempfile.TemporaryDirectory(prefix="chattts-rss-") as folder:
        for chars in lengths:
            text = Path(folder) / f"text-{chars}.txt"
            text.write_text(mixed_text(chars), encoding="utf-8")
            out = Path(folder) / f"out-{chars}"
            argv = [
                sys.executable,
                "-m",
                "chattts_studio.core.cli.main",
                args.through,
                "--file",
                str(text),
            ]
            if args.through == "render":
                argv = [sys.executable, "-m", "chattts_studio.core.cli.main", "render", str(text)]
            if args.through == "store":
                argv = [
                    sys.executable,
                    "-m",
                    "chattts_studio.core.benchmarks.soak",
                    "--store-run",
                    str(chars),
                ]
                argv += ["--source", args.source, "--model", args.model, "--device", args.device]
                argv += ["--output-rss", str(out)]  # the folder the store run works in
            else:
                argv += ["-o", str(out) + (".flac" if args.through == "synth" else "")]
                argv += ["--model", args.model, "--device", args.device, "--no-refine"]
                argv += ["--batch-size", "16"]
            if args.decoder:
                argv += ["--decoder", args.decoder]
            print(f"  {args.through} of {chars} characters ...", flush=True)
            peak, wall, code, last = peak_rss_of(argv)
            if code != 0:
                print(
                    f"error: {args.through} of {chars} characters failed: {last}", file=sys.stderr
                )
                return 2
            rows.append((chars, peak, wall, last))
            print(f"  {chars} characters: peak RSS {peak / MIB:.0f} MiB, {wall:.0f} s", flush=True)
            if args.through == "store":
                print(f"    {last}", flush=True)
    base = rows[0][1]
    print(f"{'characters':>10}  {'peak RSS':>10}  {'above the first':>15}  {'wall':>8}")
    for chars, peak, wall, _ in rows:
        above = (peak - base) / MIB
        print(f"{chars:>10}  {peak / MIB:>6.0f} MiB  {above:>+11.0f} MiB  {wall:>6.0f} s")
    growth = (max(peak for _, peak, _, _ in rows) - base) / MIB
    ok = growth <= args.max_output_growth_mib
    print(
        f"output memory: {'flat' if ok else 'grows'} ({growth:+.0f} MiB; the limit is "
        f"{args.max_output_growth_mib:g} MiB)"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
