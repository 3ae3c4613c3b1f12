"""The decode step exported to ONNX once per model and precision (fp32, or int8 by dynamic
quantization), kept in the app's cache with a manifest of hashes checked at every load. See
docs/engines.md.
"""

import contextlib
import errno
import json
import logging
import os
import shutil
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import filelock
import torch

from chattts_studio.core import paths
from chattts_studio.core.atomic import os_error_reason, replace_file
from chattts_studio.core.child_process import child_env
from chattts_studio.core.engine.cancel import CancelToken
from chattts_studio.core.engine.onnxrt.manifest import (
    FORMAT,
    STEP_FILE,
    VOCODER_FILE,
    Damaged,
    Graph,
    listed,
    read_graph,
    verified,
    write_manifest,
)
from chattts_studio.core.engine.request import Precision
from chattts_studio.core.errors import ModelError
from chattts_studio.core.messages import QT_TRANSLATE_NOOP, Sentence
from chattts_studio.core.weights import models

UNUSED_DAYS = 90  # an export of other weights unused this long is deleted (~1 GB each)
USED = ".used"  # touched at every use: when the export was last used
LOCK_POLL_S = 0.5
FAILED_MARK = "ONNX export failed: "  # the child's last stderr line starts so (exporter.py)
CHILD = "chattts_studio.core.engine.onnxrt.exporter"
# The load stage of an export made again because its files no longer matched their hashes (the
# window shows it translated; the CLI prints it).
AGAIN = {
    "fp32": QT_TRANSLATE_NOOP(
        "Stage", "making the ONNX fp32 decode step again: the cached one was damaged"
    ),
    "int8": QT_TRANSLATE_NOOP(
        "Stage", "making the ONNX int8 decode step again: the cached one was damaged"
    ),
}
log = logging.getLogger("chattts_studio")
Report = Callable[[str, float], None]


@dataclass
class Export:
    """What a load of the `onnx` engine needs: the decode step (fp32 or int8) and the
    vocoder's graph (fp32's)."""

    step: Graph
    vocoder: Graph


def export_root() -> Path:
    return paths.cache_dir() / "onnx"


def export_key(info: models.ModelInfo) -> str:
    import onnxruntime

    return (
        f"{models.weights_identity(info)}-f{FORMAT}"
        f"-torch{torch.__version__.split('+')[0]}-ort{onnxruntime.__version__}"
    )


def ensure_export(
    info: models.ModelInfo,
    precision: Precision,
    report: Report,
    cancel: CancelToken,
) -> Export:
    """The export for this model and precision (fp32 or int8), made if missing, incomplete or
    damaged, by a child process (exporter.py says why), and read: every byte hashed against
    the manifest as it is read. A part found damaged is deleted and made again, the load stage
    saying so (AGAIN). Raises ModelError with one sentence when the export fails, Cancelled
    (the child killed) when `cancel` is set meanwhile. A cache the disk will not write to
    (read-only, full) still serves a whole export it holds; without one, that is the
    sentence."""
    folder = export_root() / export_key(info)
    try:
        export = _ensure_locked(folder, info, precision, report, cancel)
    except OSError as exc:  # the lock file, the folder, the mark of use: the disk refused
        whole = _whole_as_is(folder, precision)
        if whole is None:
            raise ModelError(not_made(folder, exc)) from None
        log.warning(
            "The ONNX cache %s cannot be written (%s); its export is used as it is.", folder, exc
        )
        return whole
    prune(folder.name)
    return export


def _ensure_locked(
    folder: Path,
    info: models.ModelInfo,
    precision: Precision,
    report: Report,
    cancel: CancelToken,
) -> Export:
    folder.parent.mkdir(parents=True, exist_ok=True)
    with _locked(folder.with_suffix(".lock"), cancel):
        # Under the lock no other process is building: a half-built folder is a dead one's.
        for left in folder.glob("*.building-*"):
            shutil.rmtree(left, ignore_errors=True)
        damaged: set[str] = set()  # the parts made again in this load
        while True:
            try:
                export = _made_and_read(folder, info, precision, report, cancel, damaged)
                break
            except Damaged as bad:
                part = bad.folder.name
                if part in damaged:  # made just now and damaged already: the disk fails
                    raise ModelError(_damaged_again(bad.folder)) from None
                damaged.add(part)
                log.info("The ONNX export in %s is damaged; making it again.", bad.folder)
                shutil.rmtree(bad.folder, ignore_errors=True)
        (folder / USED).touch()
    return export


