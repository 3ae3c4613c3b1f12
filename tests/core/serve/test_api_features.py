"""The speech API's own features beyond OpenAI's basics, over raw HTTP and the
official OpenAI client, on 127.0.0.1 with demo weights: server-sent events, captions, the
instructions header, and every new field's range. (Sampling, refine, segment size and voice
blends: test_api_control.py.)"""

import base64
import io
import itertools
import json
from collections.abc import Iterator
from typing import Any

import httpx2 as httpx
import numpy as np
import openai
import pytest
import soundfile as sf

from chattts_studio.core.audio.subtitles import parse_subtitles
from chattts_studio.core.engine.batch.batcher import Batcher
from chattts_studio.core.engine.batch.tickets import SpeechOrder
from chattts_studio.core.engine.engine import Engine
from chattts_studio.core.serve.app import SpeechServer
from chattts_studio.core.serve.running import serving_on_loopback

PAUSE = 6000  # 0.25 s at 24 kHz between segments
TEXT = "你好。今天天气很好。"


class Api:
    def __init__(self, url: str, batcher: Batcher) -> None:
        self.url, self.batcher = url, batcher
        self.client = openai.OpenAI(base_url=f"{url}/v1", api_key="unused", max_retries=0)
        self.http = httpx.Client(timeout=120)

    def post(self, path: str = "/v1/audio/speech", **body: Any) -> httpx.Response:
        full = {"model": "chattts", "input": TEXT, "voice": "seed:7", "response_format": "pcm"}
        return self.http.post(f"{self.url}{path}", json={**full, **body})

    def audio(self, **body: Any) -> bytes:
        response = self.post(**body)
        assert response.status_code == 200, response.text
        return response.content


@pytest.fixture(scope="module")
def api(engine: Engine) -> Iterator[Api]:
    batcher = Batcher(engine, slots=8, max_waiting=16)
    server = SpeechServer(engine, batcher)
    with serving_on_loopback(server, batcher) as port:
        running = Api(f"http://127.0.0.1:{port}", batcher)
        yield running
        running.http.close()


def events(raw: bytes) -> list[dict[str, Any]]:
    """OpenAI's framing, checked: each event one `data: {json}` line and a blank line."""
    text = raw.decode("utf-8")
    assert text.endswith("\n\n")
    found = []
    for block in text.split("\n\n")[:-1]:
        assert block.startswith("data: ") and "\n" not in block, block[:80]
        found.append(json.loads(block[len("data: ") :]))
    return found


def joined(found: list[dict[str, Any]]) -> bytes:
    """The deltas' audio, once the events are checked: deltas, then one done with usage."""
    *deltas, done = found
    assert all(e["type"] == "speech.audio.delta" for e in deltas) and deltas
    assert done["type"] == "speech.audio.done"
    usage = done["usage"]
    assert usage["total_tokens"] == usage["input_tokens"] + usage["output_tokens"]
    assert usage["output_tokens"] > 0
    return b"".join(base64.b64decode(e["audio"]) for e in deltas)


# -- server-sent events -------------------------------------------------------------------
def test_sse_events_join_to_the_audio_of_the_same_request(api: Api) -> None:
    import av

    for fmt in ("pcm", "wav", "mp3", "opus", "flac"):
        plain = api.audio(response_format=fmt, seed=3)
        response = api.post(response_format=fmt, seed=3, stream_format="sse")
        assert response.headers["content-type"].startswith("text/event-stream"), fmt
        found = events(response.content)
        audio = joined(found)
        if fmt == "flac":
            assert len(found) == 2, "flac is sent whole: one delta"
        else:
            assert len(found) > 2, f"{fmt}: the audio came in one piece, not as it was made"
        if fmt in ("pcm", "wav"):
            assert audio == plain, fmt
        elif fmt == "mp3":
            # Decoded as the existing tests decode streamed MP3 (ffmpeg): the same samples.
            def decode(data: bytes) -> np.ndarray:
                container = av.open(io.BytesIO(data), mode="r")
                frames = [f.to_ndarray() for f in container.decode(audio=0)]
                return np.concatenate(frames, axis=1)[0]

            assert np.array_equal(decode(audio), decode(plain))
        else:
            assert np.array_equal(sf.read(io.BytesIO(audio))[0], sf.read(io.BytesIO(plain))[0])
    # The usage counts the input's characters and the decoder's steps.
    done = events(api.post(seed=3, stream_format="sse").content)[-1]
    assert done["usage"]["input_tokens"] == len(TEXT)


