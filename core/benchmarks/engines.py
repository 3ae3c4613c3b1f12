"""The bench's engine section: torch and ONNX Runtime, fp32 and int8, side by side: steps/s by
batch, the long text's RTF and agreement with torch fp32. An engine that cannot run is a row with
the reason. See docs/performance.md.
"""

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from chattts_studio.core import seeds
from chattts_studio.core.benchmarks.bench import SEED, SENTENCE, Timing, describe, long_text
from chattts_studio.core.engine.chattts.chat import ChatModel
from chattts_studio.core.engine.decode.job import Job
from chattts_studio.core.engine.decode.loop import FastDecoder
from chattts_studio.core.engine.decode.rowwise import RowSampling
from chattts_studio.core.engine.devices import resolve_device
from chattts_studio.core.engine.engine import Engine
from chattts_studio.core.engine.engine_choice import EngineKind, check_engine
from chattts_studio.core.engine.request import Precision, Sampling, SynthesisRequest
from chattts_studio.core.errors import ModelError, StudioError

# The rows, in the order they run: torch fp32 first, every other row is compared with it.
ROWS = (
    (EngineKind.TORCH, Precision.FP32),
    (EngineKind.ONNX, Precision.FP32),
    (EngineKind.TORCH, Precision.INT8),
    (EngineKind.ONNX, Precision.INT8),
)
DEFAULTS = SynthesisRequest("")
# What the engine samples with at the user's defaults; the KL is taken at its temperature.
SAMPLING = Sampling(DEFAULTS.temperature, DEFAULTS.top_p, DEFAULTS.top_k)
AGREE_SEED = seeds.text_seed(SEED)
WARM_UP_TEXT = "你好。"  # 30 steps


@dataclass(frozen=True)
class EngineSettings:
    batch_sizes: tuple[int, ...] = (1, 8, 16)
    short_steps: int = 8  # the timed decode runs: long minus short steps
    long_steps: int = 40
    agree_steps: int = 300  # teacher-forced steps compared
    free_steps: int = 100  # free-running steps compared
    long_chars: int = 600
    refine_text: bool = False
    repeats: int = 3
    # Which rows run (torch fp32 first: the reference); all four by default.
    rows: tuple[tuple[EngineKind, Precision], ...] = ROWS


