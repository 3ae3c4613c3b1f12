"""The decode step exported to ONNX once per model and precision, kept in the app's cache.

A folder per key (the weights' identity, this module's FORMAT, the torch and ONNX Runtime versions)
and precision: fp32 is torch's exporter's graph (and the vocoder's), int8 ONNX Runtime's dynamic
quantization of it. A folder is built under a temporary name, renamed into place and used only when
its manifest (written last: every file's size and sha256) matches; otherwise it is made again. One
lock file per key; exports no longer used are pruned. Layout and sizes: docs/engines.md."""

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
from pathlib import Path
from typing import Any

import filelock
import torch

from chattts_studio.core import paths
from chattts_studio.core.atomic import os_error_reason, replace_file
from chattts_studio.core.child_process import child_env
from chattts_studio.core.engine.cancel import CancelToken
from chattts_studio.core.engine.devices import Precision
from chattts_studio.core.errors import ModelError
from chattts_studio.core.messages import QT_TRANSLATE_NOOP, Sentence
from chattts_studio.core.weights import hashcache, models

FORMAT = 4  # raise when graph.py or vocoder.py changes what an export computes (4: embeds in)
UNUSED_DAYS = 90  # an export of other weights unused this long is deleted (~1 GB each)
USED = ".used"  # touched at every use: when the export was last used
MANIFEST = "manifest.json"
STEP_FILE = "step.onnx"
VOCODER_FILE = "vocoder.onnx"  # fp32 only: the vocoder is not quantized (vocoder.py)
LOCK_POLL_S = 0.5
FAILED_MARK = "ONNX export failed: "  # the child's last stderr line starts so (exporter.py)
CHILD = "chattts_studio.core.engine.onnxrt.exporter"
log = logging.getLogger("chattts_studio")
Report = Callable[[str, float], None]


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
) -> Path:
    """The verified step.onnx for this model and precision (fp32 or int8), made if missing or
    damaged, by a child process (exporter.py says why). Raises ModelError with one sentence
    when the export fails, Cancelled (the child killed) when `cancel` is set meanwhile. A
    cache the disk will not write to (read-only, full) still serves a whole export it holds;
    without one, that is the sentence."""
    folder = export_root() / export_key(info)
    try:
        step = _ensure_locked(folder, info, precision, report, cancel)
    except OSError as exc:  # the lock file, the folder, the mark of use: the disk refused
        whole = _whole_as_is(folder, precision)
        if whole is None:
            raise ModelError(not_made(folder, exc)) from None
        log.warning(
            "The ONNX cache %s cannot be written (%s); its export is used as it is.", folder, exc
        )
        return whole
    prune(folder.name)
    return step


def _ensure_locked(
    folder: Path,
    info: models.ModelInfo,
    precision: Precision,
    report: Report,
    cancel: CancelToken,
) -> Path:
    folder.parent.mkdir(parents=True, exist_ok=True)
    with _locked(folder.with_suffix(".lock"), cancel):
        # Under the lock no other process is building: a half-built folder is a dead one's.
        for left in folder.glob("*.building-*"):
            shutil.rmtree(left, ignore_errors=True)
        fp32 = _ensure(
            folder / "fp32", lambda out: _build(_fp32_order(info, out), cancel), report, cancel
        )
        step = fp32
        if precision is not Precision.FP32:
            order = {"kind": "int8", "fp32": str(fp32), "out": ""}
            step = _ensure(
                folder / "int8",
                lambda out: _build({**order, "out": str(out)}, cancel),
                report,
                cancel,
            )
        (folder / USED).touch()
    return step


