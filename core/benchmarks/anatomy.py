"""The bench's anatomy section: where a long text's wall time goes at the user's defaults.

One synthesis through the synth service (text to an audio file, as `synth` makes it), with the
calls that make up each stage wrapped with timers for that run only (timing_stages) and restored
afterwards, also when it fails. PyTorch's GPT passes are timed by module hooks. On a thread the
outermost stage owns the time; `overlap_s` shows stages that ran on other threads at once. The
stages and their calls: docs/performance.md, the anatomy."""

import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from chattts_studio.core.audio.stream_writer import AudioStreamWriter
from chattts_studio.core.benchmarks.bench import SEED, describe, long_text
from chattts_studio.core.engine.chattts.chat import ChatModel, RefinePass
from chattts_studio.core.engine.decode.loop import FastDecoder
from chattts_studio.core.engine.engine import Engine
from chattts_studio.core.engine.onnxrt.session import OrtStep
from chattts_studio.core.engine.request import SynthesisRequest
from chattts_studio.core.errors import ModelError
from chattts_studio.core.services.synthesize import plan_synthesis, synthesize_to_file

STAGES = ("refine", "prompt", "prefill", "steps", "sampling", "vocoder", "writing")
# The methods each stage wraps, (owner, attribute); prefill and PyTorch's steps are hooks.
WRAPPED: tuple[tuple[str, type, str], ...] = (
    ("refine", RefinePass, "__init__"),
    ("refine", RefinePass, "step"),
    ("prompt", ChatModel, "normalize"),
    ("prompt", ChatModel, "prompt_ids"),
    ("prompt", ChatModel, "embed"),
    ("steps", OrtStep, "run"),
    ("sampling", FastDecoder, "sample_step"),
    ("vocoder", ChatModel, "vocode"),
    ("vocoder", ChatModel, "vocode_on_device"),
    ("writing", AudioStreamWriter, "__enter__"),
    ("writing", AudioStreamWriter, "write"),
    ("writing", AudioStreamWriter, "__exit__"),
)
WARM_UP_TEXT = "你好。"  # the first synthesis's one-time costs stay out of the figures
_MISSING = object()


@dataclass(frozen=True)
class Interval:
    stage: str
    thread: int
    start: float
    end: float


class _Open(threading.local):
    """A thread's stage in progress (the outermost), and the GPT pass's depth (see above)."""

    stage: str | None = None
    depth: int = 0
    started: float = 0.0


