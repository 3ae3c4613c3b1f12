"""The bench's takes section: the segment editor's targets measured (N takes against one and against
`synth`, a re-roll, opening a large project). Runs alternate A B A B; figures are medians without
the model's load.
"""

import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from chattts_studio.core.benchmarks.bench import SEED, describe
from chattts_studio.core.engine.cancel import CancelToken
from chattts_studio.core.engine.engine import Engine
from chattts_studio.core.engine.request import SynthesisRequest
from chattts_studio.core.project import flags, reading, store, writer
from chattts_studio.core.project.model import Maker, Project, Take, TakeSettings
from chattts_studio.core.services import project as service
from chattts_studio.core.voices.voice import Voice

# One segment at the default segment size (50 characters).
SEGMENT = "四川美食确实以辣闻名，但也有不辣的选择。比如甜水面、赖汤圆、蛋烘糕、叶儿粑等小吃。"
PROJECT_SEGMENTS = 200
OPEN_SEGMENTS, OPEN_TAKES = 1000, 3


def _median(values: list[float]) -> float:
    return statistics.median(values) if values else 0.0


def _timed(fn: Callable[[], Any]) -> float:
    started = time.perf_counter()
    fn()
    return time.perf_counter() - started


def _takes(engine: Engine, voice: Voice, count: int, seed: int) -> float:
    model = engine.model
    assert model is not None
    text = model.normalize(SEGMENT)
    orders = [service.take_order(n, text, voice, seed + n, TakeSettings()) for n in range(count)]
    return _timed(lambda: engine.make_takes(orders, CancelToken(), lambda _made: None))


def _synth(engine: Engine, voice: Voice) -> float:
    request = SynthesisRequest(SEGMENT, seed=SEED, refine_text=False, voice=voice)
    return _timed(lambda: list(engine.synthesize(request)))


def _placeholder_project(folder: Path, voice: Voice, segments: int, takes: int) -> Path:
    """A project of `segments` segments with `takes` short takes each, written directly
    (making them through the model would cost the bench hours on a CPU)."""
    audio = (np.random.default_rng(0).standard_normal(24000) * 0.05).astype(np.float32)
    measures = flags.measure(audio, SEGMENT)
    maker = Maker("placeholder", "torch", "fp32", "cpu", 1, random_weights=True)
    project = Project("bench", TakeSettings(), "demo-full")
    with writer.created(folder, project) as handle:
        for _ in range(segments):
            segment = project.new_segment(SEGMENT, voice, pause_before=0.25)
            for take_id in range(1, takes + 1):
                name = handle.write_take_audio(segment, take_id, audio)
                segment.takes.append(
                    Take(take_id, take_id, TakeSettings(), maker, SEGMENT, SEGMENT, SEGMENT,
                         voice.key(), name, 47, 1000, True, 1.0, measures, "2026-12-02")
                )  # fmt: skip
            segment.chosen = 1
            project.segments.append(segment)
        handle.save()
        return handle.folder


def run(
    model: str,
    device: str | None,
    threads: int | None,
    repeats: int,
    say: Callable[[str], None],
    engine_kind: str = "auto",
    counts: tuple[int, ...] = (1, 4),
) -> dict[str, Any]:
    import torch

    if threads:
        torch.set_num_threads(threads)
    engine = Engine()
    loaded = engine.load(model, device, "fp32", engine=engine_kind)
    voice = Voice(embedding=engine.sample_speaker(SEED))
    say(f"takes: {loaded.info.label} on {loaded.device.id}, {loaded.engine.value} engine")
    _takes(engine, voice, 1, 1)  # warm-up: kernels, the pooled decoder, the normalizer
    _synth(engine, voice)
    times: dict[str, list[float]] = {f"takes_{n}": [] for n in (*counts, "synth")}
    for r in range(repeats):
        for n in counts:
            times[f"takes_{n}"].append(_takes(engine, voice, n, 100 * r))
        times["takes_synth"].append(_synth(engine, voice))
        say(f"  takes round {r + 1}/{repeats}")
    medians = {n: _median(times[f"takes_{n}"]) for n in counts}
    one = medians[counts[0]]
    takes_rows = [{"takes": n, "seconds": s, "ratio": s / one} for n, s in medians.items()]
    with tempfile.TemporaryDirectory() as tmp:
        path = _placeholder_project(Path(tmp) / "reroll", voice, PROJECT_SEGMENTS, 1)
        decoded: list[int] = []
        reroll_times, synth_times = [], []
        for r in range(repeats):
            before = sum(len(s.takes) for s in store.load(path).segments)
            number = str(PROJECT_SEGMENTS // 2)
            started = time.perf_counter()
            service.reroll(engine, path, number, seed=r)
            reroll_times.append(time.perf_counter() - started)
            decoded.append(sum(len(s.takes) for s in store.load(path).segments) - before)
            synth_times.append(_synth(engine, voice))
        opened = _placeholder_project(Path(tmp) / "open", voice, OPEN_SEGMENTS, OPEN_TAKES)
        load_s = _median([_timed(lambda: store.load(opened)) for _ in range(repeats)])
        project = store.load(opened)
        listing_s = _median([_timed(lambda: reading.listing(project)) for _ in range(repeats)])
    reroll = _median(reroll_times)
    synth = _median(synth_times)
    return {
        **describe(loaded, repeats),
        "takes": {
            "repeats": repeats,
            "engine": loaded.engine.value,
            "segment_chars": len(SEGMENT),
            "rows": takes_rows,
            "synth_seconds": _median(times["takes_synth"]),
            "reroll": {
                "segments": PROJECT_SEGMENTS,
                "decoded_takes": decoded,
                "seconds": reroll,
                "synth_seconds": synth,
                "ratio": reroll / synth if synth else None,
            },
            "open": {
                "segments": OPEN_SEGMENTS,
                "takes": OPEN_TAKES,
                "load_seconds": load_s,
                "listing_seconds": listing_s,
            },
        },
    }
