"""The speech API through the official OpenAI client, on 127.0.0.1, with demo weights."""

import argparse
import io
import json
import logging
import struct
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass

import httpx2 as httpx
import numpy as np
import openai
import pytest
import soundfile as sf
from audio_fakes import add_clone

from chattts_studio.core import SAMPLES_PER_STEP
from chattts_studio.core.cli import serve as serve_command
from chattts_studio.core.engine.batch.batcher import Batcher
from chattts_studio.core.engine.batch.tickets import Finished, SpeechOrder, collect
from chattts_studio.core.engine.decode.loop import FastDecoder
from chattts_studio.core.engine.engine import Engine
from chattts_studio.core.engine.request import AudioChunk, SynthesisRequest
from chattts_studio.core.errors import StudioError
from chattts_studio.core.serve.access import is_loopback
from chattts_studio.core.serve.app import SpeechServer
from chattts_studio.core.serve.audio import pcm16
from chattts_studio.core.serve.limits import ServeLimits, body_limit
from chattts_studio.core.serve.running import serving_on_loopback
from chattts_studio.core.voices.speaker_codec import speaker_string_limit
from chattts_studio.core.voices.speakers import SpeakerLibrary

PAUSE = 6000  # 0.25 s at 24 kHz between segments


@dataclass
class Running:
    url: str
    server: SpeechServer
    batcher: Batcher
    client: openai.OpenAI
    steps: list[list[int]]  # the request ids of the busy rows, per decode step


@pytest.fixture(scope="module")
def api(engine: Engine) -> Iterator[Running]:
    batcher = Batcher(engine, slots=8, max_waiting=16)
    server = SpeechServer(engine, batcher, limits=ServeLimits(max_input_chars=300))
    steps: list[list[int]] = []
    batcher.step_listeners.append(steps.append)
    with serving_on_loopback(server, batcher) as port:
        url = f"http://127.0.0.1:{port}"
        client = openai.OpenAI(base_url=f"{url}/v1", api_key="unused", max_retries=0)
        yield Running(url, server, batcher, client, steps)


def _samples(batcher: Batcher, text: str) -> int:
    """What a response of `text` holds at most: random weights run every segment to its cap
    (512 samples a step), segments joined with a pause."""
    segments = batcher.segments_of(SpeechOrder(text, ""))
    return sum(s.step_cap for s in segments) * SAMPLES_PER_STEP + (len(segments) - 1) * PAUSE


def _fits(samples: int, batcher: Batcher, text: str) -> bool:
    """The vocoder's last frame is half a step short (as the engine's own results)."""
    count = len(batcher.segments_of(SpeechOrder(text, "")))
    return _samples(batcher, text) - 256 * count <= samples <= _samples(batcher, text)


def _speech(api: Running, text: str, fmt: str = "pcm", **extra: object) -> bytes:
    voice = str(extra.pop("voice", "seed:7"))
    response = api.client.audio.speech.create(
        model="chattts",
        input=text,
        voice=voice,
        response_format=fmt,  # type: ignore[arg-type]
        extra_body=extra or None,
    )
    return response.content


def test_every_format_decodes_to_the_length_of_its_steps(api: Running) -> None:
    import av

    text = "你好。今天天气很好。"
    pcm = np.frombuffer(_speech(api, text, "pcm"), "<i2")
    assert _fits(len(pcm), api.batcher, text) and np.abs(pcm).max() > 0
    wav = _speech(api, text, "wav")
    # Streamed WAV: sizes "unknown" (0xFFFFFFFF, as OpenAI sends them); the samples are pcm's.
    assert wav[:4] == b"RIFF" and struct.unpack("<I", wav[4:8])[0] == 0xFFFFFFFF
    assert wav[36:40] == b"data" and struct.unpack("<I", wav[40:44])[0] == 0xFFFFFFFF
    assert np.array_equal(np.frombuffer(wav[44:], "<i2"), pcm)
    for fmt in ("flac", "opus"):
        audio, rate = sf.read(io.BytesIO(_speech(api, text, fmt)))
        assert rate == 24_000 and len(audio) == len(pcm), fmt
    flac, _ = sf.read(io.BytesIO(_speech(api, text, "flac")), dtype="int16")
    # Lossless: pcm's samples, up to libsndfile's float-to-16-bit scaling (32768, not 32767).
    assert np.abs(flac.astype(np.int32) - pcm).max() <= 1
    # MP3 streams without LAME's info frame (it is only known at the end): ffmpeg reads it all,
    # plus the encoder's delay and padding (under two 576-sample frames each side).
    container = av.open(io.BytesIO(_speech(api, text, "mp3")), mode="r")
    decoded = sum(frame.samples for frame in container.decode(audio=0))
    assert len(pcm) <= decoded <= len(pcm) + 4 * 576


