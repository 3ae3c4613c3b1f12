"""The GPU run's script in its CPU mode: every part runs and reports, so that the script is
ready (not rotten) whenever the GPU machine is available."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest


def test_the_gpu_run_works_in_cpu_mode(tmp_path: Path, demo_model: str) -> None:
    out = tmp_path / "out"
    proc = subprocess.run(
        [sys.executable, "-m", "chattts_studio.core.devtools.gpucheck", "--cpu", "--out", str(out),
         "--budget", "400"],
        capture_output=True,
        text=True,
        timeout=600,
        env=os.environ.copy(),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    report = json.loads((out / "report.json").read_text())
    parts = {p["part"]: p for p in report["parts"]}
    assert set(parts) == {"env", "pytest", "checks", "bench"}
    assert all(p["status"] == "ok" for p in parts.values())
    # The gpu tests are skipped here; one fake-CUDA test proves the part's command runs them.
    assert "1 passed" in parts["pytest"]["data"]["summary"], parts["pytest"]["data"]
    checks = parts["checks"]["data"]
    assert checks["equality"]["all_equal"]
    nan = checks["nan"]
    assert nan["caught"] and nan["next_job_segments"] == nan["planned_segments"] == 2
    oom = checks["oom"]
    assert oom["segments_made"] == oom["segments_planned"] and oom["in_order"]
    assert oom["batch_finished"] < oom["batch_asked"]
    batcher = checks["batcher"]  # the API's continuous batch: shared steps, exact rows
    assert batcher["widest_step_requests"] == batcher["requests"] == 3
    assert batcher["all_equal_alone"] and batcher["max_abs_diff"] == 0.0
    # The vocoder on a second stream: the same audio off and on (one path on a CPU), timed.
    assert checks["vocoder_stream"]["same_audio"], checks["vocoder_stream"]
    bench = parts["bench"]["data"]
    assert [t["batch"] for t in bench["vocoder_stream"]] == [1, 2]
    for lever in bench["vocoder_stream"]:
        assert [r["vocoder_stream"] for r in lever["rows"]] == [False, True, False, True]
        assert lever["audio_max_diff"] == 0.0 and lever["rows"][0]["segments"] >= 3
        assert len({r["segments"] for r in lever["rows"]}) == 1
        assert lever["best_off_s"] > 0 and lever["x_on"] > 0
    assert "Vocoder on a second stream at batch 2" in (out / "report.md").read_text()
    # ChatTTS's refine loop against the studio's pass on torch's step: equal tokens, timed.
    (refine,) = bench["refine"]
    assert [(r["batch"], r["side"]) for r in refine["rows"]] == [
        (b, side) for b in (1, 2) for _ in range(2) for side in ("stock", "studio")
    ]
    assert all(r["same_tokens"] and r["seconds"] > 0 and r["tokens"] > 0 for r in refine["rows"])
    assert "Refine-text pass (fp32)" in (out / "report.md").read_text()
    assert bench["ab"] and bench["first_audio"]["studio_s"] > 0
    # 1 up to the largest batch that fits (on the CPU a small cap).
    assert [r["batch"] for r in bench["batches"]] == [1, 2] == [1, bench["largest_batch"]["fp32"]]
    assert bench["batches"][1]["per_stream_mib"] is not None  # a slope against batch 1
    # Where a step's time goes, at batch 1 and at the largest batch.
    assert [a["batch"] for a in bench["anatomy"]] == [1, 2]
    for anatomy in bench["anatomy"]:
        # Each part is timed on its own, so how they compare is the bench's finding, not a
        # test's (under a loaded CPU the sampling alone once timed longer than the whole loop).
        assert all(anatomy[k] > 0 for k in ("gpt_ms", "sample_ms", "loop_ms")), anatomy
        profile = anatomy["profile"]  # a profiler trace of a few steps: operators on a CPU
        assert profile["unit"] == "operators" and profile["per_step"] > 10, profile
        # A job's admission (its prefill) is counted apart from the steps: a trace of a long
        # run minus a short one (both admit the same jobs).
        # (top-level operators on a CPU: the demo model's prefill of a job is a handful)
        assert profile["per_admitted_job"] >= 4 and "admit_ms" in anatomy, profile
        assert profile["wall_s"] > 0 and profile["device_s"] > 0
    # Each lever on and off (graphs stay off on a CPU): the ladder and all-but-one series,
    # every config's codes equal to the first's, fused units run where fused steps are on.
    assert [t["batch"] for t in bench["levers"]] == [1, 2]
    for table in bench["levers"]:
        rows = table["rows"]
        assert [r["series"] for r in rows] == ["ladder"] * 6 + ["all but one"] * 4
        assert all(r["steps_per_s"] > 0 and r["same_codes"] for r in rows), rows
        # (fused steps build on late flags: with those off, a unit never runs)
        assert all((r["fused_units"] > 0) == (r["fused"] and r["late_flags"]) for r in rows)
        assert rows[0]["levers"] == "none" and rows[0]["x_baseline"] == 1.0
    assert "Levers at batch 2" in (out / "report.md").read_text()
    streams = bench["streams"]  # through the real server: the doubling search ran
    assert streams["realtime_streams"] >= 0 and streams["rounds"], streams
    assert set(streams) >= {"realtime_streams", "first_audio_p50_s", "first_audio_p95_s"}
    text = (out / "report.md").read_text()
    assert "Step anatomy" in text and "real-time streams" in text
    for target in ("steps/s", "first audio", "x real time", "real-time streams, p95"):
        assert target in text.split("Targets:")[1], target
    for heading in ("## Machine", "## pytest -m 'gpu or fake_cuda'", "## Checks", "## Bench"):
        assert heading in text


def test_on_the_card_the_gpu_tests_report_even_when_the_fake_cuda_ones_run_out_of_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from chattts_studio.core.devtools import gpuparts

    asked: list[list[str]] = []

    def fake_pytest(select: list[str], files: list[str], mode: object) -> dict[str, object]:
        asked.append(select)
        if select == ["-m", "gpu"]:
            return {"exit": 0, "summary": "3 passed", "ok": True}
        return {"exit": None, "summary": "did not finish in 40 s", "ok": False}

    monkeypatch.setattr(gpuparts, "_pytest", fake_pytest)
    data = gpuparts.pytest_gpu(gpuparts.Mode(cpu=False, limit=60))
    assert asked == [["-m", "gpu"], ["-m", "fake_cuda"]]  # the real GPU's tests first
    assert data["summary"] == "gpu: 3 passed; fake_cuda: did not finish in 40 s"
    assert not data["ok"] and "error" not in data  # unfinished, not a failed test

    def failing(select: list[str], files: list[str], mode: object) -> dict[str, object]:
        return {"exit": 1, "summary": "1 failed", "ok": False, "error": f"{select[1]} broke"}

    monkeypatch.setattr(gpuparts, "_pytest", failing)
    data = gpuparts.pytest_gpu(gpuparts.Mode(cpu=False, limit=60))
    assert data["error"] == "gpu: gpu broke\nfake_cuda: fake_cuda broke"