def _made_and_read(
    folder: Path,
    info: models.ModelInfo,
    precision: Precision,
    report: Report,
    cancel: CancelToken,
    again: set[str],
) -> Export:
    """Each part the precision needs made where it is not whole by its manifest, then its
    graphs read and checked (raises Damaged). Before int8 is quantized from fp32, fp32's
    files are hashed: a damaged one would be quantized into it."""
    fp32 = _ensure(
        folder / "fp32",
        lambda out: _build(_fp32_order(info, out), cancel),
        report,
        cancel,
        again="fp32" in again,
    )
    step = fp32
    if precision is not Precision.FP32:
        if listed(folder / "int8") is None and not verified(fp32):
            raise Damaged(fp32)
        order = {"kind": "int8", "fp32": str(fp32 / STEP_FILE), "out": ""}
        step = _ensure(
            folder / "int8",
            lambda out: _build({**order, "out": str(out)}, cancel),
            report,
            cancel,
            again="int8" in again,
        )
    cancel.check()
    graph = read_graph(step, STEP_FILE, upgrade=True)
    cancel.check()
    return Export(graph, read_graph(fp32, VOCODER_FILE, upgrade=True))


def _whole_as_is(folder: Path, precision: Precision) -> Export | None:
    """The export when every part it needs is whole, read without the lock (a cache that
    takes no lock file takes no writer either), else None; a damaged one cannot be made again
    here: one sentence."""
    fp32, step = folder / "fp32", folder / ("fp32" if precision is Precision.FP32 else "int8")
    if listed(fp32) is None or listed(step) is None:
        return None
    try:
        return Export(read_graph(step, STEP_FILE), read_graph(fp32, VOCODER_FILE))
    except Damaged as bad:
        raise ModelError(
            Sentence(
                QT_TRANSLATE_NOOP(
                    "core",
                    "The ONNX export in {folder} is damaged (its files changed after it was "
                    "made); delete that folder and load the model again to make it again.",
                ),
                folder=str(bad.folder),
            )
        ) from None


def _damaged_again(folder: Path) -> Sentence:
    return Sentence(
        QT_TRANSLATE_NOOP(
            "core",
            "The ONNX export in {folder} was damaged again as soon as it was made again (the "
            "disk may be failing); the torch engine needs no export.",
        ),
        folder=str(folder),
    )


def not_made(folder: Path, exc: BaseException) -> Sentence:
    """The sentence for an export the disk refused: where, why, and the way around it."""
    if not isinstance(exc, OSError) and _nearly_full(folder):
        exc = OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(folder))
    reason = os_error_reason(exc) if isinstance(exc, OSError) else str(exc)
    return Sentence(
        QT_TRANSLATE_NOOP(
            "core",
            "The model cannot be exported for ONNX Runtime into {folder}: {reason}; the torch "
            "engine needs no export.",
        ),
        folder=str(folder),
        reason=reason,
    )


def _nearly_full(folder: Path) -> bool:
    """Whether the disk under `folder` (or the nearest folder that exists) is all but full:
    the exporting child says a full disk in its own words."""
    for place in (folder, *folder.parents):
        try:
            return shutil.disk_usage(place).free < 1 << 20
        except OSError:
            continue
    return False


def prune(current: str, now: float | None = None) -> list[Path]:
    """Delete the exports that will not be used again (see the module's note), never
    `current` (the key in use) nor one another process holds; the folders deleted."""
    import time

    now = time.time() if now is None else now
    weights = current.split("-", 1)[0]
    gone = []
    for folder in sorted(export_root().iterdir()):
        if not folder.is_dir() or folder.name == current or ".building-" in folder.name:
            continue
        used = folder / USED
        last = (used if used.exists() else folder).stat().st_mtime
        stale = folder.name.split("-", 1)[0] == weights  # these weights, older software
        if not (stale or now - last > UNUSED_DAYS * 86_400):
            continue
        lock = filelock.FileLock(str(folder.with_suffix(".lock")))
        try:
            lock.acquire(timeout=0)
        except filelock.Timeout:
            continue  # another process builds or reads it now
        try:
            shutil.rmtree(folder, ignore_errors=True)
        finally:
            lock.release()
        if folder.exists():  # a file in use (an older version of the app runs it): next time
            log.info("The ONNX export %s is in use; it is deleted later.", folder.name)
            continue
        gone.append(folder)
        log.info("Deleted the ONNX export %s (no longer used).", folder.name)
    return gone