def test_audio_streams_before_the_request_is_done(api: Running) -> None:
    """The first bytes arrive while the request's later segments are still decoding."""
    text = "你好。今天天气很好。我们去公园。"
    completed = api.batcher.stats.completed
    reads: list[tuple[int, bool]] = []
    with api.client.audio.speech.with_streaming_response.create(
        model="tts-1", input=text, voice="alloy", response_format="wav"
    ) as response:
        assert response.headers["content-type"] == "audio/wav"
        for part in response.iter_bytes():
            reads.append((len(part), api.batcher.stats.completed > completed))
    assert not reads[0][1], "the first bytes came only after the request was finished"
    assert len(reads) > 2
    assert _fits((sum(n for n, _ in reads) - 44) // 2, api.batcher, text)


def _speak_at_once(api: Running, requests: list[dict[str, object]]) -> dict[int, bytes]:
    """Every request sent at the same moment, each from its own thread: index -> its audio."""
    results: dict[int, bytes] = {}
    barrier = threading.Barrier(len(requests))

    def one(i: int) -> None:
        barrier.wait()
        r = requests[i]
        results[i] = _speech(api, str(r["text"]), voice=r["voice"], seed=r["seed"])

    threads = [threading.Thread(target=one, args=(i,)) for i in range(len(requests))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    return results


def test_concurrent_requests_share_steps_and_each_equals_its_solo_run(api: Running) -> None:
    texts = ["你好。", "今天天气很好。", "Hello there.", "我们去公园。", "再见。", "Good day.",
             "明天见。", "谢谢你。"]  # fmt: skip
    requests = [dict(text=t, voice=f"seed:{i + 1}", seed=100 + i) for i, t in enumerate(texts)]
    start = len(api.steps)
    results = _speak_at_once(api, requests)
    assert sorted(results) == list(range(len(requests)))
    shared = [len(set(ids)) for ids in api.steps[start:]]
    assert max(shared) >= 4, f"requests rarely decoded side by side: {max(shared)} at most"
    for i, r in enumerate(requests):
        alone = _speech(api, str(r["text"]), voice=r["voice"], seed=r["seed"])
        assert _fits(len(alone) // 2, api.batcher, str(r["text"]))
        assert results[i] == alone, f"request {i} differs from its solo run"
    # A different seed is a different draw (the seed reaches the sampler).
    r = requests[0]
    assert _speech(api, str(r["text"]), voice=r["voice"], seed=1) != results[0]


def test_requests_without_a_seed_share_one_product_and_seeded_ones_stay_exact(
    api: Running, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The API's equality promise: five requests without `seed` and three with
    one, at once. The seedless ones run as one product (the batch's throughput on the CPU),
    at full length; each seeded one is still its solo run, bit for bit; and a seedless
    request alone is computed as the same request with its seed named."""
    products: list[int] = []
    real = FastDecoder._shared_step

    def spy(decoder: FastDecoder, slots: list[int], *rest: object) -> None:
        products.append(len(slots))
        real(decoder, slots, *rest)  # type: ignore[arg-type]

    # On the class: each decode run takes its decoder from the engine's pool.
    monkeypatch.setattr(FastDecoder, "_shared_step", spy)
    texts = ["你好。", "今天天气很好。", "Hello there.", "我们去公园。", "再见。", "Good day.",
             "明天见。", "谢谢你。"]  # fmt: skip
    requests: list[dict[str, object]] = [
        dict(text=t, voice=f"seed:{i + 1}", seed=None if i < 5 else 200 + i)
        for i, t in enumerate(texts)
    ]
    results = _speak_at_once(api, requests)
    assert sorted(results) == list(range(len(requests)))
    assert max(products) >= 3, products  # several seedless rows in one product
    for i, r in enumerate(requests):
        assert _fits(len(results[i]) // 2, api.batcher, str(r["text"]))
        if r["seed"] is not None:
            alone = _speech(api, str(r["text"]), voice=r["voice"], seed=r["seed"])
            assert results[i] == alone, f"seeded request {i} differs from its solo run"
    products.clear()
    lone = _speech(api, "你好。", voice="seed:1")  # no seed: the voice's, 1
    assert products and max(products) == 1
    assert lone == _speech(api, "你好。", voice="seed:1", seed=1)


def test_a_client_that_goes_away_frees_its_rows(api: Running) -> None:
    text = "。".join(["今天天气很好我们去公园散步"] * 12)  # 12 long segments
    cancelled = api.batcher.stats.cancelled
    start = len(api.steps)
    with httpx.Client(timeout=60) as http:
        body = {"model": "chattts", "input": text, "voice": "seed:3", "response_format": "pcm"}
        with http.stream("POST", f"{api.url}/v1/audio/speech", json=body) as response:
            assert response.status_code == 200
            next(response.iter_raw())  # the first audio, then hang up
    deadline = time.monotonic() + 30
    while api.batcher.stats.cancelled == cancelled and time.monotonic() < deadline:
        time.sleep(0.05)
    assert api.batcher.stats.cancelled == cancelled + 1
    ids = {i for step in api.steps[start:] for i in step}
    assert len(ids) == 1
    assert all(job is None for job in api.batcher.decoder.active), "its jobs are still decoding"
    decoded = sum(len(step) for step in api.steps[start:])
    assert decoded < 12 * 100, "it decoded the whole text after the client left"


def _error(response: httpx.Response, status: int) -> str:
    assert response.status_code == status, response.text
    assert "Traceback" not in response.text
    error = response.json()["error"]
    assert set(error) == {"message", "type", "param", "code"}
    return str(error["message"])


def test_bad_requests_get_one_sentence_in_openais_error_shape(api: Running) -> None:
    url = f"{api.url}/v1/audio/speech"
    good = {"model": "chattts", "input": "你好。", "voice": "seed:1", "response_format": "wav"}
    with httpx.Client(timeout=30) as http:
        as_json = {"content-type": "application/json"}
        assert "not valid JSON" in _error(http.post(url, content=b"{nope", headers=as_json), 400)
        assert "JSON object" in _error(http.post(url, json=[1, 2]), 400)
        cases = {
            "Unknown voice": {**good, "voice": "nobody"},
            "non-empty string": {**good, "input": "  "},
            "response_format must be one of": {**good, "response_format": "aac"},
            "speed must be": {**good, "speed": 9},
            "seed must be": {**good, "seed": -1},
            "nothing ChatTTS can speak": {**good, "input": "……"},
        }
        for sentence, body in cases.items():
            assert sentence in _error(http.post(url, json=body), 400), sentence
        assert "model must be" in _error(http.post(url, json={**good, "model": "x"}), 404)
        too_long = _error(http.post(url, json={**good, "input": "你" * 301}), 413)
        assert "limit is 300" in too_long
        huge = json.dumps({**good, "padding": "x" * api.server.max_body}).encode()
        assert "larger than" in _error(http.post(url, content=huge, headers=as_json), 413)
        # The limit follows the fields' own: the longest input, instructions and an
        # 8-part blend of the longest voices, every character escaped, are read, never a 413
        # (a fixed 64 KiB refused them); here a bad temperature is what answers.
        longest = {
            **good,
            "input": "你" * api.server.limits.max_input_chars,
            "instructions": "慢" * 4096,
            "voice": "+".join(["豆" * api.server.max_part] * 8)[: api.server.max_voice],
            "temperature": 99,
        }
        body = json.dumps(longest).encode()  # ensure_ascii: six bytes a character
        assert "temperature" in _error(http.post(url, content=body, headers=as_json), 400)
    # At the defaults, with the official model's 768-wide embeddings, the documented case.
    part = speaker_string_limit(768)
    documented = {**good, "input": "你" * 4096, "voice": "+".join(["豆" * part] * 8)}
    size = len(json.dumps(documented).encode())
    assert 64 * 1024 < size <= body_limit(4096, 8 * (part + 32))
    with pytest.raises(openai.BadRequestError, match="Unknown voice"):
        _speech(api, "你好。", voice="nobody")


def test_a_full_queue_is_429_and_a_key_is_401(
    api: Running, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(api.batcher, "max_waiting", 0)
    with pytest.raises(openai.RateLimitError, match="waiting already"):
        _speech(api, "你好。")
    monkeypatch.undo()
    monkeypatch.setattr(api.server, "api_key", "s3cret")
    with pytest.raises(openai.AuthenticationError, match="API key"):
        api.client.models.list()
    keyed = openai.OpenAI(base_url=f"{api.url}/v1", api_key="s3cret", max_retries=0)
    assert "tts-1" in [m.id for m in keyed.models.list()]
    assert httpx.get(f"{api.url}/health").json()["status"] == "ok"  # open for probes


def test_health_models_voices_and_metrics(api: Running) -> None:
    health = httpx.get(f"{api.url}/health").json()
    assert health["status"] == "ok" and health["model"] == "demo" and health["device"] == "cpu"
    assert health["engine"] == "torch"  # the resolved engine: the session's model is torch's
    assert {"chattts", "tts-1"} <= {m.id for m in api.client.models.list()}
    voices = httpx.get(f"{api.url}/v1/audio/voices").json()["voices"]
    assert {"name": "alloy", "seed": 1000, "note": "OpenAI name"} in voices
    _speech(api, "你好。")
    metrics = httpx.get(f"{api.url}/metrics").text
    lines = dict(line.rsplit(" ", 1) for line in metrics.splitlines() if not line.startswith("#"))
    assert float(lines["chattts_speech_requests_total"]) >= 1
    assert float(lines['chattts_http_requests_total{path="/v1/audio/speech",status="200"}']) >= 1
    assert float(lines["chattts_audio_seconds_total"]) > 0
    assert float(lines["chattts_rtf"]) > 0 and float(lines["chattts_memory_bytes"]) > 1e8
    assert lines["chattts_queue_length"] == "0"


def test_no_listening_beyond_this_machine_without_a_key(monkeypatch: pytest.MonkeyPatch) -> None:
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("192.168.1.20")
    loaded: list[str] = []
    monkeypatch.setattr("chattts_studio.core.cli.common.load_engine", lambda *a: loaded.append("x"))
    parser = argparse.ArgumentParser()
    serve_command.add_parser(parser.add_subparsers())
    args = parser.parse_args(["serve", "--host", "0.0.0.0"])
    with pytest.raises(StudioError, match="without --api-key"):
        serve_command.run(args)
    assert not loaded, "the model was loaded before the refusal"
    args = parser.parse_args(["serve", "--chunk-rows", "0"])
    with pytest.raises(StudioError, match="--chunk-rows must be 1-64"):
        serve_command.run(args)
    assert not loaded, "the model was loaded before the refusal"
    # int8 ties the rows of a product together: only one row per product.
    args = parser.parse_args(["serve", "--precision", "int8", "--chunk-rows", "4"])
    with pytest.raises(StudioError, match="cannot be used with int8"):
        serve_command.run(args)
    assert not loaded, "the model was loaded before the refusal"


# -- cloned voices ------------------------------------------------------------------------
def _direct(batcher: Batcher, order: SpeechOrder) -> bytes:
    """The order made by the batcher alone, with no server between, as pcm's bytes: the
    segments joined with the server's pause."""
    done, got = collect(batcher, order)
    assert done.wait(120) and isinstance(got[-1], Finished), got[-1]
    parts: list[np.ndarray] = []
    last = -1
    for chunk in got:
        if isinstance(chunk, AudioChunk):
            if last >= 0 and chunk.index != last:
                parts.append(np.zeros(PAUSE, np.float32))
            last = chunk.index
            parts.append(chunk.audio)
    return pcm16(np.concatenate(parts))


def test_a_cloned_library_voice_reads_as_synth_reads_it(
    api: Running, engine: Engine, private_home: object
) -> None:
    voice = add_clone(engine, "Clone")
    text = "你好。今天天气很好。"
    pcm = _speech(api, text, voice="Clone", seed=11)
    samples = np.frombuffer(pcm, "<i2")
    assert _fits(len(samples), api.batcher, text) and np.abs(samples).max() > 0
    flac, rate = sf.read(io.BytesIO(_speech(api, text, "flac", voice="Clone", seed=11)))
    assert rate == 24_000 and len(flac) == len(samples)
    # The voice synth's plan reads for this library entry (checked, transcript normalised),
    # through the batcher alone: the same samples.
    entry = SpeakerLibrary().get("Clone")
    assert entry is not None and entry.voice == voice
    plan = engine.plan(SynthesisRequest(text=text, voice=entry.voice, refine_text=False, seed=11))
    assert plan.voice is not None and plan.voice.transcript != voice.transcript
    assert pcm == _direct(api.batcher, SpeechOrder(text, plan.voice, 11))
    # The transcript as stored (not read as synth reads it) is another prompt, other audio.
    assert pcm != _direct(api.batcher, SpeechOrder(text, voice, 11))
    assert "Clone" in [v["name"] for v in httpx.get(f"{api.url}/v1/audio/voices").json()["voices"]]
    # A sample this model cannot read is still one sentence, naming the voice.
    SpeakerLibrary().add("Broken", "", sample="x" * 40, transcript="你好。")
    with pytest.raises(openai.BadRequestError, match="The voice 'Broken' cannot be used"):
        _speech(api, text, voice="Broken")


def test_a_cloned_and_an_embedding_voice_share_steps_and_each_equals_its_solo_run(
    api: Running, engine: Engine, private_home: object
) -> None:
    add_clone(engine, "Clone", seed=4)
    requests = [
        dict(text="你好。今天天气很好。", voice="Clone", seed=21),
        dict(text="我们去公园。明天见。", voice="seed:5", seed=22),
    ]
    start = len(api.steps)
    results = _speak_at_once(api, requests)
    assert sorted(results) == [0, 1]
    shared = sum(1 for ids in api.steps[start:] if len(set(ids)) == 2)
    assert shared >= 10, f"the two requests shared only {shared} steps"
    for i, r in enumerate(requests):
        alone = _speech(api, str(r["text"]), voice=r["voice"], seed=r["seed"])
        assert _fits(len(alone) // 2, api.batcher, str(r["text"]))
        assert results[i] == alone, f"request {i} differs from its solo run"


def test_a_bug_in_a_route_is_one_line_in_the_log_and_one_sentence_to_the_client(
    api: Running, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """An unexpected exception is answered with one sentence and logged
    as one line; no traceback reaches the log (Starlette's outermost middleware printed one)."""

    def broken(_voice: str) -> None:
        raise RuntimeError("a bug in the voices")

    monkeypatch.setattr(api.server, "voice", broken)
    url = f"{api.url}/v1/audio/speech"
    body = {"model": "chattts", "input": "你好。", "voice": "seed:1"}
    # uvicorn's loggers do not propagate to the root: listen on them too.
    loggers = [logging.getLogger(name) for name in ("uvicorn", "uvicorn.error")]
    for logger in loggers:
        logger.addHandler(caplog.handler)
    try:
        with caplog.at_level(logging.INFO):
            message = _error(httpx.post(url, json=body, timeout=30), 500)
    finally:
        for logger in loggers:
            logger.removeHandler(caplog.handler)
    assert message == "The server failed to make this request's audio."
    assert not [r for r in caplog.records if r.exc_info or "Traceback" in r.getMessage()]
    assert any("a bug in the voices" in r.getMessage() for r in caplog.records)
