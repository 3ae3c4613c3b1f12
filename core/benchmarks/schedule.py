"""`bench --sections schedule`: the first segment first against the first batch together.

Whole syntheses of a mixed text at the user's defaults through Engine.synthesize with a listener
(as the window plays), rows joining as their text is ready (Engine.head_first) against the first
batch refined and started together, alternated A B A B in one process so the machine's drift
falls on both. Each run gives its first audio and wall time; the head-first runs also sample the
live panel twice a second, to compare its bar and time left with what the run really took."""

import threading
import time
from collections.abc import Callable
from typing import Any

from chattts_studio.core import SAMPLE_RATE
from chattts_studio.core.benchmarks.side import defaults_engine, first_audio
from chattts_studio.core.benchmarks.texts import mixed_text
from chattts_studio.core.engine.engine import Engine
from chattts_studio.core.engine.metrics import LiveSnapshot
from chattts_studio.core.engine.request import AudioChunk, SegmentRestarted, SynthesisRequest

SIDES = (False, True)  # head_first


def timed_run(engine: Engine, request: SynthesisRequest) -> dict[str, Any]:
    """One synthesis with a listener: first audio, wall, audio seconds, and the panel's
    samples (seconds since the start, its fraction, its time left)."""
    samples: list[tuple[float, float, float | None]] = []
    stop = threading.Event()
    started = time.perf_counter()
    first: list[float] = []

    def sample() -> None:
        while not stop.wait(0.5):
            snap: LiveSnapshot = engine.live.snapshot()
            samples.append((time.perf_counter() - started, snap.fraction, snap.seconds_left))

    def listener(event: AudioChunk | SegmentRestarted) -> None:
        if isinstance(event, AudioChunk) and len(event.audio) and not first:
            first.append(time.perf_counter() - started)

    watcher = threading.Thread(target=sample, daemon=True)
    watcher.start()
    try:
        audio = sum(len(r.audio) for r in engine.synthesize(request, listener))
    finally:
        stop.set()
        watcher.join()
    wall = time.perf_counter() - started
    return {
        "first_audio_s": first[0] if first else None,
        "wall_s": wall,
        "audio_s": audio / SAMPLE_RATE,
        **panel_errors(samples, wall),
    }


def panel_errors(samples: list[tuple[float, float, float | None]], wall: float) -> dict[str, Any]:
    """After the first tenth of the run: the largest distance of the bar from the share of the
    time elapsed, and the largest error of the time left beyond 35 % (+3 s) of what remained
    (0 when always within), with the share of samples whose time left was shown."""
    late = [(at, fraction, left) for at, fraction, left in samples if at >= wall / 10]
    bar = max((abs(fraction - at / wall) for at, fraction, _ in late), default=None)
    shown = [(at, left) for at, _, left in late if left is not None]
    over = [max(0.0, abs(left - (wall - at)) - (0.35 * (wall - at) + 3.0)) for at, left in shown]
    return {
        "bar_max_error": bar,
        "time_left_max_excess_s": max(over, default=None),
        "time_left_shown_share": len(shown) / len(late) if late else None,
        "panel_samples": len(late),
    }


def schedule_table(
    engine: Engine,
    request: SynthesisRequest,
    pairs: int,
    say: Callable[[str], None] = lambda _m: None,
) -> dict[str, Any]:
    """`pairs` of whole runs, the first batch together then head first, and the head-first
    first audio with refine off (each run cancelled at its first audio)."""
    rows: list[dict[str, Any]] = []
    list(engine.synthesize(SynthesisRequest("你好。", refine_text=False)))  # one-time costs
    try:
        for pair in range(pairs):
            for head_first in SIDES:
                engine.head_first = head_first
                row = {"head_first": head_first, **timed_run(engine, request)}
                rows.append(row)
                say(
                    f"schedule: pair {pair + 1}, head first {head_first}: first audio "
                    f"{row['first_audio_s']:.2f} s, wall {row['wall_s']:.2f} s"
                )
        engine.head_first = True
        off = SynthesisRequest(request.text, seed=request.seed, refine_text=False)
        refine_off = [first_audio(engine, off) for _ in range(pairs)]
    finally:
        engine.head_first = True
    side = {on: [r for r in rows if r["head_first"] is on] for on in SIDES}
    walls = {on: sorted(r["wall_s"] for r in side[on]) for on in SIDES}
    return {
        "chars": len(request.text),
        "refine_text": request.refine_text,
        "rows": rows,
        "refine_off_first_audio_s": refine_off,
        "wall_ratio": walls[True][0] / walls[False][0] if walls[True] and walls[False] else None,
    }


def run(
    model: str,
    device: str | None,
    threads: int | None,
    long_chars: int,
    pairs: int,
    say: Callable[[str], None],
    refine: bool = True,
) -> dict[str, Any]:
    """The bench's report with this section alone: a mixed text of `long_chars` characters at
    the user's defaults (refine on unless `refine` is False, automatic batch, segment size 50,
    engine auto)."""
    engine, report = defaults_engine("schedule", model, device, threads, pairs, say)
    try:
        request = SynthesisRequest(mixed_text(long_chars), seed=7, refine_text=refine)
        report["schedule"] = schedule_table(engine, request, pairs, say=say)
    finally:
        engine.unload()
    return report
