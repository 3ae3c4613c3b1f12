"""The bench part of the GPU run: batch sizes, the step's anatomy, real-time streams, precisions
and CUDA graphs, in the order that matters most, each only while the part's time lasts (what did
not fit is listed as skipped).
"""

import gc
import os
import statistics
import time
from collections.abc import Callable
from functools import partial
from typing import Any

import torch

from chattts_studio.core.benchmarks.bench import SENTENCE, Bench, long_text
from chattts_studio.core.devtools.gpuanatomy import step_anatomy
from chattts_studio.core.devtools.gpulevers import (
    lever_table,
    refine_table,
    vocoder_stream_table,
)
from chattts_studio.core.engine.request import BATCH_SIZE_RANGE

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
    bench: Bench, mode: Any, text: str, size: int, batch: int, repeats: int, asked: int
) -> dict[str, Any]:
    engine = bench.engine
    bench.studio(text * batch, size, asked)  # warm-up (and graph capture for its buckets)
    runs = [bench.studio(text * batch, size, asked) for _ in range(repeats)]
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


def batch_sizes(largest: int) -> list[int]:
    """1, 2, 4, ... up to the largest batch that fits, which ends the list."""
    sizes, size = [], 1
    while size < largest:
        sizes.append(size)
        size *= 2
    return [*sizes, largest]


def _streams(engine: Any, mode: Any, seconds: float) -> dict[str, Any]:
    """The most concurrent API clients that each hear audio as fast as it plays (servebench),
    through the real server on 127.0.0.1 with its rows from free memory."""
    from chattts_studio.core.devtools.servebench import realtime_streams
    from chattts_studio.core.engine.batch.batcher import Batcher
    from chattts_studio.core.serve.app import SpeechServer
    from chattts_studio.core.serve.limits import ServeLimits
    from chattts_studio.core.serve.running import serving_on_loopback

    most = CPU_STREAMS if mode.cpu else MAX_STREAMS
    engine.vocoder_stream = STREAMS_VOCODER_STREAM
    try:
        batcher = Batcher(engine, max_waiting=most)
    finally:
        engine.vocoder_stream = False
    limits = ServeLimits(max_connections=most + 64)
    server = SpeechServer(engine, batcher, limits=limits)
    text = "今天天气很好。" if mode.cpu else GPU_SENTENCE
    with serving_on_loopback(server, batcher) as port:
        realtime_streams(port, text, 1, seconds, _say)  # untimed: one-time costs
        found = realtime_streams(port, text, most, seconds, _say)
    return found | {"slots": batcher.slots, "vocoder_stream": STREAMS_VOCODER_STREAM}


LEVER_BATCH = 64  # the full batch the levers are measured at (the first run's best was 64)
CPU_STREAMS = 2  # the demo model on a shared CPU: that the search runs, not a figure
MAX_STREAMS = 1024
# The doubling search's share of a GPU run; a short run (the device time left) sets it lower.
STREAMS_SECONDS = float(os.environ.get("STUDIO_GPU_STREAMS_S", "100"))
# The streams' batcher with its chunks vocoded on a second stream (a GPU lever): off
# until checks.vocoder_stream has shown the same audio on a card; STUDIO_GPU_STREAMS_VOCODER=1.
STREAMS_VOCODER_STREAM = os.environ.get("STUDIO_GPU_STREAMS_VOCODER", "0") == "1"


def _bounded(
    out: dict[str, Any],
    key: str,
    precision: str,
    measure: Callable[[Callable[[], float]], dict[str, Any]],
    mode: Any,
    share: int,
    time_left: Callable[[float], bool],
) -> None:
    """measure(left) appended to out[key], within 1/`share` of the time left (the streams' kept
    aside);
    skipped, with why, when too little is left or it fails (the rest of the bench goes on)."""
    reserve = 0 if mode.cpu else STREAMS_SECONDS
    if not time_left(reserve + 60):
        out["skipped"].append(f"{precision} {key} (time)")
        return
    started = time.perf_counter()
    ends = started + (mode.left() - reserve) / share
    try:
        found = measure(lambda: ends - time.perf_counter()) | {"precision": precision}
        out.setdefault(key, []).append(found)
        _say(f"{precision} {key} in {time.perf_counter() - started:.0f} s")
    except Exception as exc:
        out["skipped"].append(f"{precision} {key}: {exc}")
    _release(mode.device)


