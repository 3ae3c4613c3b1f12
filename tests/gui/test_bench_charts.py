"""The bench's charts: drawn from a bench JSON and from the GPU run's report, not blank, of the
size the docs expect; a file that is not a bench's output is one sentence and exit code 2."""

import gc
import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QApplication

from chattts_studio.gui.devtools import bench_charts

H200_REPORT = REPO / ".ci/gpu/runs/2026-11-30-h200.json"

# `chattts-studio-cli bench --json`'s shape (core/benchmarks/bench.py), figures made up.
CPU_BENCH = {
    "machine": "x86_64, 2 threads; cpu",
    "model": "demo-full (random weights)",
    "random_weights": True,
    "torch": "2.14.1",
    "repeats": 3,
    "ab": [],
    "batches": [
        {"batch": b, "audio_s": 1.9 * b, "wall_s": 6.0, "rtf": rtf, "steps_per_s": sps}
        | {"peak_memory_mib": 2537.0, "spread": 0.03}
        for b, rtf, sps in ((1, 3.1, 15.0), (2, 2.9, 16.5), (4, 1.4, 34.1), (8, 0.85, 55.6))
    ],
    "first_audio": {"stock_stream_s": 5.1, "studio_s": 1.8, "ratio": 0.34, "spread": 0.04},
    "floor": {"weights_gb": 0.76, "floor_ms": 55.3, "step_ms": 69.1, "spread": 0.11},
    "precisions": [
        {"precision": "fp32", "batch1_rtf": 3.3, "batch8_rtf": 0.91, "batch1_steps_per_s": 14.2},
        {"precision": "bf16", "batch1_rtf": 1.8, "batch8_rtf": 0.38, "batch1_steps_per_s": 26.2},
        {"precision": "int8", "batch1_rtf": 0.98, "batch8_rtf": 0.22, "batch1_steps_per_s": 48.4},
        {"precision": "fp16", "refused": "fp16 is not supported on the CPU"},
    ],
}


def _colours(path: Path) -> dict[int, int]:
    """How many pixels of each colour the chart has, checked against the size the docs use."""
    image = QImage(str(path))
    assert (image.width(), image.height()) == (bench_charts.WIDTH, bench_charts.HEIGHT), path
    counts: dict[int, int] = {}
    for y in range(image.height()):
        for x in range(image.width()):
            rgb = image.pixel(x, y) & 0xFFFFFF
            counts[rgb] = counts.get(rgb, 0) + 1
    return counts


def _assert_drawn(path: Path, precisions: list[str]) -> None:
    """Not blank: besides the background, the lines of each precision are there in its colour."""
    counts = _colours(path)
    background = max(counts, key=counts.__getitem__)
    drawn = sum(counts.values()) - counts[background]
    assert drawn > 0.01 * sum(counts.values()), f"{path} is nearly blank"
    for precision in precisions:
        colour = int(bench_charts.COLOURS[precision][1:], 16)
        assert counts.get(colour, 0) > 50, f"{path} has no {precision} line"


def test_charts_from_a_cpu_bench_and_the_h200_report(qapp: QApplication, tmp_path: Path) -> None:
    cpu = tmp_path / "cpu.json"
    cpu.write_text(json.dumps(CPU_BENCH), encoding="utf-8")
    out = tmp_path / "charts"
    assert bench_charts.main(["--out", str(out), str(cpu), str(H200_REPORT)]) == 0
    names = sorted(p.name for p in out.iterdir())
    assert names == [
        "2026-11-30-h200-rtf.png",
        "2026-11-30-h200-steps.png",
        "cpu-rtf.png",
        "cpu-steps.png",
    ]
    for name in names:
        _assert_drawn(out / name, ["fp32", "bf16"] + (["int8"] if "cpu" in name else []))
    # One line per precision (refused ones left out); the GPU's graphs-off rows apart.
    machine = bench_charts.load(cpu)
    assert sorted(machine.rtf) == ["bf16", "fp32", "int8"]
    assert machine.rtf["fp32"] == [(1, 3.1), (2, 2.9), (4, 1.4), (8, 0.85)]
    assert machine.rtf["int8"] == [(1, 0.98), (8, 0.22)]
    h200 = bench_charts.load(H200_REPORT)
    assert h200.title == "NVIDIA H200 (139.8 GiB)"
    assert {"fp32", "bf16", "fp32, no CUDA graphs"} <= set(h200.steps)
    assert [b for b, _ in h200.rtf["bf16"]] == [1, 8, 32, 64]
    # The charts' widgets are gone whole: a collection now once crashed on a half-torn plot.
    gc.collect()


@pytest.mark.parametrize(
    ("content", "says"),
    [
        ("{not json", "is not JSON"),
        (json.dumps({"batches": ["a row that is no object"]}), "not in the bench's shape"),
        (json.dumps({"mode": "gpu", "parts": [{"part": "env", "data": {}}]}), "no bench part"),
        (json.dumps([1, 2, 3]), "holds no figures by batch size"),
        (None, "cannot be read"),
    ],
)
def test_a_bad_file_is_one_sentence_and_exit_code_2(
    tmp_path: Path, content: str | None, says: str
) -> None:
    bad = tmp_path / "bad.json"
    if content is not None:  # None: the file does not exist
        bad.write_text(content, encoding="utf-8")
    out = tmp_path / "charts"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "chattts_studio.gui.devtools.bench_charts",
            "--out",
            str(out),
            str(bad),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
    )
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and says in lines[0], lines
    assert not out.exists(), "nothing is drawn when a file is bad"