def test_sse_through_the_openai_client(api: Api) -> None:
    plain = api.audio(seed=5)
    with api.client.audio.speech.with_streaming_response.create(
        model="tts-1",
        input=TEXT,
        voice="seed:7",
        response_format="pcm",
        stream_format="sse",
        extra_body={"seed": 5},
    ) as response:
        assert response.headers["content-type"].startswith("text/event-stream")
        lines = [line for line in response.iter_lines() if line]
    found = [json.loads(line.removeprefix("data: ")) for line in lines]
    assert joined(found) == plain


# -- captions -------------------------------------------------------------------------------
def pause_runs(pcm: np.ndarray, shortest: int = PAUSE * 3 // 4) -> list[tuple[int, int]]:
    """[start, end) of each run of exact zeros at least `shortest` long: the silences the
    server put between segments (noise from random weights never holds one that long)."""
    zero = np.concatenate([[False], pcm == 0, [False]])
    edges = np.flatnonzero(np.diff(zero.astype(np.int8)))
    runs = list(zip(edges[::2].tolist(), edges[1::2].tolist(), strict=True))
    return [(a, b) for a, b in runs if b - a >= shortest]


def test_caption_times_are_the_silences_between_segments(api: Api) -> None:
    text = "你好。今天天气很好。我们去公园散步吧。明天见。"
    segments = api.batcher.segments_of(SpeechOrder(text, "", segment_size=10))
    assert len(segments) >= 3
    body = {"input": text, "seed": 9, "segment_size": 10, "captions": "json"}
    response = api.post(**body)
    assert response.headers["content-type"] == "application/json"
    answer = response.json()
    assert answer["response_format"] == "pcm" and answer["captions_format"] == "json"
    pcm = np.frombuffer(base64.b64decode(answer["audio"]), "<i2")
    assert pcm.tobytes() == api.audio(input=text, seed=9, segment_size=10)
    cues = answer["captions"]
    assert "".join(c["text"] for c in cues) == text
    # Where one segment's cues end and the next's begin, the audio holds its pause.
    gaps = [
        (round(a["end"] * 24_000), round(b["start"] * 24_000))
        for a, b in itertools.pairwise(cues)
        if b["start"] > a["end"]
    ]
    runs = pause_runs(pcm)
    assert len(gaps) == len(segments) - 1 == len(runs)
    for (end, start), (silent, sound) in zip(gaps, runs, strict=True):
        assert abs(end - silent) <= 12 and abs(start - sound) <= 12  # json rounds to 1 ms
        assert start - end == PAUSE
    assert cues[0]["start"] == 0 and abs(cues[-1]["end"] * 24_000 - len(pcm)) <= 12
    # SRT and WebVTT: the same cues, in their text.
    for kind in ("srt", "vtt"):
        other = api.post(**{**body, "captions": kind}).json()
        assert other["captions_format"] == kind and other["audio"] == answer["audio"]
        parsed = parse_subtitles(other["captions"])
        assert [(c.start, c.end, c.text) for c in parsed] == [
            (c["start"], c["end"], c["text"]) for c in cues
        ]
    assert other["captions"].startswith("WEBVTT")


def test_the_captioned_route_and_captions_with_events(api: Api) -> None:
    body = {"input": TEXT, "seed": 4, "response_format": "wav"}
    answer = api.post("/v1/audio/captioned_speech", **body).json()
    assert answer["captions_format"] == "json" and answer["captions"]
    wav = base64.b64decode(answer["audio"])
    assert wav == api.audio(**body)
    srt = api.post("/v1/audio/captioned_speech", **body, captions="srt").json()
    assert srt["captions"].startswith("1\n00:00:00,000 --> ")
    # With events: the audio's deltas, then one speech.captions event, then done.
    found = events(api.post(**body, captions="json", stream_format="sse").content)
    captions = found.pop(-2)
    assert captions == {"type": "speech.captions", "format": "json", "captions": answer["captions"]}
    assert joined(found) == wav


# -- instructions ---------------------------------------------------------------------------
def test_instructions_say_what_was_applied_and_what_ignored(api: Api) -> None:
    plain = api.audio(seed=2)
    slow = api.post(seed=2, instructions="Speak slowly, like a pirate.")
    assert slow.headers["x-instructions"] == (
        "applied speed=4; ignored: the rest (ChatTTS has no control for tone, emotion or accent)"
    )
    # Speed words are the speed field's [speed_N]: the same audio as speed 0.7.
    assert slow.content == api.audio(seed=2, speed=0.7) != plain
    # A speed the body sets wins.
    fast = api.post(seed=2, speed=0.7, instructions="very fast")
    assert fast.headers["x-instructions"] == "ignored: speed words (the speed field is set)"
    assert fast.content == slow.content
    moody = api.post(seed=2, instructions="Sound melancholic and whisper.")
    assert moody.headers["x-instructions"].startswith("ignored: the rest")
    assert moody.content == plain
    # Laughing without refine-text: a [laugh] before the text.
    laugh = api.post(seed=2, instructions="laughing")
    assert laugh.headers["x-instructions"] == "applied laugh=[laugh]"
    assert laugh.content == api.audio(seed=2, input=f"[laugh]{TEXT}")
    # Usage counts the input as sent, never the [laugh] the server put before it.
    for body in ({"stream_format": "sse"}, {"captions": "json"}):
        sent = api.post(seed=2, instructions="laughing", **body)
        found = events(sent.content)[-1] if "stream_format" in body else sent.json()
        assert found["usage"]["input_tokens"] == len(TEXT), body
    pauses = api.post(seed=2, instructions="with long pauses")
    assert pauses.headers["x-instructions"] == "ignored: pauses (they need refine_text: true)"
    assert "x-instructions" not in api.post(seed=2).headers
    # Through the OpenAI client (instructions is its own field).
    raw = api.client.audio.speech.with_raw_response.create(
        model="gpt-4o-mini-tts", input=TEXT, voice="seed:7", response_format="pcm",
        instructions="Speak slowly.", extra_body={"seed": 2},
    )  # fmt: skip
    assert raw.headers["x-instructions"] == "applied speed=4"
    assert raw.content == slow.content


# -- every field's range ------------------------------------------------------------------
BAD_VALUES: dict[str, list[Any]] = {
    "temperature": [0, 2.5, "hot", True],
    "top_p": [0, 1.5, "x", False],
    "top_k": [0, 101, 2.5, "10", True],
    "seed": [-1, 2**31, 1.5],
    "refine_text": ["yes", 1],
    "segment_size": [4, 501, 50.5],
    "stream_format": ["events", 3],
    "captions": ["ass", True],
    "instructions": [7, "x" * 4097],
}


def test_every_new_field_refuses_a_bad_value_naming_it(api: Api) -> None:
    for name, values in BAD_VALUES.items():
        for value in values:
            response = api.post(**{name: value})
            assert response.status_code == 400, (name, value, response.text)
            error = response.json()["error"]
            assert error["param"] == name and f"The {name} must" in error["message"], error
            assert error["message"].endswith(".") and error["message"].count(". ") == 0
    for name, high in (("oral", 9), ("laugh", 2), ("break", 7)):
        for value in (-1, high + 1, 1.5, "2"):
            error = api.post(refine_text=True, **{name: value}).json()["error"]
            assert error["param"] == name and f"The {name} must" in error["message"], error
        # A level alone changes nothing: refused, saying what it needs.
        error = api.post(**{name: 1}).json()["error"]
        assert error["param"] == name and "refine_text: true" in error["message"]
    with pytest.raises(openai.BadRequestError, match="The temperature must be a number"):
        api.client.audio.speech.create(
            model="chattts", input=TEXT, voice="seed:1", extra_body={"temperature": 5}
        )
    # null is each optional field's default.
    nulls = {name: None for name in BAD_VALUES if name != "instructions"}
    assert api.audio(seed=None, **{k: v for k, v in nulls.items() if k != "seed"})


def test_the_schema_names_every_field(api: Api) -> None:
    schema = api.http.get(f"{api.url}/openapi.json").json()
    for path in ("/v1/audio/speech", "/v1/audio/captioned_speech"):
        body = schema["paths"][path]["post"]["requestBody"]["content"]["application/json"]
        fields = set(body["schema"]["properties"])
        assert {
            "temperature", "top_p", "top_k", "seed", "refine_text", "oral", "laugh", "break",
            "segment_size", "stream_format", "captions", "instructions",
        } <= fields  # fmt: skip
    properties = body["schema"]["properties"]
    assert properties["top_k"]["minimum"] == 1 and properties["top_k"]["maximum"] == 100
    assert properties["stream_format"]["enum"] == ["audio", "sse", None]