def run_bench(mode: Any) -> dict[str, Any]:
    """What matters most first: the best precision's sweep over batch sizes, its anatomy at
    batch 1 and at the largest batch, the streams through the API; then stock against Studio
    and first audio (fp32), then the other precisions' ends."""
    from chattts_studio.core.engine.engine import Engine

    cpu = mode.cpu
    precisions = ["fp32"] if cpu else ["bf16", "fp32", "fp16"]
    text, size = ("今天天气很好。", 7) if cpu else (GPU_SENTENCE, len(GPU_SENTENCE))
    repeats = 1 if cpu else 2
    out: dict[str, Any] = {"batches": [], "skipped": [], "torch": torch.__version__}
    engine = Engine()

    def time_left(need: float) -> bool:
        mode.keep(out)  # every section asks first: what is measured so far survives a kill
        return mode.left() > need

    for precision in precisions:
        main = precision == precisions[0]
        if not time_left(30):
            out["skipped"].append(f"{precision}: everything (time)")
            continue
        try:
            engine.load(mode.model, mode.device, precision)
        except Exception as exc:
            out["skipped"].append(f"{precision}: {exc}")
            continue
        largest = 2 if cpu else min(engine.max_rows(), MAX_STREAMS)
        out.setdefault("largest_batch", {})[precision] = largest
        bench = Bench(engine, 1, _say)
        if main:  # a full batch's anatomy, not the largest's: a profiled run at 1024 rows
            # outlasts the whole bench's limit
            for batch in sorted({1, min(largest, LEVER_BATCH)}):
                if not time_left(60):
                    out["skipped"].append(f"{precision} anatomy at batch {batch} (time)")
                    continue
                started = time.perf_counter()
                try:
                    anatomy = step_anatomy(engine, text, cpu, batch) | {"precision": precision}
                except Exception as exc:  # the sweep and streams still run
                    out["skipped"].append(f"{precision} anatomy at batch {batch}: {exc}")
                    continue
                out.setdefault("anatomy", []).append(anatomy)
                _say(f"{precision} batch {batch} anatomy in {time.perf_counter() - started:.0f} s")
                _release(mode.device)
        if main:  # each lever on and off (gpulevers.py), at batch 1 and a full batch
            for batch in sorted({1, min(largest, LEVER_BATCH)}):
                if not time_left((0 if cpu else STREAMS_SECONDS) + 60):
                    out["skipped"].append(f"{precision} levers at batch {batch} (time)")
                    continue
                started = time.perf_counter()
                try:
                    # At most a fifth of what is left each, the streams' share kept aside.
                    share = (mode.left() - (0 if cpu else STREAMS_SECONDS)) / 5
                    ends = time.perf_counter() + share

                    def lever_left(ends: float = ends) -> float:
                        return ends - time.perf_counter()

                    levers = lever_table(engine, text, cpu, batch, lever_left)
                    levers |= {"precision": precision}
                except Exception as exc:  # the sweep and streams still run
                    out["skipped"].append(f"{precision} levers at batch {batch}: {exc}")
                    continue
                out.setdefault("levers", []).append(levers)
                _say(f"{precision} batch {batch} levers in {time.perf_counter() - started:.0f} s")
                _release(mode.device)
            # The vocoder on a second stream (whole syntheses off and on, at batch 1 and a full
            # batch), and ChatTTS's refine loop against the studio's pass on this GPT (torch's
            # step here).
            full = min(largest, LEVER_BATCH)
            for key, share, measure in (
                ("vocoder_stream", 8, partial(vocoder_stream_table, engine, cpu, 1)),
                ("vocoder_stream", 5, partial(vocoder_stream_table, engine, cpu, full)),
                ("refine", 6, partial(refine_table, engine, cpu)),
            ):
                _bounded(out, key, precision, measure, mode, share, time_left)
        if precision == "fp32":
            started = time.perf_counter()
            out["ab"] = [bench.ab("one sentence", SENTENCE, 50, 1)]
            if not cpu and time_left(150):
                chars = 200
                out["ab"].append(bench.ab(f"long text ({chars} chars)", long_text(chars), 50, 8))
            if time_left(30):
                bench.repeats = 1 if cpu else 3
                out["first_audio"] = bench.first_audio()
                bench.repeats = 1
            _say(f"A/B and first audio in {time.perf_counter() - started:.0f} s")
        sizes = batch_sizes(largest) if main else sorted({1, largest})
        for graphs in [False] if cpu else [True, False]:
            engine.cuda_graphs = graphs
            _release(mode.device)
            group: list[dict[str, Any]] = []
            # Eagerly only batch 1: launch-bound without graphs (~50 steps/s), the comparison.
            for batch in sizes if graphs or cpu else [1]:
                # The streams' time is kept aside while the main sweep runs.
                reserve = STREAMS_SECONDS if main and not cpu else 0.0
                if not time_left(reserve + (40 if batch > 32 else 20)):
                    out["skipped"].append(f"{precision} graphs={graphs} batch {batch} (time)")
                    continue
                try:
                    # Above the request's largest batch: automatic, which is the rows that fit.
                    asked = batch if batch <= BATCH_SIZE_RANGE[1] else 0
                    times = 1 if batch >= 128 else repeats  # long runs vary little
                    row = _batch_row(bench, mode, text, size, batch, times, asked)
                except Exception as exc:  # one size failing leaves the rest
                    out["skipped"].append(f"{precision} graphs={graphs} batch {batch}: {exc}")
                    _release(mode.device)
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
        if main:
            seconds = min(STREAMS_SECONDS, mode.left() - 15)
            if seconds > 10:
                _release(mode.device)
                try:
                    out["streams"] = _streams(engine, mode, seconds) | {"precision": precision}
                except Exception as exc:
                    out["skipped"].append(f"streams: {type(exc).__name__}: {exc}")
            else:
                out["skipped"].append("streams (time)")
    engine.unload()
    return out