def _whole_as_is(folder: Path, precision: Precision) -> Path | None:
    """The export's step when every folder it needs is whole (read without the lock: a
    cache that takes no lock file takes no writer either), else None."""
    needed = [folder / "fp32"] + ([] if precision is Precision.FP32 else [folder / "int8"])
    if all(verified(part) for part in needed):
        return needed[-1] / STEP_FILE
    return None


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
    folder: Path, build: Callable[[Path], None], report: Report, cancel: CancelToken
) -> Path:
    if verified(folder):
        return folder / STEP_FILE
    if folder.exists():
        log.warning("The ONNX export in %s is damaged or incomplete; making it again.", folder)
        shutil.rmtree(folder, ignore_errors=True)
    cancel.check()
    report(f"making the ONNX {folder.name} decode step (once per model)", 0.6)
    building = folder.with_name(f"{folder.name}.building-{os.getpid()}-{uuid.uuid4().hex[:8]}")
    try:
        building.mkdir(parents=True)
        build(building)
        hashed = _write_manifest(building)
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
    # Just hashed: the next start need not read them again (a rename keeps their stamps).
    hashcache.remember({folder / name: entry for name, entry in hashed.items()})
    cancel.check()
    return folder / STEP_FILE


def _write_manifest(folder: Path) -> dict[str, hashcache.Hashed]:
    """Hash every file the build wrote and list them in the manifest, written last."""
    files: dict[str, dict[str, object]] = {}
    hashed: dict[str, hashcache.Hashed] = {}
    for path in sorted(p for p in folder.iterdir() if p.is_file()):
        stamps: list[os.stat_result] = []
        digest = models.sha256_file(path, stamps=stamps)
        files[path.name] = {"size": stamps[0].st_size, "sha256": digest}
        hashed[path.name] = hashcache.Hashed(digest, hashcache.stamp(stamps[0]))
    record = {"format": FORMAT, "files": files}
    (folder / MANIFEST).write_text(json.dumps(record, indent=1), encoding="utf-8")
    return hashed


def verified(folder: Path, rehash: bool = False) -> bool:
    """Whether `folder` holds a whole export: its manifest lists step.onnx and every listed
    file has its size and sha256 (unchanged files keep a verdict: see hashcache.py; `rehash`:
    every byte read again all the same)."""
    try:
        record = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
        files = record["files"]
        if record.get("format") != FORMAT or STEP_FILE not in files:
            return False
        if folder.name == "fp32" and VOCODER_FILE not in files:
            return False
        fresh: dict[Path, hashcache.Hashed] = {}
        for name, entry in files.items():
            path = folder / name
            if path.stat().st_size != entry["size"]:
                return False
            digest = None if rehash else hashcache.cached(path)
            if digest is None:
                stamps: list[os.stat_result] = []
                digest = models.sha256_file(path, stamps=stamps)
                if stamps[0] == stamps[-1]:
                    fresh[path] = hashcache.Hashed(digest, hashcache.stamp(stamps[0]))
            if digest != entry["sha256"]:
                return False
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return False
    hashcache.remember(fresh)
    return True


def recheck(folder: Path) -> None:
    """After NaN or infinity from the export in `folder` (session.py, vocoder.py): a kept
    verdict is no proof against bit rot, which changes a file in place and keeps its size,
    time and inode, so every file is hashed again. Whole: nothing (the numbers are the
    model's own; the decoder says so). Damaged: its manifest goes, so the next load makes the
    export again, and ModelError says so in one sentence."""
    if verified(folder, rehash=True):
        return
    log.warning("The ONNX export in %s is damaged (its files changed after it was made).", folder)
    hashcache.forget([path for path in folder.iterdir() if path.is_file()])
    try:
        (folder / MANIFEST).unlink(missing_ok=True)
    except OSError:  # a read-only cache: the person deletes it
        raise ModelError(
            Sentence(
                QT_TRANSLATE_NOOP(
                    "core",
                    "The ONNX export in {folder} is damaged (its files changed after it was "
                    "made); delete that folder and load the model again to make it again.",
                ),
                folder=str(folder),
            )
        ) from None
    raise ModelError(
        Sentence(
            QT_TRANSLATE_NOOP(
                "core",
                "The ONNX export in {folder} was damaged (its files changed after it was "
                "made); load the model again to make it again.",
            ),
            folder=str(folder),
        )
    )


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
