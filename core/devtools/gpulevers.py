"""The GPU levers on and off, in one run: the GPT decode's steps/s with CUDA graphs, the device
draw, late flags and fused steps switched one at a time.

Two series over the same seeded jobs (EOS held to the cap): a ladder from the eager static step
adding one lever at a time, and "all but one". Each config is a long run minus a short one on a
warmed decoder, and its codes must equal the first config's (unless compiled).
`vocoder_stream_table` times the vocoder's second stream over whole syntheses. See docs/gpu.md."""

import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import torch

FUSED = 8  # steps a unit may hold when fused steps are on


@dataclass(frozen=True)
class Levers:
    graphs: bool = False
    device_draw: bool = False
    late_flags: bool = False
    fused: bool = False
    compiled: bool = False

    def name(self) -> str:
        on = [k for k, v in vars(self).items() if v]
        return "+".join(on) or "none"


LADDER = (
    Levers(),
    Levers(graphs=True),
    Levers(graphs=True, device_draw=True),
    Levers(graphs=True, device_draw=True, late_flags=True),
    Levers(graphs=True, device_draw=True, late_flags=True, fused=True),
    Levers(graphs=True, device_draw=True, late_flags=True, fused=True, compiled=True),
)
# All on but the compiled step, which the ladder's last row measures alone: each new decoder
# compiles again (from the disk cache after the first, seconds each on a GPU machine).
ALL_ON = LADDER[-2]


def _configs(cpu: bool) -> list[tuple[str, Levers]]:
    """(series, levers) in order. On the CPU graphs cannot be captured and compiling costs
    half a minute a shape (tests/core/engine/test_compiled_step.py covers it), so both stay
    off there."""
    rows = [("ladder", levers) for levers in LADDER]
    on = [name for name, value in vars(ALL_ON).items() if value]
    rows += [("all but one", replace(ALL_ON, **{name: False})) for name in on]
    if cpu:
        rows = [(series, replace(levers, graphs=False, compiled=False)) for series, levers in rows]
    return rows


def lever_table(
    engine: Any, text: str, cpu: bool, batch: int, left: Callable[[], float] = lambda: 1e9
) -> dict[str, Any]:
    """Steps/s of every config at `batch` rows: `rows` [{series, levers, steps_per_s, ms_per_step,
    same_codes, fused_units, graph_problem}], and `x_baseline` for each against the first.
    `left()`: seconds this table may still take; a config is started only with 20 of them
    (the rest is listed in `skipped`)."""
    from chattts_studio.core.engine.decode import rowwise
    from chattts_studio.core.engine.decode.job import Job
    from chattts_studio.core.engine.decode.loop import FastDecoder
    from chattts_studio.core.engine.request import Sampling

    model = engine.model
    device = model.gpt_device
    sync: Callable[[], None] = (
        (lambda: torch.cuda.synchronize(device)) if device.type == "cuda" else (lambda: None)
    )
    speaker = engine.sample_speaker(5)
    emb = model.embed(model.prompt_ids(model.normalize(text), 5, speaker), speaker)
    short, long = (4, 12) if cpu else (32, 160)
    sampling = Sampling(0.3, 0.7, 20)
    rows: list[dict[str, Any]] = []
    reference: list[torch.Tensor] | None = None
    skipped: list[str] = []
    with torch.inference_mode():
        for series, levers in _configs(cpu):
            if left() < 20:
                skipped.append(f"{series}: {levers.name()} (time)")
                continue
            decoder = FastDecoder(
                model,
                batch,
                int(emb.shape[1]) + long + 1,
                static=True,
                graphs=levers.graphs,
                late_flags=levers.late_flags,
                fused_steps=FUSED if levers.fused else 0,
                compiled=levers.compiled,
            )
            decoder.draw = None if levers.device_draw else rowwise.multinomial_draw

            def decode(steps: int, fresh: FastDecoder = decoder) -> tuple[float, list[Job]]:
                jobs = [Job(n, emb, steps, steps, seed=1000 + n) for n in range(batch)]
                sync()
                started = time.perf_counter()
                for _ in fresh.run(jobs, sampling, bool):
                    pass
                sync()
                return time.perf_counter() - started, jobs

            decode(long)  # warm-up: every graph this config uses is captured
            long_s, jobs = decode(long)
            short_s, _ = decode(short)
            step_s = max(1e-9, (long_s - short_s) / (long - short))
            codes = [torch.stack(job.tokens).cpu() for job in jobs]
            if reference is None:
                reference = codes
            fused = decoder._fused
            found = (decoder._graphs, fused, decoder._compiled)
            problems = [p for p in (getattr(f, "problem", None) for f in found) if p]
            rows.append(
                {
                    "series": series,
                    "levers": levers.name(),
                    **vars(levers),
                    "batch": batch,
                    "ms_per_step": step_s * 1000,
                    "steps_per_s": batch / step_s,
                    "same_codes": all(
                        torch.equal(a, b) for a, b in zip(codes, reference, strict=True)
                    ),
                    "fused_units": fused.units if fused else 0,
                    "fused_replays": fused.replays if fused else 0,
                    "graph_problem": "; ".join(str(p) for p in problems) or None,
                }
            )
            del decoder
    base = rows[0]["steps_per_s"]
    for row in rows:
        row["x_baseline"] = row["steps_per_s"] / base
    return {
        "batch": batch,
        "short_steps": short,
        "long_steps": long,
        "rows": rows,
        "skipped": skipped,
    }


