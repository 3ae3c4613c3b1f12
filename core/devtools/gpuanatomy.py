"""Where a batch-1 decode step's time goes, for the GPU run's bench.

A graph replay of this 20-layer, 768-wide step should take well under a millisecond, yet the first
GPU run measured about 3 (docs/gpu.md). This splits a loop step into the GPT step (graph replay or
eager), the code heads and sampling, and the loop's own bookkeeping and device read, and times a
graph's capture, which every new decoder pays once per span bucket. Each figure is synchronised
with the device, so launches count with their kernels."""

import time
from collections.abc import Callable
from typing import Any

import torch


def _per_call_ms(fn: Callable[[], object], sync: Callable[[], None], calls: int) -> float:
    sync()
    started = time.perf_counter()
    for _ in range(calls):
        fn()
    sync()
    return (time.perf_counter() - started) / calls * 1000


def step_anatomy(engine: Any, text: str, cpu: bool, batch: int = 1) -> dict[str, Any]:
    """Milliseconds per step of `batch` rows (each the same prompt): `loop_ms` (a whole step
    of the decode loop, a long run minus a short one), `admit_ms` (admitting one job: its
    prefill and books), `gpt_ms`, `sample_ms` (heads and sampling), `rest_ms` (loop_ms less
    those two), `capture_ms` (the first step at a new span bucket: its warm-up runs and
    capture), and `profile` (profile_steps)."""
    from chattts_studio.core.engine.decode.job import Job
    from chattts_studio.core.engine.decode.loop import FastDecoder
    from chattts_studio.core.engine.decode.rowwise import (
        REPETITION_WINDOW,
        sample_codes,
        warpers_for,
    )
    from chattts_studio.core.engine.request import Sampling

    model = engine.model
    device = model.gpt_device
    sync: Callable[[], None] = (
        (lambda: torch.cuda.synchronize(device)) if device.type == "cuda" else (lambda: None)
    )
    speaker = engine.sample_speaker(3)
    normalized = model.normalize(text)
    emb = model.embed(model.prompt_ids(normalized, 5, speaker), speaker)
    steps = 24 if cpu else 400
    calls = 6 if cpu else 200
    sampling = Sampling(0.3, 0.7, 20)
    graphs = device.type == "cuda"
    with torch.inference_mode():

        def decoder() -> FastDecoder:
            length = emb.shape[1] + steps + 1
            return FastDecoder(model, batch, length, static=True, graphs=graphs)

        def whole_loop(fresh: FastDecoder, length: int = steps) -> float:
            sync()
            started = time.perf_counter()
            jobs = [Job(n, emb, length, length) for n in range(batch)]
            for _ in fresh.run(jobs, sampling, bool):
                pass
            sync()
            return time.perf_counter() - started

        whole_loop(decoder())  # warm-up: kernels pick their algorithms
        first = whole_loop(decoder())  # a new decoder captures its graphs again, as a job does
        reused = decoder()
        whole_loop(reused)
        # A long run minus a short one: each run also admits its `batch` jobs (one prefill a
        # job), which would otherwise be counted as the loop's; here admission is its own.
        short = steps // 4
        long_s, short_s = whole_loop(reused), whole_loop(reused, short)
        loop_ms = (long_s - short_s) / (steps - short) * 1000  # its graphs captured already
        admit_ms = (short_s * 1000 - loop_ms * short) / batch

        codes = torch.zeros(batch, model.num_vq, dtype=torch.long, device=device)
        pos = torch.full((batch,), emb.shape[1] + 10, dtype=torch.long, device=device)
        span = emb.shape[1] + 11
        gpt_ms = _per_call_ms(lambda: reused._step_all(codes, pos, span), sync, calls)
        fresh = decoder()
        sync()
        started = time.perf_counter()
        fresh._step_all(codes, pos, span)
        sync()
        capture_ms = (time.perf_counter() - started) * 1000

        hidden = torch.zeros(batch, reused.hidden_size, device=device)
        history = torch.zeros(
            batch * model.num_vq, REPETITION_WINDOW, dtype=torch.long, device=device
        )
        count = torch.full((batch,), 20, dtype=torch.long, device=device)
        warpers = warpers_for(sampling)

        def sample() -> None:
            logits = reused._logits(hidden)
            sample_codes(logits, history, count, count, sampling, warpers, model.num_vq)

        sample_ms = _per_call_ms(sample, sync, calls)
        profile = profile_steps(reused, emb, sampling, batch, 8 if cpu else 20, 2 if cpu else 4)
    return {
        "batch": batch,
        "profile": profile,
        "steps": steps,
        "loop_ms": loop_ms,
        "admit_ms": admit_ms,
        "gpt_ms": gpt_ms,
        "sample_ms": sample_ms,
        "rest_ms": loop_ms - gpt_ms - sample_ms,
        "capture_ms": capture_ms,
        "new_decoder_extra_ms": (first - long_s) * 1000,
        "graphs": graphs and getattr(reused._graphs, "problem", "") is None,
    }


