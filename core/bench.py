"""`chattts-studio-cli bench`: stock ChatTTS against the studio engine, side by side, on the
same weights, text, speaker and step counts, plus batch, precision, first-audio and
weight-read-floor tables. Timings are medians after a warm-up; the spread says how noisy."""

import json
import platform
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from . import SAMPLE_RATE, SAMPLES_PER_STEP
from .engine import Engine
from .errors import Cancelled
from .request import SynthesisRequest
from .text import Segment, split_segments

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


def _time(fn: Callable[[], Any]) -> float:
    started = time.perf_counter()
    fn()
    return time.perf_counter() - started


class Bench:
    def __init__(self, engine: Engine, repeats: int, say: Callable[[str], None]) -> None:
        self.engine = engine
        self.repeats = repeats
        self.say = say
        self.speaker = engine.sample_speaker(2)
        self.device = engine.loaded.device.id if engine.loaded else "cpu"

    def _sync(self) -> None:
        if self.device.startswith("cuda"):
            torch.cuda.synchronize()

    # -- the two ways to synthesize ------------------------------------------------------
    def stock(self, segments: list[Segment], batch: int, stream: bool = False) -> float:
        """Chat.infer as ChatTTS's README uses it, `batch` segments a call, each call run to its
        longest segment's step count (its rows cannot stop separately). Returns the time to the
        first playable samples when stream, else the wall time."""
        from ChatTTS import Chat

        chat = self.engine.chat
        started = time.perf_counter()
        for i in range(0, len(segments), batch):
            chunk = segments[i : i + batch]
            steps = max(s.step_cap for s in chunk)
            params = Chat.InferCodeParams(
                spk_emb=self.speaker,
                max_new_token=steps,
                min_new_token=steps,
                show_tqdm=False,
                ensure_non_empty=False,
            )
            texts = [s.text for s in chunk]
            out = chat.infer(  # type: ignore[attr-defined]
                texts,
                skip_refine_text=True,
                split_text=False,
                stream=stream,
                params_infer_code=params,
            )
            if stream:
                for wav in out:
                    if np.abs(wav).max() > 0:
                        self._sync()
                        return time.perf_counter() - started
            self._sync()
        return time.perf_counter() - started

    def studio(self, text: str, segment_size: int, batch: int, first_audio: bool = False) -> float:
        request = SynthesisRequest(
            text,
            seed=2,
            speaker=self.speaker,
            refine_text=False,
            segment_size=segment_size,
            batch_size=batch,
        )
        started = time.perf_counter()
        first: list[float] = []

        def on_chunk(_chunk: object) -> None:
            if not first:
                self._sync()
                first.append(time.perf_counter() - started)

        try:
            for _ in self.engine.synthesize(request, on_chunk=on_chunk if first_audio else None):
                if first_audio and first:
                    self.engine.cancel()  # the rest does not count
        except Cancelled:
            pass
        if first_audio:
            return first[0]
        self._sync()
        return time.perf_counter() - started

    # -- tables ---------------------------------------------------------------------------
    def ab(self, name: str, text: str, segment_size: int, batch: int) -> dict[str, Any]:
        segments = split_segments(text, segment_size)
        audio = sum(s.step_cap for s in segments) * SAMPLES_PER_STEP / SAMPLE_RATE
        self.say(f"A/B {name}: {len(segments)} segment(s), {audio:.1f} s of audio, batch {batch}")
        self.stock(segments[:1], 1)  # warm-up
        self.studio(segments[0].text, segment_size, 1)
        stock, studio, ratios = Timing(), Timing(), []
        for _ in range(self.repeats):
            a = self.stock(segments, batch)
            b = self.studio(text, segment_size, batch)
            stock.runs.append(a)
            studio.runs.append(b)
            ratios.append(a / b)
            self.say(f"  stock {a:.2f} s, studio {b:.2f} s, ratio {a / b:.2f}")
        return {
            "case": name,
            "segments": len(segments),
            "batch": batch,
            "audio_s": audio,
            "stock_s": stock.median,
            "studio_s": studio.median,
            "stock_rtf": stock.median / audio,
            "studio_rtf": studio.median / audio,
            "pair_ratios": ratios,
            "median_ratio": statistics.median(ratios),
            "spread": max(stock.spread, studio.spread),
        }

    def batches(self, sizes: list[int]) -> list[dict[str, Any]]:
        rows = []
        sentence = "今天天气很好。"
        self.studio(sentence * sizes[0], len(sentence), sizes[0])  # warm-up
        for batch in sizes:
            text = sentence * batch
            steps = sum(s.step_cap for s in split_segments(text, len(sentence)))
            audio = steps * SAMPLES_PER_STEP / SAMPLE_RATE
            timing = Timing()
            for _ in range(self.repeats):
                timing.runs.append(self.studio(text, len(sentence), batch))
            summary = self.engine.last_summary
            peak = summary.peak_memory if summary else None
            rows.append(
                {
                    "batch": batch,
                    "audio_s": audio,
                    "wall_s": timing.median,
                    "rtf": timing.median / audio,
                    "steps_per_s": steps / timing.median,
                    "peak_memory_mib": (peak or 0) / 2**20,
                    "spread": timing.spread,
                }
            )
            self.say(
                f"  batch {batch}: RTF {timing.median / audio:.3f}, "
                f"{steps / timing.median:.1f} steps/s"
            )
        return rows

    def first_audio(self) -> dict[str, Any]:
        segments = split_segments(SENTENCE, 50)
        stock, ours = Timing(), Timing()
        self.stock(segments, 1, stream=True)
        self.studio(SENTENCE, 50, 1, first_audio=True)
        for _ in range(self.repeats):
            stock.runs.append(self.stock(segments, 1, stream=True))
            ours.runs.append(self.studio(SENTENCE, 50, 1, first_audio=True))
        return {
            "stock_stream_s": stock.median,
            "studio_s": ours.median,
            "ratio": ours.median / stock.median,
            "spread": max(stock.spread, ours.spread),
        }

    def greedy(self, steps: int = 60) -> tuple[torch.Tensor, torch.Tensor]:
        """Codes and hidden states of a near-greedy decode (top-K 1, temperature 0.05)."""
        from .decode import FastDecoder, Job, Sampling

        chat = self.engine.chat
        emb = self.engine._prompt(chat, SENTENCE, SynthesisRequest(SENTENCE), self.speaker)
        decoder = FastDecoder(chat, 1, emb.shape[1] + steps + 1)
        torch.manual_seed(0)
        run = decoder.run([Job(0, emb, steps, steps)], Sampling(0.05, 0.7, 1), lambda: False)
        job = next(j for j in run if j)
        return torch.stack(job.tokens).cpu(), torch.stack(job.hiddens).float().cpu()

    def floor(self) -> dict[str, Any]:
        """Reading every GPT weight once (a matrix-vector pass over the same shapes) against
        the engine's batch-1 decode step."""
        chat = self.engine.chat
        gpt = chat.gpt.gpt  # type: ignore[attr-defined]
        weights = [m.weight for m in gpt.modules() if isinstance(m, torch.nn.Linear)]
        weights.append(torch.cat([h.weight for h in chat.embed.head_code]).detach())  # type: ignore[attr-defined]
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
            from .decode import FastDecoder, Job, Sampling

            emb = self.engine._prompt(chat, text, SynthesisRequest(text), self.speaker)
            decoder = FastDecoder(chat, 1, emb.shape[1] + steps + 1)
            started = time.perf_counter()
            for _ in decoder.run(
                [Job(0, emb, steps, steps)], Sampling(0.3, 0.7, 20), lambda: False
            ):
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
) -> dict[str, Any]:
    if threads:
        torch.set_num_threads(threads)
    engine = Engine()
    loaded = engine.load(model, device, "fp32")
    say(f"model {loaded.info.label} on {loaded.device.label}, {torch.get_num_threads()} threads")
    bench = Bench(engine, repeats, say)
    report: dict[str, Any] = {
        "machine": f"{platform.processor() or platform.machine()}, "
        f"{torch.get_num_threads()} threads; {loaded.device.label}",
        "model": loaded.info.label,
        "torch": torch.__version__,
        "repeats": repeats,
    }
    report["ab"] = [
        bench.ab("one sentence", SENTENCE, 50, 1),
        bench.ab(f"long text ({long_chars} chars)", long_text(long_chars), segment_size, batch),
    ]
    say("batch sizes")
    report["batches"] = bench.batches(batch_sizes)
    say("first audio")
    report["first_audio"] = bench.first_audio()
    say("weight-read floor")
    report["floor"] = bench.floor()
    report["precisions"] = []
    reference: tuple[torch.Tensor, torch.Tensor] = (torch.zeros(0), torch.zeros(0))
    for precision in precisions:
        try:
            engine.load(model, device, precision)
        except Exception as exc:
            report["precisions"].append({"precision": precision, "refused": str(exc)})
            continue
        bench = Bench(engine, repeats, say)
        row = bench.batches([1, batch])
        tokens, hiddens = bench.greedy()
        if precision == "fp32":
            reference = (tokens, hiddens)
        agree = float((tokens == reference[0]).all(1).float().mean())
        cosine = float(torch.nn.functional.cosine_similarity(hiddens[:1], reference[1][:1]))
        report["precisions"].append(
            {
                "precision": precision,
                "batch1_rtf": row[0]["rtf"],
                f"batch{batch}_rtf": row[1]["rtf"],
                "batch1_steps_per_s": row[0]["steps_per_s"],
                "greedy_code_agreement": agree,
                "first_step_hidden_cosine": cosine,
            }
        )
    engine.unload()
    return report


