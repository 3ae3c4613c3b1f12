"""Word timestamps in the speech API's captioned answers (Kokoro-FastAPI's `timestamps`, plus
`estimated`): on espeak-ng speech whose word times are known, each segment's words land where
they are said in the joined audio; over HTTP on 127.0.0.1 with demo weights (noise), every word
comes, in order, inside the audio, and what the aligner refused says it is estimated."""

import base64
import itertools
from collections.abc import Iterator
from typing import Any

import httpx2 as httpx
import numpy as np
import pytest

from chattts_studio.core import SAMPLE_RATE
from chattts_studio.core.align.words import text_words
from chattts_studio.core.devtools.alignacc import joined
from chattts_studio.core.engine.batch.batcher import Batcher
from chattts_studio.core.engine.engine import Engine
from chattts_studio.core.serve.app import SpeechServer
from chattts_studio.core.serve.captions import word_timestamps
from chattts_studio.core.serve.running import serving_on_loopback
from chattts_studio.core.text.prepare import segment

TEXTS = ("The weather is very nice today.", "We will go to the park together.")
KEYS = {"word", "start_time", "end_time", "estimated"}


def test_each_segments_words_land_where_they_are_said() -> None:
    rng = np.random.default_rng(5)
    truths = [joined("en-us+f2", text, rng) for text in TEXTS]
    segments = [segment(i, text) for i, text in enumerate(TEXTS)]
    pause = 6000
    spans, pieces, at = [], {}, 0
    for i, truth in enumerate(truths):
        spans.append((i, at, at + len(truth.audio)))
        half = len(truth.audio) // 2  # chunks, as the batcher delivers them
        pieces[i] = [truth.audio[:half], truth.audio[half:]]
        at += len(truth.audio) + pause
    got = word_timestamps(segments, spans, pieces)
    assert all(set(w) == KEYS for w in got)
    expected = [
        (word, start + first / SAMPLE_RATE)
        for truth, (_i, first, _end) in zip(truths, spans, strict=True)
        for word, start in zip(truth.words, truth.starts, strict=True)
    ]
    assert [w["word"] for w in got] == [word for word, _ in expected]
    errors = [abs(w["start_time"] - s) for w, (_, s) in zip(got, expected, strict=True)]
    assert np.median(errors) <= 0.04 and max(errors) <= 0.25, errors
    assert sum(w["estimated"] for w in got) <= 1
    # Noise in place of the second segment: its words are estimated inside its span.
    noise = np.random.default_rng(2).normal(0, 0.1, len(truths[1].audio)).astype(np.float32)
    mixed = word_timestamps(segments, spans, {0: pieces[0], 1: [noise]})
    second = mixed[len(truths[0].words) :]
    assert second and all(w["estimated"] for w in second)
    first, end = spans[1][1] / SAMPLE_RATE, spans[1][2] / SAMPLE_RATE
    inside = [first - 1e-3 <= w["start_time"] < w["end_time"] <= end + 1e-3 for w in second]
    assert all(inside), (first, end, second)  # times are rounded to the millisecond


@pytest.fixture(scope="module")
def url(engine: Engine) -> Iterator[str]:
    batcher = Batcher(engine, slots=4, max_waiting=8)
    server = SpeechServer(engine, batcher)
    with serving_on_loopback(server, batcher) as port:
        yield f"http://127.0.0.1:{port}"


def post(url: str, path: str, **body: Any) -> dict[str, Any]:
    full = {"model": "chattts", "voice": "seed:7", "response_format": "pcm", **body}
    with httpx.Client(timeout=120) as client:
        response = client.post(f"{url}{path}", json=full)
    assert response.status_code == 200, response.text
    return dict(response.json())


def test_captioned_speech_answers_word_timestamps_beside_its_captions(url: str) -> None:
    text = " ".join(TEXTS)
    answer = post(url, "/v1/audio/captioned_speech", input=text, seed=3, segment_size=40)
    seconds = len(base64.b64decode(answer["audio"])) / 2 / SAMPLE_RATE
    words = answer["timestamps"]
    assert all(set(w) == KEYS for w in words)
    assert [w["word"] for w in words] == text_words(text)
    assert all(0 <= w["start_time"] < w["end_time"] <= seconds + 1e-3 for w in words)
    assert all(a["end_time"] <= b["start_time"] + 1e-3 for a, b in itertools.pairwise(words))
    # The demo weights make noise: the aligner refuses it, so the times are estimates.
    assert any(w["estimated"] for w in words)
    assert "".join(c["text"] for c in answer["captions"]).replace(" ", "") == text.replace(" ", "")
    # The speech route with captions asked answers them too, SRT captions kept as they were.
    srt = post(url, "/v1/audio/speech", input=text, seed=3, segment_size=40, captions="srt")
    assert srt["captions"].startswith("1\n00:00:00,000 --> ")
    assert srt["timestamps"] == words and srt["audio"] == answer["audio"]
