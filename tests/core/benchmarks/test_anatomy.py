"""The bench's anatomy section: a synthesis at the user's defaults timed by stage (refine,
prompt, prefill, GPT steps, sampling, vocoder, writing), with the stages restored afterwards.
Small figures on the tiny demo model: which stages ran and how the figures add up, not their
values."""

import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from chattts_studio.core.benchmarks.anatomy import (
    STAGES,
    WRAPPED,
    StageClock,
    figures,
    measure,
    timing_stages,
)
from chattts_studio.core.benchmarks.report import format_report
from chattts_studio.core.cli import bench as bench_cli
from chattts_studio.core.engine.onnxrt.session import OrtStep

TEXT = "你好。"  # one segment; refine makes it longer noise on random weights
TOLERANCE = 1e-3  # seconds: perf_counter reads between a stage's end and the wall's


def _installed() -> dict[tuple[type, str], object]:
    """What each wrapped attribute is on its class right now."""
    return {(owner, name): vars(owner).get(name) for _, owner, name in WRAPPED}


def _hooks(model: Any) -> tuple[int, int]:
    gpt = model.gpt
    return len(gpt.rotary_emb._forward_pre_hooks), len(gpt.norm._forward_hooks)


def test_every_stage_is_timed_and_the_figures_add_up(engine: Any, tmp_path: Path) -> None:
    """The session's engine (PyTorch steps, through the GPT's hooks) at the defaults, refine on."""
    before, hooks = _installed(), _hooks(engine.model)
    section = measure(engine, TEXT, tmp_path, lambda _line: None)
    stages = {r["stage"]: r for r in section["stages"]}
    assert list(stages) == list(STAGES)
    assert section["refine_text"] is True and section["engine"] == "torch"
    assert "step_by_position" not in section  # the probe is ONNX Runtime's step
    for stage in STAGES:
        assert stages[stage]["seconds"] > 0 and stages[stage]["calls"] > 0, stage
    # One segment at batch 1: one prefill (refine's own GPT loop is refine's time, not
    # counted again), one draw per row-step, and a GPT step after each draw but the last.
    assert section["segments"] == 1 and section["batch"] == 1
    assert stages["prefill"]["calls"] == 1
    assert stages["sampling"]["calls"] == section["gpt_steps"] > 1
    assert stages["steps"]["calls"] == section["gpt_steps"] - 1
    assert section["nested_calls"] > 0  # refine's passes, vocode_on_device inside vocode
    # One thread: no overlap, the stages' sum is what they covered, and fits in the wall time.
    assert section["stage_threads"] == 1
    assert section["overlap_s"] == pytest.approx(0.0, abs=1e-9)
    assert section["stages_s"] == pytest.approx(sum(r["seconds"] for r in stages.values()))
    assert section["stages_s"] <= section["wall_s"] + TOLERANCE
    assert section["other_s"] >= 0
    assert section["other_s"] == pytest.approx(section["wall_s"] - section["covered_s"])
    shares = sum(r["share"] for r in stages.values()) + section["other_share"]
    assert shares == pytest.approx(1.0)
    assert section["audio_s"] > 0
    assert section["rtf"] == pytest.approx(section["wall_s"] / section["audio_s"])
    # Everything is as it was.
    assert _installed() == before and _hooks(engine.model) == hooks


def test_stages_are_restored_after_an_exception(engine: Any, tmp_path: Path) -> None:
    before, hooks = _installed(), _hooks(engine.model)
    model = engine.model
    failure = pytest.raises(RuntimeError, match="inside the measurement")
    with failure, timing_stages(model) as clock:
        assert _installed() != before and _hooks(model) != hooks  # wrapped while inside
        model.vocode([model.gpt.norm.weight.new_zeros(4, model.hidden_size)])
        raise RuntimeError("inside the measurement")
    assert _installed() == before and _hooks(model) == hooks
    assert clock.calls()["vocoder"] == 1
    # A failure inside a wrapped call (a step given no rows) leaves nothing wrapped either.
    with pytest.raises(AttributeError), timing_stages(model) as clock:
        OrtStep.run(object(), None, None, [], [])  # type: ignore[arg-type]
    assert _installed() == before and _hooks(model) == hooks
    assert clock.calls()["steps"] == 1  # the failed call still counts its time


