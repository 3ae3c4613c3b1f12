"""`bench --sections side`: the vocoder beside the GPT's steps against inline, A B A B, on the
front ends' default engine (demo weights: noise, never speech)."""

import json

import pytest

from chattts_studio.core.benchmarks.report import format_report


def test_section_runs_alone_from_the_cli_and_reports_its_table(
    demo_model: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from chattts_studio.core.cli.main import main

    args = ["bench", "--model", demo_model, "--device", "cpu", "--sections", "side"]
    assert main([*args, "--long-chars", "12", "--repeats", "2", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert not {"ab", "batches", "anatomy", "engines"} & set(report)
    side = report["side"]
    rows = side["rows"]
    assert [r["vocoder_stream"] for r in rows] == [False, True, False, True]  # A B A B
    assert side["refine_text"] is True and side["chars"] == 13  # the user's default: refine on
    # Beside or inline, the same audio (refine seeded alike each run), every run the same.
    assert side["audio_max_diff"] == 0.0 and len({r["audio_s"] for r in rows}) == 1
    assert side["best_off_s"] == min(r["wall_s"] for r in rows if not r["vocoder_stream"])
    assert side["x_on"] == pytest.approx(side["best_off_s"] / side["best_on_s"])
    # First audio at the defaults, refine included, once a pair: well before a whole run.
    waits = side["first_audio_s"]
    assert len(waits) == 2 and 0 < max(waits) < min(r["wall_s"] for r in rows)

    text = format_report(report)
    assert "Vocoder beside the steps against inline (13 characters, refine on, A B A B)" in text
    assert "audio: equal" in text
    assert f"| beside | {rows[1]['segments']} | {rows[1]['wall_s']:.2f} |" in text
    assert f"- first audio (a listener, as the window plays; inline): {waits[0]:.2f}" in text
