"""`chattts-studio-cli bench`: stock ChatTTS against the studio engine on the same weights, text,
speaker and rules, plus batch, precision and first-audio tables; medians after a warm-up. See
docs/performance.md.
"""

import platform
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from chattts_studio.core import SAMPLE_RATE, SAMPLES_PER_STEP, seeds
from chattts_studio.core.engine.cancel import CancelToken
from chattts_studio.core.engine.chattts.chat import ChatModel
from chattts_studio.core.engine.decode.job import Job
from chattts_studio.core.engine.decode.loop import FastDecoder
from chattts_studio.core.engine.engine import Engine
from chattts_studio.core.engine.loading import LoadedModel
from chattts_studio.core.engine.request import (
    AudioChunk,
    Sampling,
    SegmentRestarted,
    SynthesisRequest,
)
from chattts_studio.core.errors import Cancelled, ModelError
from chattts_studio.core.text.prepare import Segment, split_segments

SEED = 2  # the speaker, and (core/seeds.py's text_seed, as the engine) both sides' sampling
SENTENCE = "四川美食确实以辣闻名，但也有不辣的选择。"
PASSAGE = (
    "四川美食确实以辣闻名，但也有不辣的选择。比如甜水面、赖汤圆、蛋烘糕、叶儿粑等，这些小吃口味温和，"
    "甜而不腻，也很受欢迎。成都的街头巷尾到处都是小吃店，从早到晚都有人排队。早上可以吃一碗豆花，"
    "中午来一份担担面，晚上再去夜市逛一逛。很多游客来到这里，第一件事就是找一家地道的火锅店。"
)


def long_text(chars: int) -> str:
    text = ""
    while len(text) < chars:
        text += PASSAGE
    return text[:chars].rstrip("，") + "。"


@dataclass
class Timing:
    runs: list[float] = field(default_factory=list)

    @property
    def median(self) -> float:
        return statistics.median(self.runs)

    @property
    def spread(self) -> float:
        """Largest relative distance of a run from the median."""
        m = self.median
        return max(abs(r - m) for r in self.runs) / m if m else 0.0


@dataclass(frozen=True)
class Run:
    """One timed synthesis: its wall time and the seconds of audio it really produced."""

    wall: float
    audio: float

    @property
    def rtf(self) -> float:
        return self.wall / self.audio if self.audio else float("inf")


def _time(fn: Callable[[], Any]) -> float:
    started = time.perf_counter()
    fn()
    return time.perf_counter() - started


def planned_seconds(segments: list[Segment]) -> float:
    """The audio the segments' step caps allow (what random weights held to the cap make)."""
    return sum(s.step_cap for s in segments) * SAMPLES_PER_STEP / SAMPLE_RATE


