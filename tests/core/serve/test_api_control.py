"""Per-request control through the speech API, on 127.0.0.1 with demo weights:
sampling, refine-text and segment size in the body (OpenAI's client sends them through
extra_body), each response equal to its solo run while sharing the batch, and voice blends."""

import threading
from collections.abc import Iterator
from typing import Any

import httpx2 as httpx
import numpy as np
import openai
import pytest
from audio_fakes import add_clone

from chattts_studio.core.engine.batch.batcher import Batcher
from chattts_studio.core.engine.batch.tickets import SpeechOrder
from chattts_studio.core.engine.engine import Engine
from chattts_studio.core.serve.app import SpeechServer
from chattts_studio.core.serve.running import serving_on_loopback
from chattts_studio.core.voices.speakers import SpeakerLibrary

TEXT = "你好。今天天气很好。"


class Api:
    def __init__(self, url: str, batcher: Batcher, server: SpeechServer) -> None:
        self.url, self.batcher, self.server = url, batcher, server
        self.client = openai.OpenAI(base_url=f"{url}/v1", api_key="unused", max_retries=0)
        self.steps: list[list[int]] = []
        batcher.step_listeners.append(self.steps.append)

    def speech(self, text: str = TEXT, voice: str = "seed:7", **extra: Any) -> bytes:
        """pcm through the OpenAI client, our fields in extra_body."""
        return self.client.audio.speech.create(
            model="chattts", input=text, voice=voice, response_format="pcm", extra_body=extra
        ).content

    def error(self, **body: Any) -> dict[str, Any]:
        full = {"model": "chattts", "input": TEXT, "voice": "seed:7", **body}
        response = httpx.post(f"{self.url}/v1/audio/speech", json=full, timeout=60)
        assert response.status_code == 400, response.text
        return dict(response.json()["error"])


@pytest.fixture(scope="module")
def api(engine: Engine) -> Iterator[Api]:
    batcher = Batcher(engine, slots=8, max_waiting=16)
    server = SpeechServer(engine, batcher)
    with serving_on_loopback(server, batcher) as port:
        yield Api(f"http://127.0.0.1:{port}", batcher, server)


