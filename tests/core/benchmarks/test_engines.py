"""The bench's engine section: torch and ONNX Runtime, fp32 and int8, side by side in one run,
with their agreement measured against torch fp32 (teacher-forced logits, free-running codes).
Small figures on the tiny demo model: the shape and sanity of the numbers, not their values."""

import json
import math
from collections.abc import Iterator
from typing import Any

import pytest
import torch

from chattts_studio.core.benchmarks import bench
from chattts_studio.core.benchmarks.engines import (
    ROWS,
    EngineBench,
    EngineSettings,
    Trace,
    compare,
    run_engines,
)
from chattts_studio.core.benchmarks.report import format_report
from chattts_studio.core.cli import bench as bench_cli
from chattts_studio.core.engine import engine_choice as choice

TINY = [
    "--sections",
    "engines",
    "--device",
    "cpu",
    "--repeats",
    "1",
    "--decode-steps",
    "4",
    "--agree-steps",
    "24",
    "--free-steps",
    "16",
    "--long-chars",
    "8",
    "--engine-batches",
    "1,2",
]
TINY_SETTINGS = EngineSettings(
    batch_sizes=(1,), short_steps=1, long_steps=3, agree_steps=12, free_steps=8, long_chars=8
)


@pytest.fixture
def shared_engine(engine: Any, demo_model: str) -> Iterator[Any]:
    """The session's engine, given back as it was lent (torch fp32) whatever the test loads."""
    yield engine
    engine.load(demo_model, "cpu", "fp32", engine="torch")