class Bench:
    def __init__(self, engine: Engine, repeats: int, say: Callable[[str], None]) -> None:
        self.engine = engine
        self.repeats = repeats
        self.say = say
        self.speaker = engine.sample_speaker(SEED)
        self.device = engine.loaded.device.id if engine.loaded else "cpu"

    @property
    def model(self) -> ChatModel:
        if self.engine.model is None:
            raise ModelError("No model is loaded.")
        return self.engine.model

    @property
    def random_weights(self) -> bool:
        """Both sides hold EOS off until the cap on random weights, as the engine does."""
        return bool(self.engine.loaded and self.engine.loaded.info.random_weights)

    def _sync(self) -> None:
        if self.device.startswith("cuda"):
            torch.cuda.synchronize()

    # -- the two ways to synthesize ------------------------------------------------------
    def stock(self, segments: list[Segment], batch: int, stream: bool = False) -> Run:
        """Chat.infer as ChatTTS's README uses it, `batch` segments a call, each call capped at
        its longest segment's cap (its rows cannot stop separately). Run.wall is the time to
        the first playable samples when stream (audio 0), else the whole wall time."""
        seeds.seed_text_passes(SEED)
        started = time.perf_counter()
        audio = 0
        for i in range(0, len(segments), batch):
            chunk = segments[i : i + batch]
            cap = max(s.step_cap for s in chunk)
            out = self.model.infer(
                [s.text for s in chunk],
                stream,
                spk_emb=self.speaker,
                max_new_token=cap,
                min_new_token=cap if self.random_weights else 1,
            )
            if stream:
                for wav in out:
                    if wav.size and np.abs(wav).max() > 0:
                        self._sync()
                        return Run(time.perf_counter() - started, 0.0)
                continue
            audio += sum(len(wav) for wav in out)
        self._sync()
        return Run(time.perf_counter() - started, audio / SAMPLE_RATE)

    def studio(self, text: str, segment_size: int, batch: int, first_audio: bool = False) -> Run:
        """The engine on the same text. Run.wall is the time to the first playable audio when
        first_audio (the rest is cancelled), else the whole wall time."""
        request = SynthesisRequest(
            text,
            seed=SEED,
            speaker=self.speaker,
            refine_text=False,
            segment_size=segment_size,
            batch_size=batch,
        )
        token = CancelToken()
        started = time.perf_counter()
        first: list[float] = []

        def listener(event: AudioChunk | SegmentRestarted) -> None:
            if isinstance(event, AudioChunk) and event.audio.size and not first:
                self._sync()
                first.append(time.perf_counter() - started)
                token.cancel()  # the rest does not count

        audio = 0.0
        try:
            for result in self.engine.synthesize(request, listener if first_audio else None, token):
                audio += result.audio_seconds
        except Cancelled:
            pass
        self._sync()
        wall = time.perf_counter() - started
        return Run(first[0], 0.0) if first_audio and first else Run(wall, audio)

    # -- tables ---------------------------------------------------------------------------
    def ab(self, name: str, text: str, segment_size: int, batch: int) -> dict[str, Any]:
        segments = split_segments(text, segment_size)
        planned = planned_seconds(segments)
        self.say(
            f"A/B {name}: {len(segments)} segment(s), caps allow {planned:.1f} s of audio, "
            f"batch {batch}"
        )
        self.stock(segments[:1], 1)  # warm-up
        self.studio(segments[0].text, segment_size, 1)
        stock: list[Run] = []
        studio: list[Run] = []
        for _ in range(self.repeats):
            a = self.stock(segments, batch)
            b = self.studio(text, segment_size, batch)
            stock.append(a)
            studio.append(b)
            self.say(
                f"  stock {a.wall:.2f} s for {a.audio:.1f} s of audio (RTF {a.rtf:.3f}), "
                f"studio {b.wall:.2f} s for {b.audio:.1f} s (RTF {b.rtf:.3f}), "
                f"ratio {a.rtf / b.rtf:.2f}"
            )
        ratios = [a.rtf / b.rtf for a, b in zip(stock, studio, strict=True)]
        stock_rtf, studio_rtf = Timing([r.rtf for r in stock]), Timing([r.rtf for r in studio])
        return {
            "case": name,
            "segments": len(segments),
            "batch": batch,
            "planned_audio_s": planned,
            "stock_audio_s": statistics.median(r.audio for r in stock),
            "studio_audio_s": statistics.median(r.audio for r in studio),
            "stock_s": statistics.median(r.wall for r in stock),
            "studio_s": statistics.median(r.wall for r in studio),
            "stock_rtf": stock_rtf.median,
            "studio_rtf": studio_rtf.median,
            "pair_ratios": ratios,
            "median_ratio": statistics.median(ratios),
            "spread": max(stock_rtf.spread, studio_rtf.spread),
        }

    def batches(self, sizes: list[int]) -> list[dict[str, Any]]:
        rows = []
        sentence = "今天天气很好。"
        self.studio(sentence * sizes[0], len(sentence), sizes[0])  # warm-up
        for batch in sizes:
            text = sentence * batch
            runs = [self.studio(text, len(sentence), batch) for _ in range(self.repeats)]
            wall = Timing([r.wall for r in runs])
            summary = self.engine.last_summary
            steps = summary.steps if summary else 0
            peak = summary.peak_memory if summary else None
            rtf = statistics.median(r.rtf for r in runs)
            rows.append(
                {
                    "batch": batch,
                    "audio_s": statistics.median(r.audio for r in runs),
                    "wall_s": wall.median,
                    "rtf": rtf,
                    "steps_per_s": steps / wall.median,
                    "peak_memory_mib": (peak or 0) / 2**20,
                    "spread": wall.spread,
                }
            )
            self.say(f"  batch {batch}: RTF {rtf:.3f}, {steps / wall.median:.1f} steps/s")
        return rows

    def first_audio(self) -> dict[str, Any]:
        segments = split_segments(SENTENCE, 50)
        stock, ours = Timing(), Timing()
        self.stock(segments, 1, stream=True)
        self.studio(SENTENCE, 50, 1, first_audio=True)
        for _ in range(self.repeats):
            stock.runs.append(self.stock(segments, 1, stream=True).wall)
            ours.runs.append(self.studio(SENTENCE, 50, 1, first_audio=True).wall)
        return {
            "stock_stream_s": stock.median,
            "studio_s": ours.median,
            "ratio": ours.median / stock.median,
            "spread": max(stock.spread, ours.spread),
        }

    def _job(self, text: str, steps: int) -> tuple[FastDecoder, Job]:
        """A batch-1 decoder and a job of exactly `steps` steps, prompt made as the engine
        makes it (normalised text, the speaker applied)."""
        model = self.model
        ids = model.prompt_ids(model.normalize(text), 5, self.speaker)
        emb = model.embed(ids, self.speaker)
        return FastDecoder(model, 1, emb.shape[1] + steps + 1), Job(0, emb, steps, steps)

    def greedy(self, steps: int = 60) -> tuple[torch.Tensor, torch.Tensor]:
        """Codes and hidden states of a near-greedy decode (top-K 1, temperature 0.05)."""
        decoder, job = self._job(SENTENCE, steps)
        torch.manual_seed(0)
        run = decoder.run([job], Sampling(0.05, 0.7, 1), lambda: False)
        done = next(j for j in run if j)
        return torch.stack(done.tokens).cpu(), torch.stack(done.hiddens).float().cpu()

    def floor(self) -> dict[str, Any]:
        """Reading every GPT weight once (a matrix-vector pass over the same shapes) against
        the engine's batch-1 decode step."""
        weights = [w.detach() for w in self.model.gpt_weights()]
        vectors = [torch.randn(1, w.shape[1], dtype=w.dtype, device=w.device) for w in weights]
        gbytes = sum(w.numel() * w.element_size() for w in weights) / 1e9

        @torch.inference_mode()
        def matvec() -> None:
            for w, v in zip(weights, vectors, strict=True):
                torch.nn.functional.linear(v, w)
            self._sync()

        matvec()
        floor = Timing([_time(matvec) for _ in range(max(5, self.repeats * 3))])
        # The engine's batch-1 step: a long and a short run differ only in steps.
        short, long = 24, 120
        text = "今" * 200

        def decode(steps: int) -> float:
            decoder, job = self._job(text, steps)
            started = time.perf_counter()
            for _ in decoder.run([job], Sampling(0.3, 0.7, 20), lambda: False):
                pass
            self._sync()
            return time.perf_counter() - started

        decode(short)
        step = Timing(
            [(decode(long) - decode(short)) / (long - short) for _ in range(self.repeats)]
        )
        return {
            "weights_gb": gbytes,
            "floor_ms": floor.median * 1e3,
            "floor_gb_per_s": gbytes / floor.median,
            "step_ms": step.median * 1e3,
            "percent_of_floor": 100 * floor.median / step.median,
            "spread": max(floor.spread, step.spread),
        }