@contextlib.contextmanager
def _locked(path: Path, cancel: CancelToken) -> Iterator[None]:
    lock = filelock.FileLock(str(path))
    while True:  # waits for another process's export, still cancellable
        try:
            lock.acquire(timeout=LOCK_POLL_S)
            break
        except filelock.Timeout:
            cancel.check()
    try:
        yield
    finally:
        lock.release()


def _ensure(
    folder: Path,
    build: Callable[[Path], None],
    report: Report,
    cancel: CancelToken,
    again: bool = False,
) -> Path:
    """`folder`, made (by `build`) unless its manifest lists it whole by the files' sizes;
    their bytes are checked when they are read (read_graph). `again`: it was found damaged in
    this load, and the stage says so."""
    if listed(folder) is not None:
        return folder
    if folder.exists():
        log.warning("The ONNX export in %s is damaged or incomplete; making it again.", folder)
        shutil.rmtree(folder, ignore_errors=True)
    cancel.check()
    first = f"making the ONNX {folder.name} decode step (once per model)"
    report(AGAIN[folder.name] if again else first, 0.6)
    building = folder.with_name(f"{folder.name}.building-{os.getpid()}-{uuid.uuid4().hex[:8]}")
    try:
        building.mkdir(parents=True)
        build(building)
        write_manifest(building)
        replace_file(building, folder)
    except Exception as exc:
        shutil.rmtree(building, ignore_errors=True)
        if isinstance(exc, OSError) or (isinstance(exc, RuntimeError) and _nearly_full(folder)):
            raise ModelError(not_made(folder.parent, exc)) from None
        if isinstance(exc, RuntimeError | ValueError):
            reason = str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__
            raise ModelError(
                Sentence(
                    QT_TRANSLATE_NOOP(
                        "core", "The model could not be exported for ONNX Runtime: {reason}"
                    ),
                    reason=reason,
                )
            ) from exc
        raise
    cancel.check()
    return folder


def _fp32_order(info: models.ModelInfo, out: Path) -> dict[str, Any]:
    folder, dims = str(info.folder), info.dims
    return {"kind": "fp32", "folder": folder, "dims": dims, "name": info.name, "out": str(out)}


def _build(order: dict[str, Any], cancel: CancelToken) -> None:
    """Runs exporter.py in a child process for `order` and waits, cancellable. Raises
    RuntimeError with the child's one-line reason when it fails."""
    argv = [sys.executable, "-m", CHILD, json.dumps(order)]
    # stderr to a file, not a pipe: the exporter's chatter could fill a pipe nobody reads.
    with tempfile.TemporaryFile() as err:
        # stdout too goes to stderr's file: `synth -o -` writes audio on the parent's stdout.
        proc = subprocess.Popen(
            argv, stdin=subprocess.DEVNULL, stdout=err, stderr=err, env=child_env()
        )
        try:
            while True:
                try:
                    code = proc.wait(timeout=LOCK_POLL_S)
                    break
                except subprocess.TimeoutExpired:
                    cancel.check()
        finally:
            if proc.poll() is None:  # cancelled (or interrupted): the export is not wanted
                proc.kill()
                proc.wait()
        if code == 0:
            return
        err.seek(0)
        lines = err.read().decode("utf-8", "replace").splitlines()
    said = [line[len(FAILED_MARK) :] for line in lines if line.startswith(FAILED_MARK)]
    if said:
        raise RuntimeError(said[-1])
    ended = f"signal {-code}" if code < 0 else f"exit code {code}"
    raise RuntimeError(f"the exporting process ended with {ended}")