def at_once(api: Api, requests: list[dict[str, Any]]) -> dict[int, bytes]:
    """Every request sent at the same moment, each from its own thread."""
    results: dict[int, bytes] = {}
    barrier = threading.Barrier(len(requests))

    def one(i: int) -> None:
        barrier.wait()
        results[i] = api.speech(**requests[i])

    threads = [threading.Thread(target=one, args=(i,)) for i in range(len(requests))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(180)
    return results


# -- sampling, refine, segment size ---------------------------------------------------------
def test_per_request_sampling_changes_the_draw(api: Api) -> None:
    """Needs the batcher to sample each row with its request's Sampling (H1's side)."""
    plain = api.speech(seed=3)
    # The batcher's own values, sent: the same draw as sending none.
    assert api.speech(seed=3, temperature=0.3, top_p=0.7, top_k=20) == plain
    hot = api.speech(seed=3, temperature=1.2)
    # Sampling keeps 3 codes at least: top_k 1 and top_p 0.05 would both keep those 3.
    narrow = api.speech(seed=3, top_k=5)
    tight = api.speech(seed=3, top_p=0.05)
    assert len({plain, hot, narrow, tight}) == 4, "a sampling field did not reach the sampler"
    assert api.speech(seed=3, temperature=1.2) == hot  # and each is reproducible


def test_requests_with_different_sampling_share_steps_and_each_equals_its_solo_run(
    api: Api,
) -> None:
    """Needs per-row sampling inside the shared step (H1's side)."""
    requests = [
        dict(text="你好。今天天气很好。", voice="seed:1", seed=31),
        dict(text="我们去公园。明天见。", voice="seed:2", seed=32, temperature=1.0, top_k=5),
        dict(text="Hello there.", voice="seed:3", seed=33, top_p=0.3),
        dict(text="谢谢你。再见。", voice="seed:4", seed=34, temperature=0.6, top_p=0.9),
    ]
    start = len(api.steps)
    results = at_once(api, requests)
    assert sorted(results) == [0, 1, 2, 3]
    shared = max(len(set(ids)) for ids in api.steps[start:])
    assert shared >= 3, f"requests with different sampling did not share steps ({shared})"
    for i, request in enumerate(requests):
        assert results[i] == api.speech(**request), f"request {i} differs from its solo run"


def test_segment_size_sets_the_segments(api: Api) -> None:
    """Needs the batcher to split by the request's segment size (H1's side)."""
    text = "你好。今天天气很好。我们去公园散步吧。"
    small = api.batcher.segments_of(SpeechOrder(text, "", segment_size=5))
    large = api.batcher.segments_of(SpeechOrder(text, "", segment_size=500))
    assert len(small) > len(large)
    pcm = {n: np.frombuffer(api.speech(text, seed=1, segment_size=n), "<i2") for n in (5, 500)}
    # Each segment runs to its step cap on random weights; the pauses between them add up.
    assert pcm[5].size != pcm[500].size


def test_refine_text_runs_and_its_levels_reach_it(
    api: Api, engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Needs refine-text in the batcher (H1's side): on random weights its text is noise, so
    that it runs and is reproducible is asserted on the audio, and that the levels reach the
    text pass on its prompt (random weights barely heed a prompt: a lone short text's refined
    tokens can come out the same)."""
    off = api.speech(seed=6)
    on = api.speech(seed=6, refine_text=True)
    assert on and on == api.speech(seed=6, refine_text=True)
    assert on != off
    assert api.speech(seed=6, refine_text=True, oral=2, laugh=0, **{"break": 6}) == on
    model = engine.model
    assert model is not None
    prompts: list[str] = []
    stock = model.refine

    def refine(texts, settings, *args, **kwargs):  # type: ignore[no-untyped-def]
        prompts.append(settings.prompt)
        return stock(texts, settings, *args, **kwargs)

    monkeypatch.setattr(model, "refine", refine)
    api.speech(seed=6, refine_text=True, laugh=2, oral=9)
    assert prompts and set(prompts) == {"[oral_9][laugh_2][break_6]"}, prompts


# -- voice blends -----------------------------------------------------------------------------
def test_a_blend_of_a_voice_with_itself_is_that_voice(api: Api) -> None:
    alone = api.speech(voice="seed:7")  # its seed (7) is the sampling seed too
    assert api.speech(voice="seed:7*0.5+seed:7*0.5") == alone
    assert api.speech(voice="seed:7(1) + seed:7(3)") == alone
    assert api.speech(voice="alloy+alloy", seed=2) == api.speech(voice="alloy", seed=2)


def test_blend_weights_change_the_audio(api: Api, engine: Engine, private_home: object) -> None:
    mostly_7 = api.speech(voice="seed:7*0.8+seed:8*0.2", seed=1)
    mostly_8 = api.speech(voice="seed:7*0.2+seed:8*0.8", seed=1)
    assert len({mostly_7, mostly_8, api.speech(voice="seed:7", seed=1)}) == 3
    # Weights are normalised: 4:1 is 0.8:0.2.
    assert api.speech(voice="seed:7*4+seed:8*1", seed=1) == mostly_7
    # Any voice the API takes is a part: an embedding string, a library voice, an OpenAI name.
    embedding = engine.sample_speaker(7)
    assert api.speech(voice=f"{embedding}*0.8+seed:8*0.2", seed=1) == mostly_7
    SpeakerLibrary().add("Seven", embedding, seed=7)
    assert api.speech(voice="Seven*0.8 + seed:8*0.2", seed=1) == mostly_7
    assert api.speech(voice="alloy*0.5+nova*0.5", seed=1)
    # A library name with a '+' is that voice, not a blend.
    SpeakerLibrary().add("A+B", engine.sample_speaker(8), seed=8)
    assert api.speech(voice="A+B", seed=1) == api.speech(voice="seed:8", seed=1)


def test_a_damaged_library_embedding_is_refused_before_queueing(
    api: Api, engine: Engine, private_home: object
) -> None:
    """A library speaker whose embedding this model cannot read is a 400
    naming the voice, as a bad embedding string is, and nothing is queued for it."""
    SpeakerLibrary().add("Damaged", "豆" * 40, seed=3)
    before = api.batcher.stats.completed + api.batcher.stats.failed
    error = api.error(voice="Damaged")
    assert error["param"] == "voice" and "The voice 'Damaged' cannot be used" in error["message"]
    assert api.batcher.stats.completed + api.batcher.stats.failed == before
    # A sound library speaker still speaks.
    SpeakerLibrary().add("Sound", engine.sample_speaker(3), seed=3)
    assert api.speech(voice="Sound", seed=1) == api.speech(voice="seed:3", seed=1)


def test_a_bad_blend_is_one_sentence(api: Api, engine: Engine, private_home: object) -> None:
    add_clone(engine, "Clone")
    error = api.error(voice="Clone*0.5+seed:1*0.5")
    assert error["param"] == "voice" and "'Clone' is cloned from a recording" in error["message"]
    assert "Unknown voice 'nobody'" in api.error(voice="seed:1+nobody")["message"]
    assert "at most 8 parts" in api.error(voice="+".join(f"seed:{i}" for i in range(9)))["message"]
    assert "must be above 0" in api.error(voice="seed:1*0+seed:2")["message"]
    assert "empty part" in api.error(voice="seed:1++seed:2")["message"]
    # Eight parts, each as long as an embedding: still within the voice's length limit.
    parts = [engine.sample_speaker(i) for i in range(8)]
    assert api.speech(voice="+".join(f"{p}*1" for p in parts), seed=1)
    assert len(api.error(voice="x" * (api.server.max_voice + 1))["message"]) < 200
    # A long string that is no blend is refused before any decoding.
    assert "no voice of this model is longer" in api.error(voice="x" * 5000)["message"]
    voices = httpx.get(f"{api.url}/v1/audio/voices").json()["voices"]
    assert {"name": "alloy", "seed": 1000, "note": "OpenAI name"} in voices
