"""The ONNX export's cache: made once per weights and precision, reused, made again when
damaged or when the weights change (never loaded damaged: every load hashes the bytes it hands
to ONNX Runtime, so rot with the size and times kept is found too), one export when two
processes ask at once, and a failed export is one sentence with nothing left behind."""

import json
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
import torch

from chattts_studio.core import paths
from chattts_studio.core.engine.cancel import CancelToken
from chattts_studio.core.engine.engine import Engine
from chattts_studio.core.engine.onnxrt import export, manifest
from chattts_studio.core.engine.request import Precision
from chattts_studio.core.errors import Cancelled, ModelError
from chattts_studio.core.weights import models


@pytest.fixture
def fresh_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, demo_model: str) -> Path:
    """A data folder sharing the session's demo weights, with a cache of its own."""
    shared = paths.models_dir()
    home = tmp_path / "home"
    home.mkdir()
    (home / "models").symlink_to(shared)
    monkeypatch.setenv("CHATTTS_STUDIO_HOME", str(home))
    return home


def _counting(monkeypatch: pytest.MonkeyPatch, fake: bool) -> list[Path]:
    """Record every build; `fake`: write a small stand-in instead of exporting (the cache's
    rules do not depend on what the files hold)."""
    built: list[Path] = []
    real = export._build

    def build(order: dict[str, Any], cancel: CancelToken) -> None:
        out = Path(order["out"])
        built.append(out)
        if fake:
            (out / manifest.STEP_FILE).write_bytes(os.urandom(4096))
            (out / "step.onnx.data").write_bytes(os.urandom(65536))
            (out / manifest.VOCODER_FILE).write_bytes(os.urandom(4096))
        else:
            real(order, cancel)

    monkeypatch.setattr(export, "_build", build)
    return built


def _ensure(
    engine: Engine, precision: Precision = Precision.FP32, stages: list[str] | None = None
) -> Path:
    """The export's step file, its graphs read, checked and let go."""
    assert engine.model is not None and engine.loaded is not None
    report = (lambda s, _f: stages.append(s)) if stages is not None else (lambda _s, _f: None)
    made = export.ensure_export(engine.loaded.info, precision, report, CancelToken())
    made.step.release()
    made.vocoder.release()
    return made.step.path


