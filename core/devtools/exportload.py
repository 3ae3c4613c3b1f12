"""What checking the ONNX export at every load costs, old load against new, in one process. Method
and figures: docs/engines.md.

    python -m chattts_studio.core.devtools.exportload [--model demo-full] [--repeats 5]
"""

import argparse
import gc
import hashlib
import json
import mmap
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import torch

from chattts_studio.core.engine.cancel import CancelToken
from chattts_studio.core.engine.onnxrt import export, manifest
from chattts_studio.core.engine.onnxrt.session import cpu_options, open_session
from chattts_studio.core.engine.request import Precision
from chattts_studio.core.weights import hashcache, models


def _old(folder: Path) -> list[object]:
    """The load before the check: sizes from the manifest, hashes from the cache, then the
    sessions opened from the files."""
    files = manifest.listed(folder)
    assert files is not None
    for name, entry in files.items():
        if hashcache.cached(folder / name) != entry["sha256"]:
            raise SystemExit(f"{name}: no cached verdict (run once more)")
    threads = torch.get_num_threads()
    return [
        open_session(folder / name, cpu_options(threads))
        for name in (manifest.STEP_FILE, manifest.VOCODER_FILE)
    ]


def _new(info: models.ModelInfo) -> list[object]:
    made = export.ensure_export(info, Precision.FP32, lambda _s, _f: None, CancelToken())
    threads = torch.get_num_threads()
    return [open_session(graph, cpu_options(threads)) for graph in (made.step, made.vocoder)]


def _checked_then_files(info: models.ModelInfo) -> list[object]:
    """The alternative not taken: the same check, then ONNX Runtime opens the files itself
    (from the page cache: a second read, not the bytes that were hashed)."""
    made = export.ensure_export(info, Precision.FP32, lambda _s, _f: None, CancelToken())
    made.step.release()
    made.vocoder.release()
    threads = torch.get_num_threads()
    return [open_session(g.path, cpu_options(threads)) for g in (made.step, made.vocoder)]


def _timed(run: Callable[[], object]) -> float:
    started = time.perf_counter()
    kept = run()
    seconds = time.perf_counter() - started
    del kept
    gc.collect()
    return seconds


def _hash_only(folder: Path, kind: str) -> float:
    """Reading the export's files once (mapped, as a load does), hashed by `kind`."""
    files = manifest.listed(folder)
    assert files is not None
    blake3 = manifest.fast_hasher()
    assert blake3 is not None, "the onnx extra installs blake3"
    started = time.perf_counter()
    for name, entry in files.items():
        hasher = {"sha256": hashlib.sha256, "blake3": blake3}[kind]
        buffer = manifest.read_hashed(folder / name, int(entry["size"]), {kind: hasher()})
        if isinstance(buffer, mmap.mmap):
            buffer.close()
    return time.perf_counter() - started


def _figures(name: str, runs: list[float]) -> str:
    return (
        f"{name:34} median {statistics.median(runs):6.3f} s  "
        f"min {min(runs):6.3f}  max {max(runs):6.3f}  ({len(runs)} runs)"
    )


def _child(variant: str, model: str) -> None:
    """One variant's sessions in this process; prints its memory (VmRSS and peak VmHWM)."""
    info = models.ensure(model)
    folder = export.export_root() / export.export_key(info) / "fp32"
    kept = _old(folder) if variant == "old" else _new(info)
    status = dict(line.split(":", 1) for line in Path("/proc/self/status").read_text().splitlines())
    print(json.dumps({k: status[k].strip() for k in ("VmRSS", "VmHWM")}))
    del kept


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="demo-full")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--loads", type=int, default=2, help="whole engine loads, for scale")
    parser.add_argument("--child", choices=["old", "new"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        _child(args.child, args.model)
        return
    info = models.ensure(args.model)
    made = export.ensure_export(info, Precision.FP32, lambda s, _f: print(s), CancelToken())
    folder = made.step.path.parent
    del made
    files = manifest.listed(folder)
    assert files is not None
    # The old load's premise: every file's verdict in the cache (as after its first load).
    stamps = {name: hashcache.stamp((folder / name).stat()) for name in files}
    hashcache.remember(
        {folder / n: hashcache.Hashed(e["sha256"], stamps[n]) for n, e in files.items()}
    )
    size = sum(int(entry["size"]) for entry in files.values())
    print(f"{args.model}: fp32 export, {size / 2**20:.0f} MiB in {len(files)} files; "
          f"{torch.get_num_threads()} threads")  # fmt: skip
    timings: dict[str, list[float]] = {"old": [], "new": [], "then": []}
    hashes: dict[str, list[float]] = {"sha256": [], "blake3": []}
    for repeat in range(args.repeats):
        variants = {
            "old": lambda: _old(folder),
            "new": lambda: _new(info),
            "then": lambda: _checked_then_files(info),
        }
        order = list(variants) if repeat % 2 == 0 else list(reversed(variants))
        for variant in order:
            timings[variant].append(_timed(variants[variant]))
        for kind in hashes:
            hashes[kind].append(_hash_only(folder, kind))
    print(_figures("old: cached verdicts, files", timings["old"]))
    print(_figures("new: read once, BLAKE3, bytes", timings["new"]))
    added = [new - old for old, new in zip(timings["old"], timings["new"], strict=True)]
    print(_figures("new - old, run by run", added))
    print(_figures("(not taken) check, then files", timings["then"]))
    for kind, runs in hashes.items():
        print(_figures(f"read only, hashed by {kind}", runs))
    if args.loads:
        from chattts_studio.core.engine.engine import Engine

        engine = Engine()
        loads = []
        for _ in range(args.loads):
            loads.append(engine.load(args.model, "cpu", "fp32", engine="onnx").load_seconds)
            engine.unload()
            gc.collect()
        print(_figures("whole engine load (new)", loads))
        whole = statistics.median(loads)
        for kind, runs in hashes.items():
            share = statistics.median(runs) / whole
            print(f"{kind}: {100 * share:.1f} % of the whole load")
        share = statistics.median(added) / whole
        print(f"new - old: {100 * share:.1f} % of the whole load")
    for variant in ("old", "new"):
        done = subprocess.run(
            [sys.executable, "-m", __spec__.name, "--model", args.model, "--child", variant],
            capture_output=True,
            encoding="utf-8",
            errors="replace",
            check=True,
        )
        print(f"memory after the {variant} sessions (own process): {done.stdout.strip()}")


if __name__ == "__main__":
    main()
