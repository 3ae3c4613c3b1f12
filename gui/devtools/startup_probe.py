"""Measures start-up as a person meets it: the window on screen, the engine imported, the model
loaded, the first audio, and a precision switch (fp32 -> bf16).

    QT_QPA_PLATFORM=offscreen .venv/bin/python -m chattts_studio.gui.devtools.startup_probe \\
        [--runs 3] [--window-only] [demo demo-full]

Each run is a fresh process on a private data folder that shares the installed models; a first run
per model warms the caches and is not counted. Prints each figure's median. --window-only times
the window's first paint alone and ends each start there (seconds a run, not a model load)."""

import argparse
import importlib
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from chattts_studio.core import child_process, platforms

if TYPE_CHECKING:
    from chattts_studio.gui.window.main_window import MainWindow

FIGURES = (
    ("shown", "window shown"),
    ("engine", "engine imported, devices known"),
    ("loaded", "model loaded"),
    ("first_audio", "first audio"),
    ("switch", "precision switch fp32 -> bf16"),
)
SHORT_TEXT = "你好，欢迎。Hello, welcome."
CHILD_TIMEOUT_S = 600


def _child(model: str, device: str, window_only: bool = False) -> dict[str, object]:
    """One start: the real window, driven as a person would, with a time for each moment
    (`window_only`: up to its first paint)."""
    from PySide6.QtCore import QEvent, QObject

    from chattts_studio.gui.app import application, build_window

    stamps: dict[str, object] = {}
    app = application()

    class FirstPaint(QObject):
        def eventFilter(self, _watched: QObject, event: QEvent) -> bool:  # Qt's name
            if event.type() == QEvent.Type.Paint and "shown" not in stamps:
                stamps["shown"] = time.time()
            return False

    painted = FirstPaint()
    app.installEventFilter(painted)
    window = build_window(model, device)
    if not hasattr(window.controls, "ready"):  # a window that probed before it was built
        stamps["engine"] = time.time()
    window.show()

    def spin(done: Callable[[], object], seconds: float = CHILD_TIMEOUT_S) -> None:
        end = time.monotonic() + seconds
        while not done():
            if time.monotonic() > end:
                raise TimeoutError(window.messages.notice.text())
            app.processEvents()
            if "engine" not in stamps and window.controls.ready:
                stamps["engine"] = time.time()
            time.sleep(0.001)

    spin(lambda: "shown" in stamps)
    app.removeEventFilter(painted)
    if window_only:
        _close(window)
        return stamps
    spin(lambda: window.model.loaded is not None and window.jobs.current is None)
    stamps["loaded"] = time.time()

    def first_chunk(_job: object, event: object) -> None:
        from chattts_studio.core.engine.request import AudioChunk

        if isinstance(event, AudioChunk):
            stamps.setdefault("first_audio", time.time())

    window.host.worker.progress.connect(first_chunk)
    window.editor.set_text(SHORT_TEXT)
    window.controls.refine_box.setChecked(False)
    window.controls.batch_box.setValue(1)
    window.result.stream_box.setChecked(False)  # timed, not played
    stamps["synthesis_asked"] = time.time()
    window.synthesis.synthesize()
    spin(lambda: window.jobs.current is None)
    if "first_audio" not in stamps:
        raise RuntimeError(f"no audio: {window.messages.notice.text()}")

    from chattts_studio.core.engine.request import Precision

    button = window.controls.precision_buttons[Precision.BF16]
    stamps["switch_asked"] = time.time()
    button.setChecked(True)
    spin(
        lambda: (
            window.jobs.current is None
            and window.model.loaded is not None
            and window.model.loaded.precision is Precision.BF16
        )
    )
    stamps["switched"] = time.time()
    _close(window)
    return stamps


def _close(window: "MainWindow") -> None:
    from PySide6.QtCore import QCoreApplication, QEvent

    window.close()
    # Destroyed now, while Python is whole: pyqtgraph's scenes torn down by the interpreter's
    # exit can crash it (a Python override called during finalization).
    window.deleteLater()
    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)


def fresh(home: Path) -> None:
    """Each start as a first one: no saved choice, no draft, no history; the models, their
    verified hashes and the ONNX exports (made once per model) stay."""
    for kept in [*home.iterdir(), *(home / "cache").glob("*")]:
        if kept.name in ("models", "verified-hashes.json", "cache", "onnx"):
            continue
        if kept.is_dir() and not kept.is_symlink():
            shutil.rmtree(kept)
        else:
            kept.unlink()


def _run_child(model: str, device: str, home: Path, window_only: bool = False) -> dict[str, float]:
    fresh(home)
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "CHATTTS_STUDIO_HOME": str(home)}
    command = [
        sys.executable,
        "-m",
        "chattts_studio.gui.devtools.startup_probe",
        "--child",
        model,
        "--device",
        device,
        *(["--window-only"] if window_only else []),
    ]
    started = time.time()
    done = child_process.run_python(command, env=env, timeout=CHILD_TIMEOUT_S)
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if done.returncode != 0 or not lines:
        raise RuntimeError(
            f"the probe's window failed ({done.returncode}):\n{done.stdout}\n{done.stderr}"
        )
    stamps = json.loads(lines[-1])
    if window_only:
        return {"shown": stamps["shown"] - started}
    return {
        "shown": stamps["shown"] - started,
        "engine": stamps["engine"] - started,
        "loaded": stamps["loaded"] - started,
        "first_audio": stamps["first_audio"] - started,
        "first_audio_after_click": stamps["first_audio"] - stamps["synthesis_asked"],
        "switch": stamps["switched"] - stamps["switch_asked"],
    }


def _private_home() -> Path:
    """A data folder of its own (settings, draft, hash cache) sharing the installed models."""
    from chattts_studio.core import paths

    home = Path(tempfile.mkdtemp(prefix="chattts-startup-probe-"))
    share_folder(home / "models", paths.models_dir())
    return home


def share_folder(link: Path, target: Path) -> None:
    """`link` made to show the folder `target`: a symbolic link, or on Windows, where making
    one needs Developer Mode or an administrator, a directory junction (which needs neither)."""
    try:
        link.symlink_to(target, target_is_directory=True)
    except OSError:
        if not platforms.is_windows():
            raise
        winapi = importlib.import_module("_winapi")  # Windows' own module: not on POSIX
        winapi.CreateJunction(str(target), str(link))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="*", default=["demo", "demo-full"])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--device", default="cpu")
    parser.add_argument(
        "--window-only", action="store_true", help="time the window's first paint alone"
    )
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(_child(args.child, args.device, args.window_only)), flush=True)
        return 0
    from chattts_studio.core.weights import models

    home = _private_home()
    rows = []
    for model in args.models:
        models.ensure(model)
        _run_child(model, args.device, home, args.window_only)  # not counted: fills the caches
        runs = [_run_child(model, args.device, home, args.window_only) for _ in range(args.runs)]
        median = {key: statistics.median(r[key] for r in runs) for key in runs[0]}
        rows.append((model, median, runs))
        print(f"{model}: " + json.dumps(runs), file=sys.stderr)
    names = " | ".join(model for model, _m, _r in rows)
    print(f"| from the command starting ({args.device}, median of {args.runs}) | {names} |")
    print("|---|" + "---|" * len(rows))
    for key, label in FIGURES:
        if key not in rows[0][1]:
            continue
        print(f"| {label} | " + " | ".join(f"{m[key]:.2f} s" for _n, m, _r in rows) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
