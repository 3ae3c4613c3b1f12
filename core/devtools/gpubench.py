"""The bench part of the GPU run: stock against Studio, batch sizes, precisions, CUDA graphs on
and off, first audio and memory per stream, in the order that matters most, each measurement
only while the part's time lasts (what did not fit is listed as skipped)."""

import gc
import statistics
import time
from typing import Any

import torch

from chattts_studio.core.benchmarks.bench import SENTENCE, Bench, long_text
from chattts_studio.core.devtools.gpuanatomy import step_anatomy

GPU_SENTENCE = "四川美食确实以辣闻名，但也有不辣的选择。"  # ~20 characters: ~400 steps a segment


def _say(message: str) -> None:
    print(message, flush=True)


def _release(device: str) -> None:
    """What earlier rows left cached goes back, so each group's peaks start from the model."""
    gc.collect()
    if device.startswith("cuda"):
        torch.cuda.empty_cache()


def _per_stream(rows: list[dict[str, Any]]) -> None:
    """Memory per stream as the slope of the peak against batch 1 in the same group: what
    one more row costs (its KV cache and activations), whatever the group started with."""
    one = next((r for r in rows if r["batch"] == 1), None)
    for r in rows:
        if one is not None and r["batch"] > 1 and r["peak_mib"] and one["peak_mib"]:
            r["per_stream_mib"] = (r["peak_mib"] - one["peak_mib"]) / (r["batch"] - 1)


def _batch_row(
    bench: Bench, mode: Any, text: str, size: int, batch: int, repeats: int
) -> dict[str, Any]:
    engine = bench.engine
    bench.studio(text * batch, size, batch)  # warm-up (and graph capture for its buckets)
    runs = [bench.studio(text * batch, size, batch) for _ in range(repeats)]
    summary = engine.last_summary
    wall = statistics.median(r.wall for r in runs)
    audio = statistics.median(r.audio for r in runs)
    steps = summary.steps if summary else 0
    peak = (summary.peak_memory or 0) if summary else 0
    return {
        "batch": batch,
        "audio_s": audio,
        "wall_s": wall,
        "rtf": wall / audio if audio else None,
        "x_real_time": audio / wall if wall else None,
        "steps_per_s": steps / wall if wall else None,
        "steps_per_s_per_stream": steps / wall / batch if wall else None,
        "peak_mib": peak / 2**20,
        "per_stream_mib": None,  # the slope against batch 1, set by run_bench
        "batch_finished": summary.batch_size if summary else None,
    }


def run_bench(mode: Any) -> dict[str, Any]:
    from chattts_studio.core.engine.engine import Engine

    cpu = mode.cpu
    precisions = ["fp32"] if cpu else ["fp32", "bf16", "fp16"]
    batches = [1, 2] if cpu else [1, 8, 32, 64]  # 64: the engine's largest batch
    text, size = ("今天天气很好。", 7) if cpu else (GPU_SENTENCE, len(GPU_SENTENCE))
    repeats = 1 if cpu else 2
    out: dict[str, Any] = {"batches": [], "skipped": [], "torch": torch.__version__}
    engine = Engine()

    def time_left(need: float) -> bool:
        return mode.left() > need

    for precision in precisions:
        if not time_left(30):
            out["skipped"].append(f"{precision}: everything (time)")
            continue
        try:
            engine.load(mode.model, mode.device, precision)
        except Exception as exc:
            out["skipped"].append(f"{precision}: {exc}")
            continue
        bench = Bench(engine, 1, _say)
        if precision == "fp32":
            started = time.perf_counter()
            out["ab"] = [bench.ab("one sentence", SENTENCE, 50, 1)]
            if not cpu and time_left(90):
                chars = 200
                out["ab"].append(bench.ab(f"long text ({chars} chars)", long_text(chars), 50, 8))
            if time_left(30):
                bench.repeats = 1 if cpu else 3
                out["first_audio"] = bench.first_audio()
                bench.repeats = 1
            _say(f"A/B and first audio in {time.perf_counter() - started:.0f} s")
        if time_left(60):
            started = time.perf_counter()
            anatomy = step_anatomy(engine, text, cpu) | {"precision": precision}
            out.setdefault("anatomy", []).append(anatomy)
            _say(f"{precision} step anatomy in {time.perf_counter() - started:.0f} s: {anatomy}")
        for graphs in [False] if cpu else [True, False]:
            engine.cuda_graphs = graphs
            _release(mode.device)
            group: list[dict[str, Any]] = []
            # Eagerly only the ends: batch 1 is launch-bound without graphs (~50 steps/s).
            for batch in batches if graphs or cpu else [1, batches[-1]]:
                if not time_left(40 if batch > 32 else 20):
                    out["skipped"].append(f"{precision} graphs={graphs} batch {batch} (time)")
                    continue
                try:
                    row = _batch_row(bench, mode, text, size, batch, repeats)
                except Exception as exc:  # one size failing leaves the rest
                    out["skipped"].append(f"{precision} graphs={graphs} batch {batch}: {exc}")
                    continue
                row |= {"precision": precision, "graphs": graphs and not cpu}
                out["batches"].append(row)
                group.append(row)
                _per_stream(group)
                _say(
                    f"{precision} graphs={graphs} batch {batch}: RTF {row['rtf']:.4f}, "
                    f"{row['steps_per_s']:.0f} steps/s, x{row['x_real_time']:.1f} real time"
                )
        engine.cuda_graphs = True
    engine.unload()
    return out