def test_nested_calls_count_once_and_threads_overlap_honestly() -> None:
    clock = StageClock()
    inner = clock.wrap("vocoder", lambda: time.sleep(0.02))

    def writes() -> None:
        time.sleep(0.02)
        inner()

    clock.wrap("writing", writes)()
    busy = clock.busy()
    assert busy["writing"] >= 0.04 and busy["vocoder"] == 0.0  # the outer call owns it
    assert clock.nested == 1
    # The same stage on two threads at once: twice the busy time over once the wall time.
    clock = StageClock()
    sleep = clock.wrap("vocoder", lambda: time.sleep(0.1))
    threads = [threading.Thread(target=sleep) for _ in range(2)]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    wall = time.perf_counter() - started
    result = figures(clock, wall, 1.0)
    assert result["stage_threads"] == 2
    assert result["stages_s"] >= 0.2
    assert result["covered_s"] <= wall + TOLERANCE and result["overlap_s"] > 0.05
    assert result["other_s"] >= 0  # the wall less what was covered, never less than zero


def test_the_gpt_pass_of_a_chunked_step_is_one_interval() -> None:
    """Hooks: a pass over several positions is a prefill; a chunked step (rotary once per
    chunk, then the norm once per chunk) is one step; passes inside a stage are its time."""

    class Tensor:
        def __init__(self, positions: int) -> None:
            self.shape = (1, positions, 8)

        def dim(self) -> int:
            return 3

    clock = StageClock()
    clock.pass_begins(None, (Tensor(12),))
    clock.pass_ends(None, None, None)
    for _ in range(3):
        clock.pass_begins(None, (Tensor(1),))
    for _ in range(3):
        clock.pass_ends(None, None, None)
    refine = clock.wrap("refine", lambda: (clock.pass_begins(None, (Tensor(5),)),))
    refine()
    clock.pass_ends(None, None, None)  # the pass begun inside refine was not opened
    assert clock.calls() == {**dict.fromkeys(STAGES, 0), "prefill": 1, "steps": 1, "refine": 1}
    assert clock.nested == 1


def test_section_runs_alone_from_the_cli_and_reports_its_table(
    demo_model: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """The CLI's section at the front ends' default engine (auto: ONNX Runtime on the CPU,
    its steps through OrtStep.run), in the bench's JSON and its table."""
    from chattts_studio.core.cli.main import main

    args = ["bench", "--model", demo_model, "--device", "cpu", "--sections", "anatomy"]
    assert main([*args, "--long-chars", "4", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert not {"ab", "batches", "first_audio", "floor", "precisions", "engines"} & set(report)
    section = report["anatomy"]
    assert section["engine"] == "onnx" and section["precision"] == "fp32"
    assert section["refine_text"] is True and section["segment_size"] == 50
    stages = {r["stage"]: r for r in section["stages"]}
    for stage in ("refine", "prefill", "steps", "sampling", "vocoder", "writing"):
        assert stages[stage]["seconds"] > 0, stage
    assert section["stages_s"] <= section["wall_s"] + TOLERANCE and section["other_s"] >= 0

    text = format_report(report)
    assert "12. anatomy: a long text (5 chars, 1 segments, batch 1)" in text
    assert "refine-text on" in text and "onnx fp32" in text
    assert "| stage | what | seconds | share of wall | calls | ms a call |" in text
    steps = stages["steps"]
    assert (
        f"| steps | the GPT's one-position decode steps | {steps['seconds']:.2f} | "
        f"{steps['share']:.1%} | {steps['calls']} |" in text
    )
    assert f"| wall | text to file | {section['wall_s']:.2f} | 100.0% | | |" in text
    assert "1. stock" not in text  # the sections not run have no table
    # The ONNX Runtime step alone by position: the cache read grows with it, as its bytes say.
    probe = section["step_by_position"]
    assert [r["position"] for r in probe] == [50, 1000, 1900]
    assert all(r["ms"] > 0 for r in probe)
    sizes = [r["kv_mb"] for r in probe]
    assert sizes[1] / sizes[0] == pytest.approx(1001 / 51) and sizes[2] > sizes[1]
    assert "kv_gb_per_s" not in probe[0] and "kv_gb_per_s" in probe[2]
    assert f"| 1900 | {probe[2]['ms']:.1f} | {probe[2]['kv_mb']:.0f} |" in text
    assert "anatomy" not in bench_cli.DEFAULT_SECTIONS  # it runs when asked