def format_report(report: dict[str, Any]) -> str:
    lines = [
        f"machine: {report['machine']}",
        f"model: {report['model']}",
        f"torch {report['torch']}, medians of {report['repeats']} runs after a warm-up",
        "",
        "1. stock Chat.infer vs studio (same weights, text, speaker, step counts)",
        "| case | segments | batch | audio s | stock s | studio s | stock RTF | studio RTF "
        "| pair ratios | median ratio | spread |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in report["ab"]:
        ratios = " ".join(f"{x:.2f}" for x in r["pair_ratios"])
        lines.append(
            f"| {r['case']} | {r['segments']} | {r['batch']} | {r['audio_s']:.1f} | "
            f"{r['stock_s']:.2f} | {r['studio_s']:.2f} | {r['stock_rtf']:.3f} | "
            f"{r['studio_rtf']:.3f} | {ratios} | **{r['median_ratio']:.2f}x** | "
            f"{r['spread']:.0%} |"
        )
    lines += [
        "",
        "2. studio by batch size",
        "| batch | RTF | steps/s (all rows) | peak memory MiB | spread |",
        "|---|---|---|---|---|",
    ]
    for r in report["batches"]:
        lines.append(
            f"| {r['batch']} | {r['rtf']:.3f} | {r['steps_per_s']:.1f} | "
            f"{r['peak_memory_mib']:.0f} | {r['spread']:.0%} |"
        )
    lines += [
        "",
        "3. by precision; quality against fp32: agreement of 60 near-greedy codes (random",
        "   weights make one early difference change the rest) and the first hidden state's cosine",
        "| precision | batch 1 RTF | larger batch RTF | batch 1 steps/s | code agreement "
        "| hidden cosine |",
        "|---|---|---|---|---|---|",
    ]
    for r in report["precisions"]:
        if "refused" in r:
            lines.append(f"| {r['precision']} | refused: {r['refused']} | | | | |")
            continue
        big = next(
            v
            for k, v in r.items()
            if k.startswith("batch") and k.endswith("_rtf") and k != "batch1_rtf"
        )
        lines.append(
            f"| {r['precision']} | {r['batch1_rtf']:.3f} | {big:.3f} | "
            f"{r['batch1_steps_per_s']:.1f} | {r['greedy_code_agreement']:.0%} | "
            f"{r['first_step_hidden_cosine']:.5f} |"
        )
    f = report["first_audio"]
    lines += [
        "",
        "4. time to first audio, batch 1",
        "| stock streaming s | studio s | ratio | spread |",
        "|---|---|---|---|",
        f"| {f['stock_stream_s']:.2f} | {f['studio_s']:.2f} | {f['ratio']:.2f} | "
        f"{f['spread']:.0%} |",
    ]
    fl = report["floor"]
    lines += [
        "",
        "5. batch-1 decode against the weight-read floor",
        "| GPT weights GB | one read ms | GB/s | studio step ms | % of floor | spread |",
        "|---|---|---|---|---|---|",
        f"| {fl['weights_gb']:.2f} | {fl['floor_ms']:.1f} | {fl['floor_gb_per_s']:.1f} | "
        f"{fl['step_ms']:.1f} | {fl['percent_of_floor']:.0f}% | {fl['spread']:.0%} |",
    ]
    return "\n".join(lines)


def to_json(report: dict[str, Any]) -> str:
    return json.dumps(report, indent=2, ensure_ascii=False)
