"""The synthesize, audition, keep-a-voice and serve services as the CLI and the window's worker
call them: what a synthesis finished stays readable after a cancel, a file gets every segment
with its pauses, an audition's speakers are its seeds', a taken name is refused before any
work, and the speech API listens on a thread and stops with nothing left running."""

import socket
import threading
from pathlib import Path

import httpx2 as httpx
import pytest
import soundfile as sf

from chattts_studio.core.audio.subtitles import parse_subtitles
from chattts_studio.core.engine.cancel import CancelToken
from chattts_studio.core.engine.engine import Engine
from chattts_studio.core.engine.request import SegmentResult, SynthesisRequest
from chattts_studio.core.errors import Cancelled
from chattts_studio.core.serve.running import CannotListen, ServeOptions, SpeechService
from chattts_studio.core.services.audition import audition_seeds
from chattts_studio.core.services.keep_voice import VoiceSource, keep_new_voice
from chattts_studio.core.services.synthesize import (
    SynthesisRun,
    plan_synthesis,
    synthesize_to_file,
)
from chattts_studio.core.voices.speaker_file import SpeakerNameTaken
from chattts_studio.core.voices.speakers import SpeakerLibrary

TEXT = "你好。今天天气很好。我们走吧。"
REQUEST = SynthesisRequest(TEXT, seed=2, refine_text=False, segment_size=6, batch_size=1)


def test_a_run_hands_each_segment_over_and_keeps_only_its_figures(engine: Engine) -> None:
    plan = plan_synthesis(engine, REQUEST)
    count = len(plan.segments)
    assert count >= 3
    heard: list[SegmentResult] = []
    run = SynthesisRun(engine, plan)
    summary = run.run(on_segment=heard.append)
    assert [r.index for r in heard] == list(range(count)) and all(len(r.audio) for r in heard)
    assert [len(r.audio) for r in run.results] == [0] * count  # no audio held by the run
    assert [r.steps for r in run.results] == [r.steps for r in heard]
    assert summary is run.summary and summary is not None and summary.segments == count


def test_a_cancelled_run_keeps_what_it_finished(engine: Engine) -> None:
    token = CancelToken()
    run = SynthesisRun(engine, plan_synthesis(engine, REQUEST))
    with pytest.raises(Cancelled):
        run.run(token, lambda _result: token.cancel())
    assert len(run.results) == 1
    assert run.summary is not None and run.summary.segments == 1


def test_a_dialogue_script_is_planned_with_each_line_s_voice(engine: Engine) -> None:
    from chattts_studio.core.voices.voice import Voice

    voices = {"Ann": Voice(engine.sample_speaker(1)), "Bo": Voice(engine.sample_speaker(2))}
    script = SynthesisRequest("Ann: 你好。\nBo: 再见。", refine_text=False)
    plan = plan_synthesis(engine, script, voices)
    assert [plan.name_at(i) for i in range(len(plan.segments))] == ["Ann", "Bo"]


def test_a_file_gets_every_segment_with_its_pauses_and_subtitles(
    engine: Engine, tmp_path: Path
) -> None:
    plan = plan_synthesis(engine, REQUEST)
    heard: list[SegmentResult] = []
    written = synthesize_to_file(
        engine,
        plan,
        tmp_path / "out.wav",
        tags={"comment": "test"},
        subtitles=tmp_path / "out.srt",
        on_segment=heard.append,
    )
    audio, rate = sf.read(str(tmp_path / "out.wav"), dtype="float32")
    pauses = sum(round(plan.pause_before(r.index) * rate) for r in heard)
    assert written.frames == len(audio) == sum(len(r.audio) for r in heard) + pauses
    assert written.seconds == pytest.approx(len(audio) / rate)
    cues = parse_subtitles((tmp_path / "out.srt").read_text(encoding="utf-8"))
    assert len(cues) == len(plan.segments)
    assert cues[-1].end == pytest.approx(len(audio) / rate, abs=0.02)


def test_an_audition_s_speakers_are_its_seeds(engine: Engine) -> None:
    heard = audition_seeds(engine, SynthesisRequest("你好。", refine_text=False), 2, seeds=[4, 9])
    assert [a.seed for a in heard] == [4, 9]
    assert [a.embedding for a in heard] == [engine.sample_speaker(4), engine.sample_speaker(9)]
    assert all(len(a.audio) > 0 for a in heard)
    assert len(audition_seeds(engine, SynthesisRequest("你好。"), 3)) == 3


class NoEngine:
    """Fails the test when asked for anything: the work must not start."""

    def __getattr__(self, name: str) -> object:
        pytest.fail(f"the engine was asked for {name}")


def test_a_voice_is_kept_with_its_preview_and_a_taken_name_costs_nothing(
    engine: Engine, private_home: Path
) -> None:
    library = SpeakerLibrary()
    entry = keep_new_voice(library, engine, "Ann", VoiceSource(seed=5), note="n")
    assert entry.seed == 5 and entry.embedding == engine.sample_speaker(5)
    assert entry.preview and library.file(entry.preview).is_file()
    with pytest.raises(SpeakerNameTaken):
        keep_new_voice(library, NoEngine(), "Ann", VoiceSource(seed=6))  # type: ignore[arg-type]
    token = CancelToken()
    token.cancel()
    with pytest.raises(Cancelled):
        keep_new_voice(library, engine, "Bo", VoiceSource(seed=6), cancel=token)
    assert SpeakerLibrary().names() == ["Ann"]


def _threads() -> set[str]:
    return {t.name for t in threading.enumerate()}


def test_the_speech_api_listens_on_a_thread_and_stops_with_nothing_left(engine: Engine) -> None:
    service = SpeechService(engine, ServeOptions(port=0, slots=2))
    service.start(stop_seconds=1.0)
    try:
        assert service.port > 0 and service.address == "127.0.0.1"
        assert {"speech-api", "batcher"} <= _threads()
        health = httpx.get(f"http://127.0.0.1:{service.port}/health", timeout=30).json()
        assert health["status"] == "ok" and health["model"] == "demo"
        assert service.batcher.slots == 2 and service.requests == 0
    finally:
        service.close()
    assert not {"speech-api", "batcher"} & _threads()


def test_a_taken_port_is_cannot_listen_with_nothing_left_running(engine: Engine) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        service = SpeechService(engine, ServeOptions(port=port))
        with pytest.raises(CannotListen) as refused:
            service.start(wait_seconds=20)
    assert refused.value.port == port and f"127.0.0.1:{port}" in str(refused.value)
    assert not {"speech-api", "batcher"} & _threads()
