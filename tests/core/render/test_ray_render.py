"""A manifest rendered on Ray is the one rendered here, bit for bit (docs/rendering.md): the
workers run the engine, precision and thread count a render here runs with, all settled on
the driver (core/render/manifest/cluster.py). The Ray cases share one local Ray, started as
the command line starts it (core/cluster.py), and are marked `ray`."""

import ipaddress
import json
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from chattts_studio.core.cluster import local_processes
from chattts_studio.core.engine.engine import Engine
from chattts_studio.core.engine.engine_choice import EngineKind, onnx_missing
from chattts_studio.core.errors import StudioError
from chattts_studio.core.render.manifest.cluster import ClusterRender, workers_engine
from chattts_studio.core.render.manifest.item_store import OUTPUT, file_sha256
from chattts_studio.core.render.manifest.items import read_manifest
from chattts_studio.core.render.manifest.run import ManifestOptions
from chattts_studio.core.services.render_manifest import render_manifest

OPTIONS = ManifestOptions(format="flac")
ROWS = [
    {"id": "a", "text": "hello number one.", "speaker": "1", "seed": 5},
    {"id": "b", "text": "第1句话，你好。", "speaker": "2"},
    {"id": "c", "text": "hello number three, a longer one this time.", "speaker": "3"},
    {"id": "d", "text": "你好。今天天气很好。", "speaker": "4", "seed": 9},
]


def test_the_workers_engine_is_decided_on_the_driver_by_the_local_rule() -> None:
    """auto on CPU workers is what auto is here on the CPU (onnx where ONNX Runtime is
    installed); on GPU workers torch, and onnx is refused in one sentence."""
    assert onnx_missing() is None  # the dev install has it: auto means onnx on the CPU
    assert workers_engine(False, "fp32", "auto") is EngineKind.ONNX
    assert workers_engine(False, "fp32", "torch") is EngineKind.TORCH
    assert workers_engine(True, "fp16", "auto") is EngineKind.TORCH
    with pytest.raises(StudioError, match=r"^The onnx engine runs on the CPU; "):
        workers_engine(True, "fp32", "onnx")


@pytest.fixture(scope="module")
def ray_render(demo_model: str) -> Iterator[ClusterRender]:
    """ClusterRender with its defaults, on a local Ray it starts itself."""
    render = ClusterRender(demo_model)
    render.connect()
    try:
        yield render
    finally:
        render.close()


def _hashes(folder: Path) -> dict[str, str]:
    return {p.name: file_sha256(p) for p in sorted(folder.glob("*.flac"))}


@pytest.mark.ray
def test_a_ray_render_is_the_local_render_bit_for_bit(
    demo_model: str, ray_render: ClusterRender, tmp_path: Path
) -> None:
    """As the command line runs them: here with the front ends' engine choice (auto: onnx on
    this CPU) and this process's threads; on Ray with a torch model on the driver that only
    resolves the speakers, and workers as ClusterRender settles them."""
    manifest = tmp_path / "items.jsonl"
    manifest.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in ROWS), "utf-8")
    items = read_manifest(manifest)
    here = Engine()
    here.load(demo_model, "cpu", "fp32", engine="auto")
    assert here.loaded is not None and here.loaded.engine is EngineKind.ONNX
    try:
        local = render_manifest(here, items, manifest, tmp_path / "local", OPTIONS)
    finally:
        here.unload()
    driver = Engine()
    driver.load(demo_model, "cpu", "fp32")  # unloaded by the render once speakers resolve
    assert ray_render.engine is EngineKind.ONNX and ray_render.stats.actors >= 1
    on_ray = render_manifest(driver, items, manifest, tmp_path / "ray", OPTIONS, cluster=ray_render)
    assert (local.made, on_ray.made) == (len(ROWS), len(ROWS))
    assert _hashes(tmp_path / "ray") == _hashes(tmp_path / "local")
    assert len(_hashes(tmp_path / "local")) == len(ROWS)
    listed = [
        [json.loads(line)["sha256"] for line in (folder / OUTPUT).read_text("utf-8").splitlines()]
        for folder in (tmp_path / "local", tmp_path / "ray")
    ]
    assert listed[0] == listed[1]


@pytest.mark.ray
def test_a_local_ray_started_for_a_render_listens_on_loopback_only(
    ray_render: ClusterRender,
) -> None:
    processes = {p.pid: p.name() for p in local_processes()}
    assert {"gcs_server", "raylet"} <= set(processes.values())
    sockets = sorted(
        (c.laddr.ip, c.laddr.port, processes[c.pid])
        for c in psutil.net_connections("tcp")
        if c.status == psutil.CONN_LISTEN and c.pid in processes
    )
    assert len(sockets) >= 6, sockets  # GCS, raylet, agents, metrics, the workers
    assert [s for s in sockets if not _loopback(s[0])] == [], sockets


def _loopback(address: str) -> bool:
    ip = ipaddress.ip_address(address)
    mapped = getattr(ip, "ipv4_mapped", None)
    return bool((mapped or ip).is_loopback)