# engines, takes and anatomy are sections of their own modules (engines.py, takes.py, anatomy.py).
SECTIONS = ("ab", "batches", "first-audio", "floor", "precisions")


def describe(loaded: LoadedModel, repeats: int) -> dict[str, Any]:
    """What a report says first: the machine, the model, torch, the runs per figure."""
    return {
        "machine": f"{platform.processor() or platform.machine()}, "
        f"{torch.get_num_threads()} threads; {loaded.device.label}",
        "model": loaded.info.label,
        "random_weights": loaded.info.random_weights,
        "torch": torch.__version__,
        "repeats": repeats,
    }


def run(
    model: str,
    device: str | None,
    repeats: int,
    long_chars: int,
    segment_size: int,
    batch: int,
    batch_sizes: list[int],
    precisions: list[str],
    threads: int | None,
    say: Callable[[str], None],
    sections: tuple[str, ...] = SECTIONS,
) -> dict[str, Any]:
    """The report of the chosen `sections` (of SECTIONS)."""
    if threads:
        torch.set_num_threads(threads)
    engine = Engine()
    loaded = engine.load(model, device, "fp32")
    say(f"model {loaded.info.label} on {loaded.device.label}, {torch.get_num_threads()} threads")
    bench = Bench(engine, repeats, say)
    report = describe(loaded, repeats)
    if "ab" in sections:
        report["ab"] = [
            bench.ab("one sentence", SENTENCE, 50, 1),
            bench.ab(f"long text ({long_chars} chars)", long_text(long_chars), segment_size, batch),
        ]
    if "batches" in sections:
        say("batch sizes")
        report["batches"] = bench.batches(batch_sizes)
    if "first-audio" in sections:
        say("first audio")
        report["first_audio"] = bench.first_audio()
    if "floor" in sections:
        say("weight-read floor")
        report["floor"] = bench.floor()
    if "precisions" in sections:
        report["precisions"] = precision_rows(
            engine, model, device, repeats, batch, precisions, say
        )
    engine.unload()
    return report


def precision_rows(
    engine: Engine,
    model: str,
    device: str | None,
    repeats: int,
    batch: int,
    precisions: list[str],
    say: Callable[[str], None],
) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    reference: tuple[torch.Tensor, torch.Tensor] = (torch.zeros(0), torch.zeros(0))
    for precision in precisions:
        try:
            engine.load(model, device, precision)
        except Exception as exc:
            rows.append({"precision": precision, "refused": str(exc)})
            continue
        bench = Bench(engine, repeats, say)
        row = bench.batches([1, batch])
        tokens, hiddens = bench.greedy()
        if precision == "fp32":
            reference = (tokens, hiddens)
        agree = float((tokens == reference[0]).all(1).float().mean())
        cosine = float(torch.nn.functional.cosine_similarity(hiddens[:1], reference[1][:1]))
        rows.append(
            {
                "precision": precision,
                "batch1_rtf": row[0]["rtf"],
                f"batch{batch}_rtf": row[1]["rtf"],
                "batch1_steps_per_s": row[0]["steps_per_s"],
                "greedy_code_agreement": agree,
                "first_step_hidden_cosine": cosine,
            }
        )
    return rows