def _device_us(event: Any) -> float:
    """A kernel's device time (torch renamed cuda_time to device_time)."""
    for name in ("device_time", "cuda_time"):
        value = getattr(event, name, None)
        if value is not None:
            return float(value)
    return 0.0


def profile_steps(
    decoder: Any, emb: torch.Tensor, sampling: Any, batch: int, steps: int, short: int
) -> dict[str, Any]:
    """PyTorch profiler traces of `steps` and of `short` whole loop steps of a decoder whose
    graphs exist, the second subtracted from the first so that admitting the `batch` jobs
    (their prefills) is not counted as steps: kernels (CUDA) or operators (CPU) per step, the
    device's busy time against the wall time (the difference: host gaps, where the GPU waits
    for the loop), and what admitting one job launches."""
    long_trace = _trace(decoder, emb, sampling, batch, steps)
    short_trace = _trace(decoder, emb, sampling, batch, short)
    span = steps - short
    per_step = (long_trace["launches"] - short_trace["launches"]) / span
    busy = long_trace["busy_s"] - short_trace["busy_s"]
    wall = long_trace["wall_s"] - short_trace["wall_s"]
    return {
        "steps": span,
        "unit": long_trace["unit"],
        "per_step": per_step,
        "per_admitted_job": (short_trace["launches"] - per_step * short) / batch,
        "device_s": busy,
        "wall_s": wall,
        "device_share": busy / wall if wall > 0 else None,
        "host_gap_ms_per_step": max(0.0, wall - busy) / span * 1000,
        "top": long_trace["top"],
    }


def _trace(
    decoder: Any, emb: torch.Tensor, sampling: Any, batch: int, steps: int
) -> dict[str, Any]:
    from torch.profiler import ProfilerActivity, profile

    from chattts_studio.core.engine.decode.job import Job

    cuda = decoder.device.type == "cuda"
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if cuda else [])
    jobs = [Job(n, emb, steps, steps) for n in range(batch)]
    if cuda:
        torch.cuda.synchronize()
    with profile(activities=activities) as prof:
        started = time.perf_counter()
        for _ in decoder.run(jobs, sampling, bool):
            pass
        if cuda:
            torch.cuda.synchronize()
        wall = time.perf_counter() - started
    events = prof.events()
    if cuda:
        kernels = [e for e in events if e.device_type == torch.autograd.DeviceType.CUDA]
        busy = sum(_device_us(e) for e in kernels) / 1e6  # microseconds in the trace
    else:
        kernels = [e for e in events if e.cpu_parent is None]
        busy = sum(e.cpu_time_total for e in kernels) / 1e6
    top: dict[str, float] = {}
    for e in kernels:
        top[e.name] = top.get(e.name, 0.0) + (_device_us(e) if cuda else e.cpu_time_total)
    return {
        "unit": "kernels" if cuda else "operators",
        "launches": len(kernels),
        "busy_s": busy,
        "wall_s": wall,
        "top": sorted(top.items(), key=lambda kv: -kv[1])[:8],
    }
