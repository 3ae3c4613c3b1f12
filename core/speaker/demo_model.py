"""A CAM++ speaker encoder with seeded random weights in the official sherpa-onnx layout, for the
tests and wherever the official one cannot be fetched. Its ONNX metadata says "random weights", so
is_demo knows it.
"""

import contextlib
import errno
import os
import sys
import uuid
from pathlib import Path

from chattts_studio.core.atomic import os_error_reason
from chattts_studio.core.errors import ModelError
from chattts_studio.core.messages import QT_TRANSLATE_NOOP, Sentence

FAILED_MARK = "demo speaker encoder not made: "  # the child's last stderr line starts so
DEMO_COMMENT = "ChatTTS Studio's CAM++ with random weights: its similarities are noise"
DEMO_MARK = "random weights"
SEED = 0


def _refused(reason: str) -> ModelError:
    return ModelError(
        Sentence(
            QT_TRANSLATE_NOOP("core", "Could not make the demo speaker encoder: {reason}"),
            reason=reason,
        )
    )


def build(target: Path, seed: int = SEED) -> Path:
    """Writes the demo model to `target` (in place: demo_file gives it a temporary name).

    Made in a child process (`python -m chattts_studio.core.speaker.demo_model TARGET SEED`):
    torch's ONNX exporter leaves its objects alive in the process that ran it, and every later
    full garbage collection walks them (core/asr/demo_model.py says the same)."""
    from chattts_studio.core.child_process import run_python

    done = run_python([sys.executable, "-m", __name__, str(target), str(seed)])
    if done.returncode != 0:
        lines = done.stderr.strip().splitlines() or [f"exit code {done.returncode}"]
        said = [line[len(FAILED_MARK) :] for line in lines if line.startswith(FAILED_MARK)]
        reason = said[-1] if said else lines[-1][:200]
        if not said and _nearly_full(target.parent):  # torch says a full disk its own way
            reason = os_error_reason(OSError(errno.ENOSPC, os.strerror(errno.ENOSPC)))
        raise _refused(reason)
    return target


def _nearly_full(folder: Path) -> bool:
    import shutil

    try:
        return shutil.disk_usage(folder).free < 1 << 20
    except OSError:
        return False


def _write(target: Path, seed: int) -> None:
    """build's work, in the child process."""
    import torch

    from chattts_studio.core.speaker.campplus import EMBEDDING, FEATURES, CAMPPlus, export_onnx

    torch.manual_seed(seed)
    model = CAMPPlus(feat_dim=FEATURES, embedding_size=EMBEDDING).eval()
    export_onnx(model, target, DEMO_COMMENT)


def demo_file() -> Path:
    """The demo model in the app's cache, made on first use under a temporary name and then
    renamed: a reader never sees half a model, and two processes making it at once each rename
    a whole one."""
    from chattts_studio.core import paths
    from chattts_studio.core.atomic import replace_file

    target = paths.cache_dir() / "speaker" / "campplus-demo.onnx"
    if target.is_file():
        return target
    building = target.with_name(f".{target.stem}.{uuid.uuid4().hex[:8]}.onnx")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        build(building)
        replace_file(building, target)  # tried again while a scanner holds a new file
    except OSError as exc:  # another process's rename won the race, or the disk refused
        if not target.is_file():
            raise _refused(os_error_reason(exc)) from None
    finally:
        with contextlib.suppress(OSError):  # gone when renamed; a read-only disk refuses even that
            building.unlink()
    return target


def is_demo(model_file: Path) -> bool:
    """Whether `model_file` is a demo model (its metadata's comment says so): about 15 ms for
    the 28 MB file. False for a file that is not a readable ONNX model."""
    import onnx

    try:
        graph = onnx.load(str(model_file), load_external_data=False)
    except Exception:  # OSError, or protobuf's DecodeError for a file that is no model
        return False
    return any(p.key == "comment" and DEMO_MARK in p.value for p in graph.metadata_props)


if __name__ == "__main__":
    try:
        _write(Path(sys.argv[1]), int(sys.argv[2]))
    except OSError as _exc:  # the disk's refusal, said as the app says it (build reads it)
        _where = f" ({_exc.filename})" if _exc.filename else ""
        print(f"{FAILED_MARK}{os_error_reason(_exc)}{_where}", file=sys.stderr)
        sys.exit(1)