class RecordingDecoder(FastDecoder):
    """A batch-1 decoder that keeps every step's logits [num_vq, num_codes] and, with `forced`
    ([steps, num_vq] codes), feeds those codes back instead of what it would draw."""

    def __init__(self, model: ChatModel, max_len: int, forced: torch.Tensor | None) -> None:
        super().__init__(model, 1, max_len)
        self.forced = forced
        self.steps_logits: list[torch.Tensor] = []

    def sample_step(
        self,
        logits: torch.Tensor,
        history: torch.Tensor,
        steps: torch.Tensor,
        min_steps: torch.Tensor,
        rows: RowSampling,
        generators: list[torch.Generator | None] | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        self.steps_logits.append(logits.detach().float().cpu().clone())
        if self.forced is None:
            return super().sample_step(logits, history, steps, min_steps, rows, generators)
        codes = self.forced[len(self.steps_logits) - 1].view(1, -1).to(logits.device)
        return codes, torch.zeros(1, dtype=torch.bool, device=logits.device)


@dataclass(frozen=True)
class Trace:
    """One batch-1 decode: its codes [steps, num_vq] and logits [steps, num_vq, num_codes]."""

    codes: torch.Tensor
    logits: torch.Tensor


class EngineBench:
    def __init__(self, engine: Engine, settings: EngineSettings, say: Callable[[str], None]):
        self.engine = engine
        self.settings = settings
        self.say = say
        self.speaker = engine.sample_speaker(SEED)

    @property
    def model(self) -> ChatModel:
        if self.engine.model is None:
            raise ModelError("No model is loaded.")
        return self.engine.model

    def prompt(self) -> torch.Tensor:
        """The prompt's embedding as the engine makes it (normalised text, speaker applied)."""
        model = self.model
        ids = model.prompt_ids(model.normalize(SENTENCE), DEFAULTS.speed, self.speaker)
        return model.embed(ids, self.speaker)

    # -- speed ----------------------------------------------------------------------------
    def decode_seconds(self, batch: int, steps: int) -> float:
        """`batch` rows of exactly `steps` steps each (EOS held off), on a new decoder."""
        emb = self.prompt()
        decoder = FastDecoder(self.model, batch, emb.shape[1] + steps + 1)
        jobs = [Job(n, emb, steps, steps) for n in range(batch)]
        started = time.perf_counter()
        for _ in decoder.run(jobs, SAMPLING, lambda: False):
            pass
        return time.perf_counter() - started

    def step_seconds(self, batch: int) -> float:
        """One step's time: the long run less the short one, over the steps between. A
        noisy machine can make that difference vanish on a tiny model; then the long run
        over its steps (prefill included: an upper bound)."""
        s = self.settings
        long = self.decode_seconds(batch, s.long_steps)
        short = self.decode_seconds(batch, s.short_steps)
        if long > short:
            return (long - short) / (s.long_steps - s.short_steps)
        return long / s.long_steps

    def decode_speed(self) -> list[dict[str, Any]]:
        s = self.settings
        rows = []
        for batch in s.batch_sizes:
            self.decode_seconds(batch, s.short_steps)  # warm-up: the shapes, the allocator
            per_step = Timing([self.step_seconds(batch) for _ in range(s.repeats)])
            rows.append(
                {
                    "batch": batch,
                    "step_ms": per_step.median * 1e3,
                    "steps_per_s": 1 / per_step.median,
                    "row_steps_per_s": batch / per_step.median,
                    "spread": per_step.spread,
                }
            )
            self.say(f"    batch {batch}: {per_step.median * 1e3:.1f} ms a step")
        return rows

    def long_text(self) -> dict[str, Any]:
        s = self.settings
        request = SynthesisRequest(long_text(s.long_chars), seed=SEED, refine_text=s.refine_text)
        plan = self.engine.plan(request)
        # Warm-up: the engine's first synthesis (vocoder, allocator, a session's first run);
        # short, since on the full model a step costs a tenth of a second.
        warm = SynthesisRequest(WARM_UP_TEXT, seed=SEED, refine_text=s.refine_text)
        for _ in self.engine.synthesize(warm):
            pass
        walls: list[float] = []
        audio: list[float] = []
        for _ in range(s.repeats):
            started = time.perf_counter()
            audio.append(sum(r.audio_seconds for r in self.engine.synthesize(plan)))
            walls.append(time.perf_counter() - started)
            self.say(f"    long text: {walls[-1]:.2f} s for {audio[-1]:.1f} s of audio")
        rtf = Timing([w / a if a else float("inf") for w, a in zip(walls, audio, strict=True)])
        return {
            "segments": len(plan.segments),
            "batch": plan.batch_size,
            "audio_s": statistics.median(audio),
            "wall_s": statistics.median(walls),
            "rtf": rtf.median,
            "runs": len(walls),
            "spread": rtf.spread,
        }

    # -- agreement ------------------------------------------------------------------------
    def trace(self, steps: int, forced: torch.Tensor | None = None) -> Trace:
        """A batch-1 decode of `steps` steps (EOS held off) with the job's own seeded stream;
        `forced`: those codes fed back instead of the drawn ones (teacher forcing)."""
        emb = self.prompt()
        decoder = RecordingDecoder(self.model, emb.shape[1] + steps + 1, forced)
        job = Job(0, emb, steps, steps, seed=AGREE_SEED)
        done = [j for j in decoder.run([job], SAMPLING, lambda: False) if j is not None]
        codes = torch.stack(done[0].tokens).cpu() if done else torch.zeros(0, self.model.num_vq)
        return Trace(codes.long(), torch.stack(decoder.steps_logits))

    def agreement(self, reference: Trace) -> dict[str, Any]:
        s = self.settings
        forced = self.trace(s.agree_steps, reference.codes)
        free = self.trace(s.free_steps)
        return compare(reference, forced, free.codes, SAMPLING.temperature)


def compare(
    reference: Trace, forced: Trace, free_codes: torch.Tensor, temperature: float
) -> dict[str, Any]:
    """Teacher-forced logits against the reference's, step by step, and the leading steps of
    a free run whose codes equal the reference's."""
    steps = min(len(reference.logits), len(forced.logits))
    ref = reference.logits[:steps].double()
    other = forced.logits[:steps].double()
    diff = (ref - other).abs().amax(dim=(1, 2))  # per step, over the four code streams
    p_log = torch.log_softmax(ref / temperature, -1)
    q_log = torch.log_softmax(other / temperature, -1)
    # KL(torch || other) of each code stream's distribution, averaged over the streams.
    kl = (p_log.exp() * (p_log - q_log)).sum(-1).mean(-1).clamp(min=0.0)
    n = min(len(free_codes), len(reference.codes))
    same = [*(free_codes[:n] == reference.codes[:n]).all(1).tolist(), False]
    return {
        "steps": steps,
        "logits_max_diff": float(diff.max()) if steps else 0.0,
        "logits_mean_max_diff": float(diff.mean()) if steps else 0.0,
        "kl_mean": float(kl.mean()) if steps else 0.0,
        "kl_max": float(kl.max()) if steps else 0.0,
        "free_steps": n,
        "equal_leading_steps": same.index(False),
    }


def run_engines(
    engine: Engine,
    model: str,
    device: str | None,
    settings: EngineSettings,
    say: Callable[[str], None],
) -> dict[str, Any]:
    """Every row of ROWS measured on `engine` (loaded or not), torch fp32 first; the engine is
    left loaded with the last row's."""
    target = resolve_device(device)
    default = check_engine(target, Precision.FP32, EngineKind.AUTO)
    section: dict[str, Any] = {
        "threads": torch.get_num_threads(),
        "batch_sizes": list(settings.batch_sizes),
        "short_steps": settings.short_steps,
        "long_steps": settings.long_steps,
        "agree_steps": settings.agree_steps,
        "free_steps": settings.free_steps,
        "temperature": SAMPLING.temperature,
        "long_chars": settings.long_chars,
        "refine_text": settings.refine_text,
        "repeats": settings.repeats,
        "default_engine": default.value,
        "rows": [],
    }
    reference: Trace | None = None
    for kind, precision in settings.rows:
        row: dict[str, Any] = {"engine": kind.value, "precision": precision.value}
        section["rows"].append(row)
        say(f"engine {kind.value} {precision.value}")
        try:
            started = time.perf_counter()
            engine.load(model, device, precision.value, engine=kind.value)
            row["load_s"] = time.perf_counter() - started
        except StudioError as exc:
            row["unavailable"] = str(exc)
            say(f"    unavailable: {exc}")
            continue
        bench = EngineBench(engine, settings, say)
        if reference is None:
            # The reference's own free run, with its logits: what every row is compared with.
            reference = bench.trace(max(settings.agree_steps, settings.free_steps))
        row["decode"] = bench.decode_speed()
        row["long_text"] = bench.long_text()
        row["agreement"] = bench.agreement(reference)
    base = section["rows"][0].get("long_text")
    for row in section["rows"]:
        if base and "long_text" in row:
            row["long_text"]["ratio_to_torch_fp32"] = base["rtf"] / row["long_text"]["rtf"]
    return section


def run(
    model: str,
    device: str | None,
    threads: int | None,
    settings: EngineSettings,
    say: Callable[[str], None],
) -> dict[str, Any]:
    """The bench's report with the engine section alone (`chattts-studio-cli bench
    --sections engines`)."""
    if threads:
        torch.set_num_threads(threads)
    engine = Engine()
    loaded = engine.load(model, device, "fp32")
    say(f"model {loaded.info.label} on {loaded.device.label}, {torch.get_num_threads()} threads")
    report = describe(loaded, settings.repeats)
    report["engines"] = run_engines(engine, model, device, settings, say)
    engine.unload()
    return report