def vocoder_stream_table(
    engine: Any, cpu: bool, batch: int, left: Callable[[], float] = lambda: 1e9
) -> dict[str, Any]:
    """Whole syntheses at `batch` rows with finished segments vocoded inline and on the side (a
    second stream on a card), A B A B (core/benchmarks/side.py), over segments of four lengths,
    so rows end at different steps and the vocoder runs while others decode (at batch 1: while
    the next segment decodes, where the batch-1 target's RTF includes the vocoder)."""
    from chattts_studio.core.benchmarks.side import side_table
    from chattts_studio.core.engine.request import SynthesisRequest

    lengths = ("今天很好。", "我们去公园散步吧。", "四川美食确实以辣闻名，但也有不辣的。", "好。")
    count = 4 if cpu else max(4, batch)
    text = "".join(lengths[n % len(lengths)] for n in range(count))
    request = SynthesisRequest(
        text, seed=3, refine_text=False, segment_size=8, batch_size=min(batch, 64)
    )
    return side_table(engine, request, 2, left)


def vocoder_stream_check(engine: Any) -> dict[str, Any]:
    """The GPU run's check: the vocoder on a second stream gives the audio of the vocoder on the
    GPT's stream, four segments of different lengths at batch 2 (on a CPU, a thread)."""
    table = vocoder_stream_table(engine, True, 2)
    return table | {"same_audio": table["audio_max_diff"] == 0.0}


REFINE_TEXTS = (
    "四川美食确实以辣闻名，但也有不辣的选择。",
    "比如甜水面、赖汤圆、蛋烘糕、叶儿粑等。",
    "这些小吃口味温和，甜而不腻，也很受欢迎。",
    "成都的街头巷尾到处都是小吃店。",
    "从早到晚都有人排队。",
    "早上可以吃一碗豆花，中午来一份担担面。",
    "晚上再去夜市逛一逛。",
    "很多游客来到这里，第一件事就是找一家地道的火锅店。",
)


def refine_table(engine: Any, cpu: bool, left: Callable[[], float] = lambda: 1e9) -> dict[str, Any]:
    """ChatTTS's refine-text loop against the studio's pass (decode/text_pass.py) on this
    engine's GPT, one text and eight, A B A B with the same seed: each pass's seconds and
    whether its tokens equal stock's. On CUDA the studio's pass runs GptRows' torch step
    (eager, no graphs): what switching refine to it there would give, measured before it is
    switched on (the window uses it only with the exported ONNX Runtime step today)."""
    from chattts_studio.core.engine.cancel import CancelToken
    from chattts_studio.core.engine.decode.text_pass import refine_with
    from chattts_studio.core.engine.request import RefineSettings

    model = engine.model
    device = model.gpt_device
    sync = (lambda: torch.cuda.synchronize(device)) if device.type == "cuda" else (lambda: None)
    settings = RefineSettings("[oral_2][laugh_0][break_6]", 0.7, 20)
    rows: list[dict[str, Any]] = []
    skipped: list[str] = []
    for batch in (1, 2) if cpu else (1, len(REFINE_TEXTS)):
        texts = [model.normalize(t) for t in REFINE_TEXTS[:batch]]
        found: dict[str, list[list[int]]] = {}
        for repeat in range(2):
            for side in ("stock", "studio"):
                if left() < 20:
                    skipped.append(f"batch {batch} {side} run {repeat + 1} (time)")
                    continue
                params = model.refine_params(texts, settings)
                if cpu:
                    params.max_new_token = 24  # a CPU run only shows that the table runs
                sync()
                torch.manual_seed(7)
                started = time.perf_counter()
                if side == "stock":
                    refined = model._chat._refine_text(texts, model._chat.device, params)
                    ids = [[int(t) for t in row] for row in refined.ids]
                    refined.destroy()
                else:
                    prompts = [model.refine_prompt(t, settings.prompt) for t in texts]
                    run = refine_with(model, prompts, params, CancelToken())
                    while not run.step():
                        pass
                    ids = [[int(t) for t in row] for row in run.ids]
                sync()
                seconds = time.perf_counter() - started
                found[side] = ids
                tokens = sum(len(row) for row in ids)
                rows.append({"batch": batch, "side": side, "seconds": seconds, "tokens": tokens})
        same = found.get("stock") == found.get("studio") if len(found) == 2 else None
        for row in rows:
            if row["batch"] == batch:
                row["same_tokens"] = same
    best: dict[str, float] = {}
    for row in rows:
        key = f"{row['side']}_{row['batch']}"
        best[key] = min(best.get(key, row["seconds"]), row["seconds"])
    return {"rows": rows, "best_s": best, "skipped": skipped}
