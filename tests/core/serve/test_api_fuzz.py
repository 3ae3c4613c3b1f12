"""The speech API fuzzed from its own OpenAPI schema (Schemathesis): bodies that fit the
schema and bodies that break it, on the real demo model behind a real uvicorn. Whatever comes,
no 5xx, no traceback, and every error is JSON in OpenAI's shape.

Hypothesis drives Schemathesis's strategies directly: its pytest plugin's lazy schemas need a
pytest internal (`Function._nodeid`) that pytest 9 no longer has."""

import json
import os
from collections.abc import Iterator
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings

from chattts_studio.core.engine.batch.batcher import Batcher
from chattts_studio.core.engine.engine import Engine
from chattts_studio.core.serve.app import SpeechServer
from chattts_studio.core.serve.limits import ServeLimits
from chattts_studio.core.serve.running import serving_on_loopback

# Each body that fits the schema is spoken (~0.1 s on demo); one that breaks it is refused
# at once, so those get many more tries. The other routes take no input.
EXAMPLES = {"positive": 50, "negative": 300}
OTHERS = 10


@pytest.fixture(scope="module")
def api_schema(engine: Engine) -> Iterator[Any]:
    batcher = Batcher(engine, slots=4, max_waiting=16)
    # Short inputs: every body that fits the schema is spoken, and each one decodes.
    server = SpeechServer(engine, batcher, limits=ServeLimits(max_input_chars=12))
    with serving_on_loopback(server, batcher) as port:
        yield schemathesis.openapi.from_url(f"http://127.0.0.1:{port}/openapi.json")


def _check(case: Any) -> tuple[str, int]:
    """The answer to one generated request, checked: (path, status)."""
    response = case.call(timeout=120)
    text = response.content.decode("utf-8", "replace")
    said = f"{case.method} {case.path} {case.body!r:.200}: {text[:300]}"
    assert response.status_code < 500, said
    assert "Traceback" not in text and 'File "' not in text, said
    if response.status_code >= 300:
        error = json.loads(text)["error"]
        assert set(error) == {"message", "type", "param", "code"}, said
        assert isinstance(error["message"], str) and error["message"].endswith("."), said
    return case.path, int(response.status_code)


def _fuzz(cases: Any, examples: int, statuses: list[tuple[str, int]]) -> None:
    @settings(
        max_examples=examples,
        deadline=None,  # speech decodes; how fast is not what is tested here
        database=None,  # nothing written to the tree
        # CI draws the same examples every run (a suite that passes every time); a developer's
        # run draws new ones, so the fuzzer keeps looking.
        derandomize=bool(os.environ.get("CI")),
        suppress_health_check=list(HealthCheck),
    )
    @given(case=cases)
    def run(case: Any) -> None:
        statuses.append(_check(case))

    run()


@pytest.mark.parametrize("mode", list(schemathesis.GenerationMode), ids=lambda m: m.value)
def test_no_request_gets_a_5xx_a_traceback_or_an_error_in_another_shape(
    api_schema: Any, mode: schemathesis.GenerationMode
) -> None:
    operations = [result.ok() for result in api_schema.get_all_operations()]
    paths = {op.path for op in operations}
    assert {
        "/v1/audio/speech",
        "/v1/audio/captioned_speech",
        "/health",
        "/v1/models",
        "/v1/audio/voices",
    } <= paths
    speech = next(op for op in operations if op.path == "/v1/audio/speech")
    body = speech.body[0].definition["schema"]  # what the fuzzer builds bodies from
    # The per-request fields too, so the fuzzer tries their values and their mistakes.
    assert {
        "model", "input", "voice", "response_format", "speed", "seed", "temperature", "top_p",
        "top_k", "refine_text", "oral", "laugh", "break", "segment_size", "stream_format",
        "captions", "instructions",
    } <= set(body["properties"])  # fmt: skip
    statuses: list[tuple[str, int]] = []
    for operation in operations:
        if mode is schemathesis.GenerationMode.NEGATIVE and operation.path != speech.path:
            continue  # nothing in them to break

        examples = EXAMPLES[mode.value] if operation.path == speech.path else OTHERS
        _fuzz(operation.as_strategy(mode), examples, statuses)
    spoken = {status for path, status in statuses if path == speech.path}
    if mode is schemathesis.GenerationMode.POSITIVE:
        assert 200 in spoken, "no generated body was spoken"
    else:
        assert 200 not in spoken and 400 in spoken
