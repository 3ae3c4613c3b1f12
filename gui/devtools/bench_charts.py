"""Draws the bench's figures as charts for docs/performance.md (RTF and steps/s against batch size)
from bench or GPU-run JSON.

    QT_QPA_PLATFORM=offscreen .venv/bin/python -m chattts_studio.gui.devtools.bench_charts \
        --out docs/charts RUN.json [BENCH.json ...]
"""

import argparse
import json
import math
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

WIDTH, HEIGHT = 900, 540
# One colour per precision, the same on every chart, so CPU and H200 read alike.
COLOURS = {"fp32": "#1f77b4", "bf16": "#d62728", "fp16": "#2ca02c", "int8": "#9467bd"}
Series = dict[str, list[tuple[int, float]]]  # a line's name -> (batch, value), by batch


class ChartInputError(Exception):
    """A JSON file that is not a bench's output: its sentence is all the user sees."""


@dataclass
class Machine:
    """One input's figures: series name -> [(batch, value)], sorted by batch."""

    name: str
    title: str
    rtf: Series = field(default_factory=dict)
    steps: Series = field(default_factory=dict)


def _add(series: Series, name: str, batch: Any, value: Any) -> None:
    if not isinstance(batch, int) or not isinstance(value, int | float) or value <= 0:
        return  # a missing or zero figure has no place on a log axis
    series.setdefault(name, []).append((batch, float(value)))
    series[name].sort()


def _from_gpu_report(report: dict[str, Any], machine: Machine) -> None:
    """The GPU run's report: parts, one of them `bench` with rows by precision and graphs."""
    bench = next((p for p in report["parts"] if p.get("part") == "bench"), None)
    if bench is None or not isinstance(bench.get("data"), dict):
        raise ChartInputError("the GPU report has no bench part with figures.")
    env: dict[str, Any] = next((p for p in report["parts"] if p.get("part") == "env"), {})
    devices = (env.get("data") or {}).get("devices") or []
    gpus = [d["label"] for d in devices if str(d.get("id", "")).startswith("cuda")]
    # "cuda:0 - NVIDIA H200 (139.8 GiB)": the card's name is the machine's.
    machine.title = gpus[0].split(" - ", 1)[-1] if gpus else machine.name
    for row in bench["data"].get("batches", []):
        name = row["precision"] + ("" if row.get("graphs", True) else ", no CUDA graphs")
        _add(machine.rtf, name, row.get("batch"), row.get("rtf"))
        _add(machine.steps, name, row.get("batch"), row.get("steps_per_s"))


def _from_bench(report: dict[str, Any], machine: Machine) -> None:
    """`chattts-studio-cli bench --json`: fp32 at every batch size, each other precision at
    batch 1 and the long-text batch (steps/s only at batch 1)."""
    machine.title = str(report.get("machine", machine.name))
    for row in report["batches"]:
        _add(machine.rtf, "fp32", row.get("batch"), row.get("rtf"))
        _add(machine.steps, "fp32", row.get("batch"), row.get("steps_per_s"))
    for row in report.get("precisions", []):
        precision = row.get("precision")
        if precision == "fp32" or "refused" in row:
            continue  # fp32 is drawn from the batch sweep; a refused one has no figures
        for key, value in row.items():
            if key.startswith("batch") and key.endswith("_rtf"):
                _add(machine.rtf, precision, int(key[5:-4]), value)
        _add(machine.steps, precision, 1, row.get("batch1_steps_per_s"))


def load(path: Path) -> Machine:
    machine = Machine(name=path.stem, title=path.stem)
    try:
        report = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ChartInputError(f"{path}: cannot be read ({exc.strerror or exc}).") from None
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise ChartInputError(f"{path}: is not JSON.") from None
    try:
        if isinstance(report, dict) and isinstance(report.get("parts"), list):
            _from_gpu_report(report, machine)
        elif isinstance(report, dict) and isinstance(report.get("batches"), list):
            _from_bench(report, machine)
    except (KeyError, TypeError, AttributeError, ValueError):
        raise ChartInputError(f"{path}: its figures are not in the bench's shape.") from None
    except ChartInputError as exc:
        raise ChartInputError(f"{path}: {exc}") from None
    if not machine.rtf:
        raise ChartInputError(
            f"{path}: holds no figures by batch size (expected the JSON of "
            "`chattts-studio-cli bench --json` or of the GPU run's report)."
        )
    return machine