@dataclass
class StageClock:
    """Every timed call's interval; the outermost stage on a thread owns its time."""

    intervals: list[Interval] = field(default_factory=list)
    nested: int = 0  # calls not counted: inside another stage on the same thread
    _open: _Open = field(default_factory=_Open)

    def wrap(self, stage: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        def timed(*args: Any, **kwargs: Any) -> Any:
            now = self._open
            if now.stage is not None:
                self.nested += 1
                return fn(*args, **kwargs)
            now.stage, started = stage, time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                self._add(stage, started)
                now.stage = None

        return timed

    def _add(self, stage: str, started: float) -> None:
        # list.append is atomic under the GIL: threads may record side by side.
        end = time.perf_counter()
        self.intervals.append(Interval(stage, threading.get_ident(), started, end))

    # -- the GPT's passes, through module hooks ------------------------------------------
    def pass_begins(self, _module: object, args: tuple[Any, ...]) -> None:
        now = self._open
        if now.depth:  # the next chunk of one chunked step
            now.depth += 1
        elif now.stage is not None:  # a pass inside refine's own loop: refine's time
            self.nested += 1
        else:
            x = args[0]
            now.stage = "prefill" if x.dim() > 2 and int(x.shape[1]) > 1 else "steps"
            now.depth, now.started = 1, time.perf_counter()

    def pass_ends(self, _module: object, _args: object, _out: object) -> None:
        now = self._open
        if not now.depth:
            return
        now.depth -= 1
        if not now.depth:
            assert now.stage is not None
            self._add(now.stage, now.started)
            now.stage = None

    # -- figures --------------------------------------------------------------------------
    def busy(self) -> dict[str, float]:
        """Seconds per stage, every thread's calls added."""
        seconds = dict.fromkeys(STAGES, 0.0)
        for i in self.intervals:
            seconds[i.stage] += i.end - i.start
        return seconds

    def calls(self) -> dict[str, int]:
        counts = dict.fromkeys(STAGES, 0)
        for i in self.intervals:
            counts[i.stage] += 1
        return counts

    def covered(self) -> float:
        """Seconds during which at least one stage ran, on any thread (their union)."""
        total, reach = 0.0, float("-inf")
        for i in sorted(self.intervals, key=lambda i: i.start):
            if i.start > reach:
                total += i.end - i.start
                reach = i.end
            elif i.end > reach:
                total += i.end - reach
                reach = i.end
        return total

    def threads(self) -> int:
        return len({i.thread for i in self.intervals})


@contextmanager
def timing_stages(model: ChatModel) -> Iterator[StageClock]:
    """Every stage's calls timed into the clock it yields, while inside; on leaving (however),
    every wrapped method is what it was and the hooks are gone."""
    clock = StageClock()
    with ExitStack() as undo:
        for stage, owner, name in WRAPPED:
            own = vars(owner).get(name, _MISSING)  # restore exactly: its own, or inherited

            def restore(owner: type = owner, name: str = name, own: object = own) -> None:
                if own is _MISSING:
                    delattr(owner, name)
                else:
                    setattr(owner, name, own)

            original = getattr(owner, name)
            undo.callback(restore)
            setattr(owner, name, clock.wrap(stage, original))
        gpt = model.gpt
        undo.callback(gpt.rotary_emb.register_forward_pre_hook(clock.pass_begins).remove)
        undo.callback(gpt.norm.register_forward_hook(clock.pass_ends).remove)
        yield clock


def figures(clock: StageClock, wall: float, audio: float) -> dict[str, Any]:
    """The stages' seconds, calls and shares of `wall`, their sum, what they covered together,
    `other` (wall less that), and the RTF over `audio` seconds."""
    busy, calls = clock.busy(), clock.calls()
    covered = clock.covered()
    return {
        "stages": [
            {
                "stage": stage,
                "seconds": busy[stage],
                "share": busy[stage] / wall if wall else 0.0,
                "calls": calls[stage],
                "ms_per_call": 1e3 * busy[stage] / calls[stage] if calls[stage] else 0.0,
            }
            for stage in STAGES
        ],
        "stages_s": sum(busy.values()),
        "covered_s": covered,
        "overlap_s": sum(busy.values()) - covered,
        "stage_threads": clock.threads(),
        "nested_calls": clock.nested,
        "other_s": wall - covered,
        "other_share": (wall - covered) / wall if wall else 0.0,
        "wall_s": wall,
        "audio_s": audio,
        "rtf": wall / audio if audio else float("inf"),
    }


# The step's cost where a long text's rows spend their steps: near the prompt, midway and near
# ChatTTS's 2,048-token cap (random weights rarely end a row early).
PROBE_POSITIONS = (50, 1000, 1900)
PROBE_LENGTH = 2048
PROBE_REPEATS = 6


def step_by_position(
    step: OrtStep, batch: int, positions: tuple[int, ...] = PROBE_POSITIONS
) -> list[dict[str, Any]]:
    """The ONNX Runtime step alone at `batch` rows, every row at each of `positions` in a
    cache of PROBE_LENGTH: its milliseconds and the key/value bytes it reads (each row's cache
    up to its position), to part the weights' cost (the first position's) from the cache's."""
    shapes = {i.name: i.shape for i in step.session.get_inputs()}
    hidden = int(shapes["embeds"][1])  # embeds [B, hidden]
    _, kv_heads, _, head_dim = shapes["past_k0"]  # [B, heads, M, D]
    rows = []
    for at in positions:
        length = max(PROBE_LENGTH, at + 1)
        caches = [
            [torch.zeros(batch, kv_heads, length, head_dim) for _ in range(step.layers)]
            for _ in "kv"
        ]
        embeds = torch.zeros(batch, hidden)
        pos = torch.full((batch,), at, dtype=torch.long)
        step.run(embeds, pos, *caches)  # warm
        started = time.perf_counter()
        for _ in range(PROBE_REPEATS):
            step.run(embeds, pos, *caches)
        seconds = (time.perf_counter() - started) / PROBE_REPEATS
        kv_bytes = 2 * batch * (at + 1) * kv_heads * head_dim * 4 * step.layers
        rows.append({"position": at, "ms": 1e3 * seconds, "kv_mb": kv_bytes / 1e6})
    base = rows[0]
    for r in rows[1:]:
        extra_s = (r["ms"] - base["ms"]) / 1e3
        extra_mb = r["kv_mb"] - base["kv_mb"]
        r["kv_gb_per_s"] = extra_mb / 1e3 / extra_s if extra_s > 0 else None  # timer noise
    return rows


def measure(engine: Engine, text: str, folder: Path, say: Callable[[str], None]) -> dict[str, Any]:
    """One synthesis of `text` into a WAV file in `folder` at the user's defaults (after a
    short warm-up), timed by stage."""
    model = engine.model
    if model is None or engine.loaded is None:
        raise ModelError("No model is loaded.")
    request = SynthesisRequest(text, seed=SEED)  # everything else: the user's defaults
    warm = plan_synthesis(engine, SynthesisRequest(WARM_UP_TEXT, seed=SEED))
    synthesize_to_file(engine, warm, folder / "warm-up.wav")
    with timing_stages(model) as clock:
        started = time.perf_counter()
        plan = plan_synthesis(engine, request)
        written = synthesize_to_file(engine, plan, folder / "anatomy.wav")
        wall = time.perf_counter() - started
    summary = written.summary
    audio = summary.audio_seconds if summary else 0.0
    section = {
        "chars": len(text),
        "engine": engine.loaded.engine.value,
        "precision": engine.loaded.precision.value,
        "threads": torch.get_num_threads(),
        "refine_text": request.refine_text,
        "segment_size": request.segment_size,
        "segments": len(plan.segments),
        "batch": plan.batch_size,
        "gpt_steps": summary.steps if summary else 0,
        "file_s": written.seconds,
        **figures(clock, wall, audio),
    }
    if model.decode_step is not None:  # the ONNX Runtime engine: its step's cost by position
        section["step_by_position"] = step_by_position(model.decode_step, plan.batch_size)
    say(f"anatomy: {wall:.2f} s for {audio:.1f} s of audio ({len(plan.segments)} segments)")
    return section


def run(
    model: str,
    device: str | None,
    threads: int | None,
    long_chars: int,
    say: Callable[[str], None],
    engine_kind: str = "auto",
) -> dict[str, Any]:
    """The bench's report with the anatomy section alone (`chattts-studio-cli bench
    --sections anatomy`): its own engine, loaded as the front ends load it (engine auto)."""
    if threads:
        torch.set_num_threads(threads)
    engine = Engine()
    loaded = engine.load(model, device, "fp32", engine=engine_kind)
    say(f"anatomy: {loaded.info.label} on {loaded.device.label}, {loaded.engine.value} engine")
    report = describe(loaded, 1)
    try:
        with tempfile.TemporaryDirectory(prefix="chattts-anatomy-") as folder:
            report["anatomy"] = measure(engine, long_text(long_chars), Path(folder), say)
    finally:
        engine.unload()
    return report
