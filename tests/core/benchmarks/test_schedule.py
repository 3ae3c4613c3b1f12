"""The bench's schedule section: the first segment first against the first batch together, with
first audio, wall time and the live panel's error from each run. On the tiny demo model: which
figures come out and how they are made, not their values."""

import json
from typing import Any

import pytest

from chattts_studio.core.benchmarks.report import format_report
from chattts_studio.core.benchmarks.schedule import panel_errors, schedule_table
from chattts_studio.core.engine.request import SynthesisRequest


def test_a_panel_that_tells_the_truth_has_no_error_and_one_that_lags_has_some() -> None:
    wall = 100.0
    true = [(at, at / wall, wall - at) for at in range(0, 100, 5)]
    errors = panel_errors(true, wall)
    assert errors["bar_max_error"] == pytest.approx(0.0)
    assert errors["time_left_max_excess_s"] == 0.0 and errors["time_left_shown_share"] == 1.0
    lagging = [(at, at / wall / 2, 3 * (wall - at)) for at in range(0, 100, 5)]
    errors = panel_errors(lagging, wall)
    assert errors["bar_max_error"] == pytest.approx(0.475)  # at 95 s: 0.475 against 0.95
    # At 10 s: 270 s said, 90 s left, 35% + 3 s allowed: 270 - 90 - 34.5 too many.
    assert errors["time_left_max_excess_s"] == pytest.approx(145.5)
    hidden = [(at, at / wall, None) for at in range(0, 100, 5)]
    assert panel_errors(hidden, wall)["time_left_shown_share"] == 0.0


def test_the_table_alternates_the_two_schedules_and_restores_the_default(engine: Any) -> None:
    request = SynthesisRequest("今天天气很好。我们去公园散步吧！然后回家。" * 2, segment_size=12)
    table = schedule_table(engine, request, 1)
    assert [r["head_first"] for r in table["rows"]] == [False, True]
    for row in table["rows"]:
        assert 0 < row["first_audio_s"] < row["wall_s"] and row["audio_s"] > 0
    assert table["wall_ratio"] == pytest.approx(
        table["rows"][1]["wall_s"] / table["rows"][0]["wall_s"]
    )
    assert len(table["refine_off_first_audio_s"]) == 1
    assert engine.head_first is True
    text = format_report(
        {"machine": "m", "model": "x", "torch": "t", "repeats": 1, "schedule": table}
    )
    assert "| head first |" in text and "| together |" in text
    json.dumps(table)  # the --json report