def test_engine_section_runs_alone_and_reports_every_row(
    demo_model: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from chattts_studio.core.cli.main import main

    assert main(["bench", "--model", demo_model, *TINY, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert not {"ab", "batches", "first_audio", "floor", "precisions"} & set(report)
    section = report["engines"]
    assert section["default_engine"] == "onnx"  # onnxruntime is installed in the venv
    assert section["temperature"] == pytest.approx(0.3)
    rows = section["rows"]
    assert [(r["engine"], r["precision"]) for r in rows] == [(e.value, p.value) for e, p in ROWS]
    for row in rows:
        assert "unavailable" not in row, row
        assert [d["batch"] for d in row["decode"]] == [1, 2]
        for d in row["decode"]:
            assert d["step_ms"] > 0
            assert d["row_steps_per_s"] == pytest.approx(d["batch"] * 1e3 / d["step_ms"])
        text = row["long_text"]
        assert text["audio_s"] > 0 and text["wall_s"] > 0
        assert text["rtf"] == pytest.approx(text["wall_s"] / text["audio_s"])
        assert text["batch"] == text["segments"] >= 1  # the automatic batch: every segment
        agreement = row["agreement"]
        assert agreement["steps"] == 24 and agreement["free_steps"] == 16
        assert 0 <= agreement["equal_leading_steps"] <= 16
        assert agreement["kl_mean"] <= agreement["kl_max"]
    torch32, onnx32, torch8, onnx8 = (r["agreement"] for r in rows)
    # torch fp32 against itself: the teacher-forced run is the reference's own, bit for bit.
    assert torch32["logits_max_diff"] == 0.0 and torch32["kl_max"] == 0.0
    assert torch32["equal_leading_steps"] == 16
    assert rows[0]["long_text"]["ratio_to_torch_fp32"] == pytest.approx(1.0)
    # ONNX Runtime fp32 computes what torch does, to rounding.
    assert 0 < onnx32["logits_max_diff"] < 1e-3 and onnx32["kl_max"] < 1e-6
    # int8 rounds the weights: it differs, and says by how much.
    assert torch8["logits_max_diff"] > onnx32["logits_max_diff"]
    assert onnx8["logits_max_diff"] > onnx32["logits_max_diff"]

    text = format_report(report)
    assert "6. engines: decode steps/s by batch" in text
    assert "| torch | fp32 | 0.00e+00 | 0.00e+00 | 0.00e+00 | 0.00e+00 | 16 of 16 |" in text
    assert "the CPU default (auto: onnx fp32) against today's default (torch fp32)" in text
    assert "1. stock" not in text  # the sections not run have no table


def test_onnx_unavailable_gives_rows_that_say_why(
    shared_engine: Any, demo_model: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    reason = "ONNX Runtime is not installed (onnxruntime missing)"
    monkeypatch.setattr(choice, "onnx_missing", lambda: reason)
    said: list[str] = []
    section = run_engines(shared_engine, demo_model, "cpu", TINY_SETTINGS, said.append)
    rows = {(r["engine"], r["precision"]): r for r in section["rows"]}
    assert section["default_engine"] == "torch"
    for precision in ("fp32", "int8"):
        assert reason in rows[("onnx", precision)]["unavailable"]
        assert "decode" not in rows[("onnx", precision)]
        assert rows[("torch", precision)]["long_text"]["audio_s"] > 0
    assert any("unavailable" in line for line in said)
    text = format_report(
        {"machine": "m", "model": "demo", "torch": "2", "repeats": 1, "engines": section}
    )
    assert f"| onnx | int8 | unavailable: The onnx engine cannot be used: {reason}" in text
    # auto falls back to torch: the target line says so, with no speed-up claimed.
    assert "the CPU default (auto: torch fp32) against today's default (torch fp32)" in text
    assert "on the long text: **1.00x**" in text


def test_teacher_forcing_feeds_the_given_codes(shared_engine: Any) -> None:
    """The forced run's codes are the given ones (not what it would draw), and its logits
    follow them: after the first step they differ from the free run's."""
    measure = EngineBench(shared_engine, TINY_SETTINGS, lambda _line: None)
    free = measure.trace(10)
    forced_codes = (free.codes + 1) % (shared_engine.model.num_codes - 1)  # never EOS
    forced = measure.trace(10, forced_codes)
    assert torch.equal(forced.codes, forced_codes)
    assert torch.equal(forced.logits[0], free.logits[0])  # the prompt's: nothing forced yet
    assert not torch.equal(forced.logits[1:], free.logits[1:])
    # And the same codes forced again give the same logits, bit for bit.
    again = measure.trace(10, forced_codes)
    assert torch.equal(again.logits, forced.logits)


def test_compare_measures_difference_kl_and_leading_codes() -> None:
    logits = torch.zeros(3, 4, 5)
    codes = torch.zeros(3, 4, dtype=torch.long)
    other = logits.clone()
    other[2, 1, 0] = 0.5
    free = codes.clone()
    free[1, 3] = 2
    result = compare(Trace(codes, logits), Trace(codes, other), free, 0.5)
    assert result["logits_max_diff"] == pytest.approx(0.5)
    assert result["logits_mean_max_diff"] == pytest.approx(0.5 / 3)
    # Uniform p against q with one logit raised by 1 (0.5 / 0.5), one stream of four.
    q = torch.softmax(torch.tensor([1.0, 0, 0, 0, 0], dtype=torch.float64), 0)
    kl = float((0.2 * (math.log(0.2) - torch.log(q))).sum()) / 4
    assert result["kl_max"] == pytest.approx(kl)
    assert result["kl_mean"] == pytest.approx(kl / 3)
    assert result["equal_leading_steps"] == 1 and result["free_steps"] == 3


def test_cli_sections_match_the_bench() -> None:
    asked = ("engines", "takes", "anatomy", "side", "schedule")
    assert (*bench.SECTIONS, *asked) == bench_cli.SECTIONS
    assert bench_cli.DEFAULT_SECTIONS == bench.SECTIONS  # the default bench is what it was


def test_unknown_section_is_one_sentence(capsys: pytest.CaptureFixture[str]) -> None:
    from chattts_studio.core.cli.main import main

    with pytest.raises(SystemExit) as exit_info:
        main(["bench", "--sections", "engines,speed"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "choose sections among ab, batches, first-audio, floor, precisions, engines" in err
    assert "Traceback" not in err
