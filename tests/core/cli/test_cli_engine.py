"""--engine on synth, render and serve, and what devices and doctor say of the onnx engine:
the engine that ran is named, one that cannot run is one sentence and exit 2 before any
work. Demo weights are random: their audio is noise, compared by length only."""

import importlib.util
import json
from pathlib import Path

import pytest
import soundfile as sf
from conftest import run_cli

from chattts_studio.core.cli.main import main

MISSING = "ONNX Runtime is not installed (onnxruntime missing)"


@pytest.fixture
def no_onnxruntime(monkeypatch: pytest.MonkeyPatch) -> None:
    """This process as an installation without the onnx extra: onnxruntime is not found."""
    real = importlib.util.find_spec

    def find_spec(name: str, package: str | None = None) -> object:
        return None if name == "onnxruntime" else real(name, package)

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)


def _synth(capsys: pytest.CaptureFixture[str], out: Path, *extra: str) -> tuple[int, str]:
    code, _, stderr = run_cli(
        capsys,
        "synth",
        "你好，世界。",
        "-o",
        str(out),
        "--no-refine",
        "--device",
        "cpu",
        "--seed",
        "3",
        "--speaker",
        "42",
        *extra,
    )
    return code, stderr


def test_synth_with_either_engine_writes_the_same_length(
    private_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lengths = {}
    for engine in ("onnx", "torch"):
        out = tmp_path / f"{engine}.wav"
        code, stderr = _synth(capsys, out, "--engine", engine)
        assert code == 0, stderr
        assert f"fp32, {engine} engine, loaded in" in stderr  # the engine that ran, named
        audio, rate = sf.read(str(out))
        assert rate == 24000
        lengths[engine] = len(audio)
    # Random weights run every segment to its step cap, in either engine.
    assert lengths["onnx"] == lengths["torch"] > 24000
    # auto is onnx on the CPU here (onnxruntime is installed), int8 too.
    code, stderr = _synth(capsys, tmp_path / "auto.wav", "--precision", "int8")
    assert code == 0, stderr
    assert "int8, onnx engine" in stderr
    assert sf.info(str(tmp_path / "auto.wav")).frames == lengths["torch"]


def _one_sentence(code: int, stderr: str, message: str) -> None:
    assert code == 2
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and message in lines[0], stderr
    assert "Traceback" not in stderr and "model:" not in stderr  # refused before loading


@pytest.mark.usefixtures("no_onnxruntime")
def test_onnx_without_onnxruntime_is_one_sentence_everywhere(
    private_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "a.wav"
    code, stderr = _synth(capsys, out, "--engine", "onnx")
    _one_sentence(code, stderr, f"The onnx engine cannot be used: {MISSING}")
    assert "pip install 'chattts-studio[onnx]'" in stderr and not out.exists()
    book = tmp_path / "book.txt"
    book.write_text("第一章\n\n你好。\n", encoding="utf-8")
    code, _, stderr = run_cli(
        capsys, "render", str(book), "-o", str(tmp_path / "r"), "--engine", "onnx"
    )
    _one_sentence(code, stderr, MISSING)
    manifest = tmp_path / "items.jsonl"
    manifest.write_text(json.dumps({"id": "a", "text": "你好。", "speaker": "1"}) + "\n")
    code, _, stderr = run_cli(
        capsys, "render", str(manifest), "-o", str(tmp_path / "m"), "--engine", "onnx"
    )
    _one_sentence(code, stderr, MISSING)
    code, _, stderr = run_cli(capsys, "serve", "--port", "65000", "--engine", "onnx")
    _one_sentence(code, stderr, MISSING)
    # auto falls back to torch, and says so.
    code, stderr = _synth(capsys, out)
    assert code == 0, stderr
    assert "fp32, torch engine" in stderr and out.exists()
    code, stdout, _ = run_cli(capsys, "devices")
    assert code == 0 and f"engines: torch; onnx unavailable: {MISSING}" in stdout
    code, stdout, _ = run_cli(capsys, "doctor")
    assert code == 0 and f"engines: torch; onnx unavailable: {MISSING}" in stdout


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--precision", "bf16"], "the ONNX engine runs fp32 or int8, not bf16"),
        (["--decoder", "stock"], "--decoder stock runs in PyTorch"),
    ],
)
def test_onnx_where_it_cannot_run_is_one_sentence(
    private_home: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    extra: list[str],
    message: str,
) -> None:
    code, stderr = _synth(capsys, tmp_path / "a.wav", "--engine", "onnx", *extra)
    _one_sentence(code, stderr, message)


def test_devices_and_doctor_name_the_engines(capsys: pytest.CaptureFixture[str]) -> None:
    for command in ("devices", "doctor"):
        code, out, _ = run_cli(capsys, command)
        assert code == 0 and "engines: torch, onnx (fp32, int8)" in out  # the CPU's


def test_every_front_end_offers_the_engine_with_auto_first(
    capsys: pytest.CaptureFixture[str],
) -> None:
    for command in ("synth", "render", "serve"):
        with pytest.raises(SystemExit):
            main([command, "--help"])
        out = capsys.readouterr().out
        assert "--engine {auto,torch,onnx}" in out, command
        assert "ONNX Runtime" in out or "as synth" in out


def test_a_ray_worker_loads_the_engine_it_is_given(private_home: Path, demo_model: str) -> None:
    """The body of a Ray worker (render --ray), made here without Ray."""
    import torch

    from chattts_studio.core.render.manifest.run import ItemWorker, ManifestOptions

    threads = torch.get_num_threads()  # a worker sets its own; this process keeps its count
    try:
        for engine in ("torch", "onnx"):
            worker = ItemWorker(demo_model, "fp32", ManifestOptions(), 1, False, engine)
            loaded = worker.engine.loaded
            worker.renderer.close()  # its batcher's thread ends with it
            worker.engine.unload()
            assert loaded is not None and loaded.engine.value == engine
    finally:
        torch.set_num_threads(threads)