def test_an_export_is_made_once_then_reused(
    fresh_home: Path, demo_model: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    built = _counting(monkeypatch, fake=False)
    stages: list[str] = []
    engine = Engine()
    try:
        engine.load(
            demo_model, "cpu", "fp32", engine="onnx", progress=lambda s, _f: stages.append(s)
        )
        assert len(built) == 1 and any("making the ONNX fp32" in s for s in stages)
        step = engine.model.decode_step if engine.model else None
        assert step is not None and step.path.is_relative_to(fresh_home / "cache" / "onnx")
        assert manifest.verified(step.path.parent)
        # The vocoder's graph is part of the export, and runs (onnxrt/vocoder.py).
        assert (step.path.parent / manifest.VOCODER_FILE).is_file()
        assert engine.model is not None and engine.model.vocoder_front is not None
        engine.unload()
        engine.load(demo_model, "cpu", "fp32", engine="onnx")
        assert len(built) == 1  # reused, not exported again
    finally:
        engine.unload()


def test_a_damaged_export_is_made_again_and_never_loaded(
    fresh_home: Path, engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    built = _counting(monkeypatch, fake=True)
    step = _ensure(engine)
    folder = step.parent
    data = folder / "step.onnx.data"
    with open(data, "r+b") as fh:  # one byte changed, size kept
        fh.seek(1000)
        byte = fh.read(1)
        fh.seek(1000)
        fh.write(bytes([byte[0] ^ 0xFF]))
    assert not manifest.verified(folder)
    assert _ensure(engine) == step and len(built) == 2
    assert manifest.verified(folder)
    record = json.loads((folder / manifest.MANIFEST).read_text(encoding="utf-8"))
    del record["files"][manifest.VOCODER_FILE]  # an export made before the vocoder's graph
    (folder / manifest.MANIFEST).write_text(json.dumps(record), encoding="utf-8")
    assert not manifest.verified(folder)
    assert _ensure(engine) == step and len(built) == 3
    (folder / manifest.MANIFEST).write_text("{", encoding="utf-8")  # a torn manifest
    _ensure(engine)
    assert len(built) == 4 and manifest.verified(folder)
    (folder / "step.onnx.data").unlink()  # a file gone
    _ensure(engine)
    assert len(built) == 5 and manifest.verified(folder)
    assert not list(folder.parent.glob("*.building-*"))
    dead = folder.parent / "fp32.building-999999-deadbeef"  # a killed export's leftovers
    dead.mkdir()
    (dead / manifest.STEP_FILE).write_bytes(b"half")
    _ensure(engine)
    assert not dead.exists() and len(built) == 5


def test_other_weights_export_again(
    fresh_home: Path, engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    built = _counting(monkeypatch, fake=True)
    first = _ensure(engine)
    monkeypatch.setattr(models, "weights_identity", lambda _info: "0123456789abcdef")
    second = _ensure(engine)
    assert len(built) == 2 and first.parent.parent != second.parent.parent
    assert second.parent.parent.name.startswith("0123456789abcdef-")


def test_a_failed_export_is_one_sentence_and_leaves_nothing(
    fresh_home: Path, engine: Engine, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The exporting child really fails (its model's files are gone, after it wrote part of
    its output): its reason comes back as one sentence, and nothing of it stays."""
    fp32_order = export._fp32_order
    gone = tmp_path / "gone"
    gone.mkdir()

    def broken(info: models.ModelInfo, out: Path) -> dict[str, Any]:
        (out / manifest.STEP_FILE).write_bytes(b"half")
        return {**fp32_order(info, out), "folder": str(gone)}

    monkeypatch.setattr(export, "_fp32_order", broken)
    with pytest.raises(ModelError) as caught:
        _ensure(engine)
    message = str(caught.value)
    assert "could not be exported for ONNX Runtime" in message and "\n" not in message
    assert "could not be loaded" in message  # the child's own sentence, passed on
    assert "Traceback" not in message
    root = export.export_root()
    assert not [p for p in root.rglob("*") if p.is_file() and p.suffix != ".lock"]


def test_a_cancel_kills_the_exporting_child_and_leaves_nothing(
    fresh_home: Path, engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """torch's exporter cannot stop in-process; its child is killed within a poll."""
    children: list[subprocess.Popen[bytes]] = []
    popen = subprocess.Popen

    def recorded(*args: Any, **kwargs: Any) -> subprocess.Popen[bytes]:
        children.append(popen(*args, **kwargs))
        return children[-1]

    monkeypatch.setattr(export.subprocess, "Popen", recorded)
    token = CancelToken()
    threading.Timer(1.0, token.cancel).start()  # the child takes several seconds
    started = time.monotonic()
    assert engine.loaded is not None
    with pytest.raises(Cancelled):
        export.ensure_export(engine.loaded.info, Precision.FP32, lambda _s, _f: None, token)
    assert time.monotonic() - started < 1.0 + 2 * export.LOCK_POLL_S + 1.0
    assert len(children) == 1 and children[0].poll() is not None  # dead, and reaped
    root = export.export_root()
    assert not [p for p in root.rglob("*") if p.is_file() and p.suffix != ".lock"]


def test_two_processes_asking_at_once_make_one_export(fresh_home: Path, demo_model: str) -> None:
    script = (
        "from chattts_studio.core.engine.engine import Engine\n"
        "e = Engine()\n"
        f"e.load({demo_model!r}, 'cpu', 'fp32', engine='onnx', "
        "progress=lambda s, f: print('STAGE', s, flush=True))\n"
        "print('ENGINE', e.loaded.engine.value)\n"
        "import sys\n"
        "print('EXPORTER HERE', [m for m in ('onnx', 'onnxscript') if m in sys.modules])\n"
    )
    env = {**os.environ, "CHATTTS_STUDIO_HOME": str(fresh_home)}
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", script],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for _ in range(2)
    ]
    outs = [p.communicate(timeout=600) for p in procs]
    for proc, (out, err) in zip(procs, outs, strict=True):
        assert proc.returncode == 0, err[-2000:]
        assert "ENGINE onnx" in out
        # The export ran in a child: its exporter's modules (and garbage) never came here.
        assert "EXPORTER HERE []" in out, out
    made = sum(out.count("making the ONNX fp32") for out, _ in outs)
    assert made == 1, [out for out, _ in outs]
    folders = list(export.export_root().glob("*/fp32"))
    assert len(folders) == 1 and manifest.verified(folders[0])


def test_exports_that_will_not_be_used_again_are_deleted(
    fresh_home: Path, engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each export is ~1 GB. Using one deletes the same weights' exports
    made by other software versions and other weights' exports unused for 90 days; recent
    exports of other weights, and one another process holds, stay."""
    import time

    import filelock

    _counting(monkeypatch, fake=True)
    root = export.export_root()
    root.mkdir(parents=True)
    assert engine.loaded is not None
    key = export.export_key(engine.loaded.info)
    weights = key.split("-", 1)[0]
    old_days = (export.UNUSED_DAYS + 1) * 86_400

    def made(name: str, age: float = 0.0) -> Path:
        folder = root / name
        (folder / "fp32").mkdir(parents=True)
        (folder / "fp32" / manifest.STEP_FILE).write_bytes(b"x")
        stamp = time.time() - age
        os.utime(folder, (stamp, stamp))
        return folder

    older_software = made(f"{weights}-f1-torch2.0.0-ort1.0.0")
    other_recent = made("0123456789abcdef-f2-torch2.14.1-ort1.32.0", age=86_400)
    other_unused = made("fedcba9876543210-f2-torch2.14.1-ort1.32.0", age=old_days)
    held = made("00000000aaaaaaaa-f2-torch2.14.1-ort1.32.0", age=old_days)
    lock = filelock.FileLock(str(held.with_suffix(".lock")))
    with lock:  # another process uses it now
        _ensure(engine)
    assert (root / key / export.USED).exists()
    assert not older_software.exists() and not other_unused.exists()
    assert other_recent.exists() and held.exists()
    assert manifest.verified(root / key / "fp32")


def _rot(data: Path, onnx_file: Path) -> None:
    """Bit rot inside the largest weight tensor of `data` (the graph's external data): a few
    bits flipped in place, the file's size, modification time (to the nanosecond) and inode
    kept, as a disk's decay keeps them. The numbers stay finite: only the audio changes."""
    import onnx

    graph = onnx.load(str(onnx_file), load_external_data=False).graph
    spans = []
    for tensor in graph.initializer:
        where = {entry.key: entry.value for entry in tensor.external_data}
        if where.get("location") == data.name:
            spans.append((int(where.get("length", 0)), int(where.get("offset", 0))))
    length, offset = max(spans)
    before = data.stat()
    with open(data, "r+b") as fh:
        fh.seek(offset + length // 2)
        flipped = bytes(b ^ 0x01 for b in fh.read(64))  # the lowest mantissa bit of 16 floats
        fh.seek(offset + length // 2)
        fh.write(flipped)
    os.utime(data, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = data.stat()
    assert (after.st_size, after.st_mtime_ns, after.st_ino) == (
        before.st_size,
        before.st_mtime_ns,
        before.st_ino,
    )


def test_an_export_rotted_in_place_is_found_at_load_and_made_again(
    demo_model: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The run's export copied into a data folder of its own (no export paid here): its
    audio is the fresh export's. Bits flipped in the step's and the vocoder's weights, size,
    time and inode kept: the next load finds it, says so in its stage, makes it again once,
    and speaks as the fresh export did; a load after that reads the export and makes
    nothing."""
    from chattts_studio.core.cli.common import _said_stage
    from chattts_studio.core.engine.request import SynthesisRequest

    info = models.resolve(demo_model)
    shared = export.ensure_export(info, Precision.FP32, lambda _s, _f: None, CancelToken())
    shared.step.release()
    shared.vocoder.release()
    home = tmp_path / "home"
    home.mkdir()
    (home / "models").symlink_to(paths.models_dir())
    monkeypatch.setenv("CHATTTS_STUDIO_HOME", str(home))
    folder = export.export_root() / shared.step.path.parent.parent.name / "fp32"
    shutil.copytree(shared.step.path.parent, folder)
    built = _counting(monkeypatch, fake=False)
    request = SynthesisRequest("你好。", refine_text=False, seed=7)
    engine = Engine()

    def load() -> list[str]:
        stages: list[str] = []
        engine.load(
            demo_model, "cpu", "fp32", engine="onnx", progress=lambda s, _f: stages.append(s)
        )
        return stages

    try:
        load()
        fresh = [torch.as_tensor(r.audio) for r in engine.synthesize(request)]
        engine.unload()
        assert not built
        _rot(folder / "step.onnx.data", folder / manifest.STEP_FILE)
        _rot(folder / "vocoder.onnx.data", folder / manifest.VOCODER_FILE)
        assert not manifest.verified(folder)
        stages = load()
        assert export.AGAIN["fp32"] in stages, stages
        assert _said_stage(export.AGAIN["fp32"])  # the CLI prints it on stderr
        assert len(built) == 1 and manifest.verified(folder)
        again = [torch.as_tensor(r.audio) for r in engine.synthesize(request)]
        assert len(again) == len(fresh)
        assert all(torch.equal(a, b) for a, b in zip(again, fresh, strict=True))
        engine.unload()
        stages = load()
        assert len(built) == 1 and not any(s.startswith("making") for s in stages), stages
    finally:
        engine.unload()


def _flip(path: Path) -> None:
    """One byte changed in place, the file's size and times kept (to the nanosecond)."""
    before = path.stat()
    with open(path, "r+b") as fh:
        fh.seek(100)
        byte = fh.read(1)
        fh.seek(100)
        fh.write(bytes([byte[0] ^ 0x01]))
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))


def test_int8_and_the_fp32_it_is_made_from_are_checked_too(
    fresh_home: Path, engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """int8's own file rotted: int8 alone is made again (its stage says so). fp32 rotted
    while int8 is missing: fp32 is made again before int8 is quantized from it."""
    built = _counting(monkeypatch, fake=True)
    int8 = _ensure(engine, Precision.INT8).parent
    fp32 = int8.parent / "fp32"
    assert [b.name.split(".")[0] for b in built] == ["fp32", "int8"]
    _flip(int8 / manifest.STEP_FILE)
    stages: list[str] = []
    assert _ensure(engine, Precision.INT8, stages) == int8 / manifest.STEP_FILE
    assert stages == [export.AGAIN["int8"]] and len(built) == 3
    shutil.rmtree(int8)
    _flip(fp32 / "step.onnx.data")  # not read by an fp32 step's int8 load, but quantized
    stages.clear()
    _ensure(engine, Precision.INT8, stages)
    assert stages == [export.AGAIN["fp32"], "making the ONNX int8 decode step (once per model)"]
    assert [b.name.split(".")[0] for b in built[3:]] == ["fp32", "int8"]
    assert manifest.verified(fp32) and manifest.verified(int8)


def test_a_damaged_part_is_made_again_once_per_load(
    fresh_home: Path, engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Bytes that never match, even right after an export (a failing disk): made again once,
    then one sentence, not a loop."""
    built = _counting(monkeypatch, fake=True)
    _ensure(engine)

    class Rotten:  # every read of the export hashes to another digest
        def update(self, _data: object) -> None:
            pass

        def hexdigest(self) -> str:
            return "0" * 64

    monkeypatch.setattr(manifest, "_hashers", lambda _entry: {"sha256": Rotten()})
    stages: list[str] = []
    with pytest.raises(ModelError) as caught:
        _ensure(engine, stages=stages)
    message = str(caught.value)
    assert "damaged again as soon as it was made again" in message and "\n" not in message
    assert len(built) == 2 and stages == [export.AGAIN["fp32"]]


def test_a_manifest_without_blake3_gets_it_and_is_then_checked_by_it(
    fresh_home: Path, engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An export listed by sha256 alone (made before BLAKE3): checked by sha256 once, while
    its BLAKE3 is taken in the same read and written into the manifest; from then on BLAKE3
    alone, at about three times the speed."""
    built = _counting(monkeypatch, fake=True)
    folder = _ensure(engine).parent
    listing = folder / manifest.MANIFEST
    record = json.loads(listing.read_text(encoding="utf-8"))
    digests = {name: entry.pop("blake3") for name, entry in record["files"].items()}
    listing.write_text(json.dumps(record), encoding="utf-8")
    taken: list[set[str]] = []
    hashers = manifest._hashers

    def counted(entry: dict[str, Any]) -> dict[str, Any]:
        made = hashers(entry)
        taken.append(set(made))
        return made

    monkeypatch.setattr(manifest, "_hashers", counted)
    _ensure(engine)
    assert taken and all(kinds == {"sha256", "blake3"} for kinds in taken)
    record = json.loads(listing.read_text(encoding="utf-8"))
    assert {name: entry["blake3"] for name, entry in record["files"].items()} == digests
    taken.clear()
    _ensure(engine)
    assert taken and all(kinds == {"blake3"} for kinds in taken) and len(built) == 1


def test_the_precision_advice_never_names_the_precision_in_use() -> None:
    from chattts_studio.core.engine.decode.job import non_finite_sentence

    for dtype, name in ((torch.float16, "fp16"), (torch.bfloat16, "bf16"), (torch.float32, "fp32")):
        said = non_finite_sentence(dtype)
        advice = said.split(";", 1)[1]
        assert f"at {name} precision" in said and name not in advice, said


def test_a_read_only_cache_serves_its_whole_export_and_says_why_it_cannot_make_one(
    fresh_home: Path, engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    from disk_faults import files_under, read_only, small_disk

    built = _counting(monkeypatch, fake=True)
    with small_disk(fresh_home / "cache", size="4m") as cache:
        step = _ensure(engine)
        before = files_under(cache)
        read_only(cache)
        assert _ensure(engine) == step and len(built) == 1  # used as it is, no lock file
        with pytest.raises(ModelError) as caught:
            _ensure(engine, Precision.INT8)  # not made yet, and cannot be
        message = str(caught.value)
        assert "read-only" in message and "torch engine" in message and "\n" not in message
        assert files_under(cache) == before


def test_a_full_cache_is_one_sentence_and_keeps_the_other_exports(
    fresh_home: Path, engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    from disk_faults import files_under, fill, small_disk

    _counting(monkeypatch, fake=True)  # each build writes 72 KiB
    with small_disk(fresh_home / "cache", size="256k") as cache:
        other = export.export_root() / "0123456789abcdef-f4-torch2.0.0-ort1.0.0" / "fp32"
        other.mkdir(parents=True)
        (other / manifest.STEP_FILE).write_bytes(b"another model's export")
        before = files_under(cache)
        fill(cache, leave=16_384)
        with pytest.raises(ModelError) as caught:
            _ensure(engine)
        message = str(caught.value)
        assert "the disk is full" in message and "torch engine" in message, message
        assert "\n" not in message and "Traceback" not in message
        assert not list(export.export_root().glob("*/*.building-*"))
        unlocked = {k: v for k, v in files_under(cache).items() if not k.endswith(".lock")}
        assert unlocked == before  # the other export as it was; only a lock file was made
