"""`bench --sections side`: the vocoder beside the GPT's steps against inline, whole syntheses
alternated A B A B, each run's audio equal to the first bit for bit. The GPU run
(core/devtools/gpulevers.py) uses the same table.
"""

import time
from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from chattts_studio.core import SAMPLE_RATE
from chattts_studio.core.engine.cancel import CancelToken
from chattts_studio.core.engine.engine import Engine
from chattts_studio.core.engine.request import AudioChunk, SegmentRestarted, SynthesisRequest
from chattts_studio.core.errors import Cancelled

OFF_ON = (False, True)


def side_table(
    engine: Engine,
    request: SynthesisRequest,
    pairs: int,
    left: Callable[[], float] = lambda: 1e9,
    say: Callable[[str], None] = lambda _m: None,
) -> dict[str, Any]:
    """`pairs` of runs, off then on: `rows` [{vocoder_stream, segments, wall_s, audio_s,
    rtf}], the best and median wall of each side, `x_on` (best off / best on), and
    `audio_max_diff` (the largest sample difference of any run from the first). `left()`:
    seconds still allowed; a run starts only with 20 of them (the rest listed in `skipped`)."""
    model = engine.model
    assert model is not None
    device = model.device
    sync = (lambda: torch.cuda.synchronize(device)) if device.type == "cuda" else (lambda: None)
    rows: list[dict[str, Any]] = []
    skipped: list[str] = []
    first: list[np.ndarray] | None = None
    diff = 0.0
    list(engine.synthesize(SynthesisRequest("你好。", refine_text=False)))  # one-time costs
    try:
        for pair in range(pairs):
            for on in OFF_ON:
                if left() < 20:
                    skipped.append(f"pair {pair + 1} vocoder_stream={on} (time)")
                    continue
                engine.vocoder_stream = on
                sync()
                started = time.perf_counter()
                audio = [r.audio for r in engine.synthesize(request)]
                sync()
                wall = time.perf_counter() - started
                if first is None:
                    first = audio
                elif [len(a) for a in audio] != [len(a) for a in first]:
                    diff = float("inf")
                else:
                    pairs_ = zip(audio, first, strict=True)
                    diff = max([diff, *(float(np.abs(a - b).max()) for a, b in pairs_ if len(a))])
                seconds = sum(len(a) for a in audio) / SAMPLE_RATE
                rows.append(
                    {
                        "vocoder_stream": on,
                        "segments": len(audio),
                        "wall_s": wall,
                        "audio_s": seconds,
                        "rtf": wall / max(seconds, 1e-9),
                    }
                )
                say(f"side: vocoder {'on the side' if on else 'inline'}: {wall:.2f} s")
    finally:
        engine.vocoder_stream = False
    walls = {on: sorted(r["wall_s"] for r in rows if r["vocoder_stream"] is on) for on in OFF_ON}
    best_off, best_on = (walls[on][0] if walls[on] else None for on in OFF_ON)
    return {
        "batch": request.batch_size,
        "refine_text": request.refine_text,
        "chars": len(request.text),
        "rows": rows,
        "best_off_s": best_off,
        "best_on_s": best_on,
        "median_off_s": float(np.median(walls[False])) if walls[False] else None,
        "median_on_s": float(np.median(walls[True])) if walls[True] else None,
        "x_on": best_off / best_on if best_off and best_on else None,
        "audio_max_diff": diff if len(rows) > 1 else None,
        "skipped": skipped,
    }


def first_audio(engine: Engine, request: SynthesisRequest) -> float:
    """Seconds from the call to the first playable audio with a listener (as the window
    plays), refine and all; the job is cancelled there."""
    cancel = CancelToken()
    started = time.perf_counter()
    first: list[float] = []

    def listener(event: AudioChunk | SegmentRestarted) -> None:
        if isinstance(event, AudioChunk) and len(event.audio) and not first:
            first.append(time.perf_counter() - started)
            cancel.cancel()

    try:
        for _ in engine.synthesize(request, listener, cancel):
            pass
    except Cancelled:
        pass
    if not first:
        raise RuntimeError("the synthesis made no audio")
    return first[0]


def defaults_engine(
    section: str,
    model: str,
    device: str | None,
    threads: int | None,
    pairs: int,
    say: Callable[[str], None],
) -> tuple[Engine, dict[str, Any]]:
    """An engine at the user's defaults (fp32, engine auto) for a section that runs alone, and
    its report's header; the caller unloads it."""
    from chattts_studio.core.benchmarks.bench import describe

    if threads:
        torch.set_num_threads(threads)
    engine = Engine()
    loaded = engine.load(model, device, "fp32", engine="auto")
    say(f"{section}: {loaded.info.label} on {loaded.device.label}, {loaded.engine.value} engine")
    return engine, describe(loaded, pairs)


def run(
    model: str,
    device: str | None,
    threads: int | None,
    long_chars: int,
    pairs: int,
    say: Callable[[str], None],
) -> dict[str, Any]:
    """The bench's report with this section alone: the long text at the user's defaults
    (refine on, automatic batch, segment size 50, engine auto)."""
    from chattts_studio.core.benchmarks.bench import long_text

    engine, report = defaults_engine("side", model, device, threads, pairs, say)
    try:
        request = SynthesisRequest(long_text(long_chars), seed=7)
        report["side"] = side_table(engine, request, pairs, say=say)
        waits = [first_audio(engine, request) for _ in range(pairs)]
        report["side"]["first_audio_s"] = waits
        say(f"side: first audio after {', '.join(f'{w:.2f}' for w in waits)} s")
    finally:
        engine.unload()
    return report
