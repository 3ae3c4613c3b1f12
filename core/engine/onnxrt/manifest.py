"""An ONNX export's files as the manifest lists them: each read once and hashed as it is read
(BLAKE3 or sha256), so sessions are made from the very bytes that were checked.
"""

import errno
import hashlib
import json
import mmap
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from chattts_studio.core.atomic import write_text_atomic

FORMAT = 4  # raise when graph.py or vocoder.py changes what an export computes (4: embeds in)
MANIFEST = "manifest.json"
STEP_FILE = "step.onnx"
VOCODER_FILE = "vocoder.onnx"  # fp32 only: the vocoder is not quantized (vocoder.py)
CHUNK = 16 << 20  # bytes read (and hashed) at a time


@dataclass
class Graph:
    """One exported graph as it was read and checked: the .onnx file's bytes and its external
    data's (by the name the graph gives them; large files mapped). ONNX Runtime's session is
    made from these very bytes (session.py's open_session), then they are let go."""

    path: Path
    model: bytes
    data: dict[str, bytes | mmap.mmap]

    def release(self) -> None:
        """Let go of the external data (a mapping is closed: Windows keeps a mapped file)."""
        for buffer in self.data.values():
            if isinstance(buffer, mmap.mmap):
                buffer.close()
        self.data.clear()


class Damaged(Exception):
    """A file of the export in `folder` does not match its manifest (bit rot, a torn write)."""

    def __init__(self, folder: Path) -> None:
        super().__init__(str(folder))
        self.folder = folder


def fast_hasher() -> Callable[[], Any] | None:
    """BLAKE3's constructor (the onnx extra installs it: about 3x sha256's speed here, which
    keeps the check at every load cheap, docs/engines.md), or None without it: sha256 then."""
    try:
        from blake3 import blake3
    except ImportError:
        return None
    return blake3


def _hashers(entry: dict[str, Any]) -> dict[str, Any]:
    """The hashes to take of a file listed as `entry`: BLAKE3 where it is listed and
    installed, else sha256; both where the entry lacks BLAKE3 and it is installed (the
    manifest gets it, read_graph's `upgrade`)."""
    fast = fast_hasher()
    wanted: dict[str, Any] = {} if fast is None else {"blake3": fast()}
    if fast is None or "blake3" not in entry:
        wanted["sha256"] = hashlib.sha256()
    return wanted


def read_hashed(path: Path, size: int, hashers: dict[str, Any]) -> bytes | mmap.mmap | None:
    """The file's bytes, hashed as they are read: mapped (its pages read once, into the page
    cache, and the same pages handed on: ONNX Runtime copies them), or read when small; None
    when it is not `size` bytes long. The caller closes a mapping (Graph.release)."""
    with open(path, "rb") as fh:
        if os.fstat(fh.fileno()).st_size != size:
            return None
        if size < CHUNK:
            buffer: bytes | mmap.mmap = fh.read()
        else:
            buffer = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
    view = memoryview(buffer)
    try:
        for start in range(0, size, CHUNK):
            for hasher in hashers.values():
                hasher.update(view[start : start + CHUNK])
    finally:
        view.release()
    return buffer


def read_graph(folder: Path, name: str, upgrade: bool = False) -> Graph:
    """The graph `name` of the export in `folder` and its external data (`name`.data, when
    the manifest lists it), each file read once and hashed as it is read; raises Damaged
    when one does not match the manifest or cannot be read. `upgrade` (under the export's
    lock): a manifest that lists no BLAKE3 gets it, so the next load hashes at its speed."""
    files = listed(folder)
    if files is None or name not in files:
        raise Damaged(folder)
    names = [name] + ([f"{name}.data"] if f"{name}.data" in files else [])
    graph = Graph(folder / name, b"", {})
    added: dict[str, str] = {}
    try:
        for file in names:
            entry = files[file]
            hashers = _hashers(entry)
            try:
                buffer = read_hashed(folder / file, int(entry["size"]), hashers)
            except OSError:
                raise Damaged(folder) from None
            if buffer is None:
                raise Damaged(folder)
            graph.data[file] = buffer
            digests = {kind: hasher.hexdigest() for kind, hasher in hashers.items()}
            if any(entry.get(kind) != digest for kind, digest in digests.items() if kind in entry):
                raise Damaged(folder)
            if "blake3" in digests and "blake3" not in entry:
                added[file] = digests["blake3"]
    except Damaged:
        graph.release()
        raise
    if upgrade and added:
        _add_blake3(folder, added)
    model = graph.data.pop(name)
    graph.model = bytes(model)
    if isinstance(model, mmap.mmap):
        model.close()
    return graph


def _add_blake3(folder: Path, digests: dict[str, str]) -> None:
    """Add BLAKE3 digests, taken just now beside a matching sha256, to the manifest."""
    try:
        record = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
        for name, digest in digests.items():
            record["files"][name]["blake3"] = digest
        write_text_atomic(folder / MANIFEST, json.dumps(record, indent=1))
    except (OSError, ValueError, KeyError, TypeError):
        pass  # a read-only cache: sha256 again next time is the only cost


def write_manifest(folder: Path) -> None:
    """Hash every file the build wrote and list them in the manifest, written last."""
    files: dict[str, dict[str, object]] = {}
    fast = fast_hasher()
    for path in sorted(p for p in folder.iterdir() if p.is_file()):
        hashers = {"sha256": hashlib.sha256(), **({} if fast is None else {"blake3": fast()})}
        size = path.stat().st_size
        buffer = read_hashed(path, size, hashers)
        if buffer is None:
            raise OSError(errno.EIO, "the export changed while it was being listed", str(path))
        if isinstance(buffer, mmap.mmap):
            buffer.close()
        files[path.name] = {"size": size} | {k: h.hexdigest() for k, h in hashers.items()}
    record = {"format": FORMAT, "files": files}
    (folder / MANIFEST).write_text(json.dumps(record, indent=1), encoding="utf-8")


def listed(folder: Path) -> dict[str, Any] | None:
    """The manifest's files when it lists a whole export of this FORMAT (step.onnx, and in
    fp32 the vocoder's graph) and every listed file has its size; else None. The bytes are
    not read here."""
    try:
        record = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
        files: dict[str, Any] = record["files"]
        if record.get("format") != FORMAT or STEP_FILE not in files:
            return None
        if folder.name == "fp32" and VOCODER_FILE not in files:
            return None
        for name, entry in files.items():
            if (folder / name).stat().st_size != entry["size"]:
                return None
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
    return files


def verified(folder: Path) -> bool:
    """Whether `folder` holds a whole export: listed by its manifest, and every file's bytes
    read and matching their hashes."""
    files = listed(folder)
    if files is None:
        return False
    try:
        for name in files:
            if name.endswith(".onnx"):  # a graph, read with its external data
                read_graph(folder, name).release()
    except Damaged:
        return False
    return True
