"""The developer tools behind `bench` and `soak`: the bench credits each side with the audio it
really produced (not the audio the plan allowed), and the soak runs and reports memory."""

import dataclasses
from collections.abc import Iterator
from typing import Any

import pytest

from chattts_studio.core import SAMPLE_RATE
from chattts_studio.core.benchmarks.bench import Bench, planned_seconds
from chattts_studio.core.benchmarks.report import format_report
from chattts_studio.core.text.prepare import split_segments

TEXT = "你好。天气很好。"  # two segments at the smallest size
SEGMENT_SIZE = 5


def test_ab_counts_the_audio_each_side_produced(
    engine: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Real weights' rule on both sides: stop at EOS. The demo's random weights then emit EOS
    # at random (seeded) steps, well before the caps, so produced audio < planned audio.
    loaded = engine.loaded
    monkeypatch.setattr(
        engine,
        "loaded",
        dataclasses.replace(loaded, info=dataclasses.replace(loaded.info, random_weights=False)),
    )
    stock_calls: list[dict[str, Any]] = []
    studio_calls: list[float] = []
    real_infer, real_synthesize = engine.model.infer, engine.synthesize

    def infer(texts: list[str], stream: bool, **params: Any) -> Any:
        out = real_infer(texts, stream, **params)
        stock_calls.append({"rows": len(texts), "audio": sum(len(w) for w in out), **params})
        return out

    def synthesize(*args: Any, **kwargs: Any) -> Iterator[Any]:
        studio_calls.append(0.0)
        for result in real_synthesize(*args, **kwargs):
            studio_calls[-1] += result.audio_seconds
            yield result

    monkeypatch.setattr(engine.model, "infer", infer)
    monkeypatch.setattr(engine, "synthesize", synthesize)

    segments = split_segments(TEXT, SEGMENT_SIZE)
    assert len(segments) >= 2
    row = Bench(engine, 1, lambda _line: None).ab("test", TEXT, SEGMENT_SIZE, 1)

    # Calls: a one-segment warm-up on each side, then the timed run (one stock call a segment).
    timed_stock = stock_calls[1:]
    assert len(timed_stock) == len(segments) and len(studio_calls) == 2
    assert all(c["min_new_token"] == 1 for c in stock_calls)  # stock stops at EOS too
    stock_audio = sum(c["audio"] for c in timed_stock) / SAMPLE_RATE
    studio_audio = studio_calls[-1]
    planned = planned_seconds(segments)
    assert row["planned_audio_s"] == pytest.approx(planned)
    assert row["stock_audio_s"] == pytest.approx(stock_audio)
    assert row["studio_audio_s"] == pytest.approx(studio_audio)
    assert 0 < stock_audio < planned and 0 < studio_audio < planned
    assert row["stock_rtf"] == pytest.approx(row["stock_s"] / stock_audio)
    assert row["studio_rtf"] == pytest.approx(row["studio_s"] / studio_audio)
    assert row["median_ratio"] == pytest.approx(row["stock_rtf"] / row["studio_rtf"])


def test_stock_holds_eos_to_the_longest_cap_on_random_weights(
    engine: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Random weights: stock's call is held to its longest segment's cap (its rows cannot stop
    separately); the engine holds each row to its own cap."""
    assert engine.loaded.info.random_weights
    calls: list[dict[str, Any]] = []
    real_infer = engine.model.infer

    def infer(texts: list[str], stream: bool, **params: Any) -> Any:
        calls.append(params)
        return real_infer(texts, stream, **params)

    monkeypatch.setattr(engine.model, "infer", infer)
    segments = split_segments(TEXT, SEGMENT_SIZE)[:2]
    run = Bench(engine, 1, lambda _line: None).stock(segments, 2)
    cap = max(s.step_cap for s in segments)
    assert calls == [{"spk_emb": calls[0]["spk_emb"], "max_new_token": cap, "min_new_token": cap}]
    assert run.audio > 0 and run.rtf == pytest.approx(run.wall / run.audio)


def test_format_report_shows_both_sides_audio() -> None:
    ab = {
        "case": "one sentence",
        "segments": 1,
        "batch": 1,
        "planned_audio_s": 5.6,
        "stock_audio_s": 3.1,
        "studio_audio_s": 2.9,
        "stock_s": 6.2,
        "studio_s": 2.9,
        "stock_rtf": 2.0,
        "studio_rtf": 1.0,
        "pair_ratios": [2.0],
        "median_ratio": 2.0,
        "spread": 0.0,
    }
    report = {
        "machine": "m",
        "model": "demo",
        "random_weights": False,
        "torch": "2",
        "repeats": 1,
        "ab": [ab],
        "batches": [],
        "precisions": [],
        "first_audio": {"stock_stream_s": 1.0, "studio_s": 0.5, "ratio": 0.5, "spread": 0.0},
        "floor": {
            "weights_gb": 1.0,
            "floor_ms": 1.0,
            "floor_gb_per_s": 1.0,
            "step_ms": 1.0,
            "percent_of_floor": 100.0,
            "spread": 0.0,
        },
    }
    text = format_report(report)
    assert "| stock audio s | studio audio s |" in text and "each stops at EOS" in text
    assert "| one sentence | 1 | 1 | 5.6 | 3.1 | 2.9 | 6.20 | 2.90 | 2.000 | 1.000 |" in text


def test_soak_subcommand_runs_and_reports_memory(
    demo_model: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from chattts_studio.core.cli.main import main

    code = main(["soak", "--runs", "2", "--long-chars", "200", "--model", demo_model])
    out = capsys.readouterr().out
    assert code == 0, out
    for line in ("RSS first / last / max", "RSS growth over the runs", "RSS before / peak / after"):
        assert line in out
    assert "memory: steady" in out