def _ticks(low: float, high: float) -> list[float]:
    """1-2-5 steps covering [low, high]: a log axis labelled in plain numbers."""
    ticks, decade = [], 10.0 ** math.floor(math.log10(low))
    while decade <= high * 10:
        ticks += [decade * m for m in (1, 2, 5) if low / 1.5 <= decade * m <= high * 1.5]
        decade *= 10
    return ticks


def _label(value: float) -> str:
    return f"{value:g}" if value >= 1e-3 else f"{value:.0e}"


def _draw(title: str, y_label: str, series: Series, legend_at: tuple[int, int], out: Path) -> None:
    import pyqtgraph as pg
    import pyqtgraph.exporters
    from PySide6.QtCore import QCoreApplication, QEvent, Qt

    plot = pg.PlotWidget(background="w")
    plot.resize(WIDTH, HEIGHT)
    item = plot.getPlotItem()
    item.setTitle(title, color="k", size="12pt")
    item.setLogMode(x=True, y=True)  # batches double; RTF and steps/s span decades
    item.showGrid(x=True, y=True, alpha=0.25)
    item.setLabel("bottom", "batch size", color="k")
    item.setLabel("left", y_label, color="k")
    batches = sorted({b for points in series.values() for b, _ in points})
    values = [v for points in series.values() for _, v in points]
    # Explicit ticks: pyqtgraph's own log ticks label minor steps as "2·10¹".
    axes = {
        "bottom": [(math.log10(b), str(b)) for b in batches],
        "left": [(math.log10(v), _label(v)) for v in _ticks(min(values), max(values))],
    }
    for side, ticks in axes.items():
        axis = item.getAxis(side)
        axis.setPen("k")
        axis.setTextPen("k")
        axis.setTicks([ticks, []])
    legend = item.addLegend(offset=legend_at, labelTextColor="k", brush=pg.mkBrush(255, 255, 255))
    for name, points in sorted(series.items()):
        colour = COLOURS.get(name.split(",")[0], "#555555")
        style = Qt.PenStyle.SolidLine if "," not in name else Qt.PenStyle.DashLine
        item.plot(
            [b for b, _ in points],
            [v for _, v in points],
            pen=pg.mkPen(colour, width=2, style=style),
            symbol="o",
            symbolSize=7,
            symbolBrush=colour,
            symbolPen=colour,
            name=name,
            antialias=True,
        )
    legend.setZValue(10)
    plot.show()  # offscreen: the layout (title, axes) is computed only for a shown widget
    QCoreApplication.processEvents()
    exporter = pyqtgraph.exporters.ImageExporter(plot.scene())
    exporter.parameters()["width"] = WIDTH
    exporter.export(str(out))
    # Deleted C++ side first while its Python side is whole: pyqtgraph's close() unparents the
    # view box, which a later garbage collection then tears down half-cleared (a segfault).
    plot.deleteLater()
    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)


def draw(machine: Machine, out_dir: Path) -> list[Path]:
    """The two charts of one machine; returns the files written. The legend sits where the
    lines are not: top right for RTF (falling), bottom right for steps/s (rising)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    charts = (
        ("rtf", "RTF by batch size", "RTF (wall s per audio s; lower is faster)", machine.rtf),
        ("steps", "GPT steps/s by batch size", "steps/s, all rows together", machine.steps),
    )
    made = []
    for suffix, title, y_label, series in charts:
        target = out_dir / f"{machine.name}-{suffix}.png"
        legend_at = (-10, 10) if suffix == "rtf" else (-10, -40)
        _draw(f"{machine.title}: {title}", y_label, series, legend_at, target)
        made.append(target)
    return made


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m chattts_studio.gui.devtools.bench_charts")
    parser.add_argument("files", nargs="+", type=Path, help="bench or GPU report JSON files")
    parser.add_argument("--out", type=Path, default=Path("docs/charts"), help="folder for PNGs")
    args = parser.parse_args(argv)
    try:
        machines = [load(path) for path in args.files]  # every file checked before drawing
    except ChartInputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")  # charts need no screen
    import pyqtgraph as pg

    app = pg.mkQApp()
    try:
        for machine in machines:
            for path in draw(machine, args.out):
                print(f"wrote {path}")
    except OSError as exc:
        print(
            f"error: cannot write the charts into {args.out} ({exc.strerror or exc}).",
            file=sys.stderr,
        )
        return 2
    del app
    return 0


if __name__ == "__main__":
    sys.exit(main())
