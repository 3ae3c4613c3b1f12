"""The speech API over a model whose decode step ONNX Runtime runs: /health says which
engine runs, and a request decodes as the torch engine's does (demo weights: noise, so only
the length is compared)."""

from collections.abc import Iterator

import httpx2 as httpx
import pytest

from chattts_studio.core.engine.batch.batcher import Batcher
from chattts_studio.core.engine.engine import Engine
from chattts_studio.core.serve.app import SpeechServer
from chattts_studio.core.serve.running import ServeOptions, SpeechService, serving_on_loopback

BODY = {"model": "chattts", "input": "你好。", "voice": "seed:7", "response_format": "pcm"}


@pytest.fixture(scope="module")
def onnx_engine(demo_model: str) -> Iterator[Engine]:
    engine = Engine()
    loaded = engine.load(demo_model, "cpu", "fp32", engine="onnx")
    assert loaded.engine.value == "onnx"
    yield engine
    engine.unload()


def _serve(engine: Engine) -> tuple[dict[str, object], int]:
    """/health and the bytes of one speech response, from an API over `engine`."""
    batcher = Batcher(engine, slots=2, max_waiting=4)
    with serving_on_loopback(SpeechServer(engine, batcher), batcher) as port:
        url = f"http://127.0.0.1:{port}"
        health = httpx.get(f"{url}/health", timeout=10).json()
        speech = httpx.post(f"{url}/v1/audio/speech", json=BODY, timeout=120)
        assert speech.status_code == 200, speech.text
    return health, len(speech.content)


def test_health_names_the_engine_that_runs(onnx_engine: Engine, engine: Engine) -> None:
    health, onnx_bytes = _serve(onnx_engine)
    assert health["engine"] == "onnx" and health["device"] == "cpu"
    health, torch_bytes = _serve(engine)  # the session's model, loaded with torch
    assert health["engine"] == "torch"
    assert onnx_bytes == torch_bytes > 0


def test_the_service_serves_the_loaded_engine(onnx_engine: Engine) -> None:
    """SpeechService (the command line's and the window's) over an onnx model: port 0."""
    service = SpeechService(onnx_engine, ServeOptions(port=0))
    service.start()
    try:
        health = httpx.get(f"http://127.0.0.1:{service.port}/health", timeout=10).json()
    finally:
        service.close()
    assert health["engine"] == "onnx"
