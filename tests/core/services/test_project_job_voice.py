"""The segment editor's voice check as the window's worker runs it (core/services/project_job.py),
on projects of synthetic takes and the demo speaker model (random weights: its similarities are
noise, the plumbing is real): "voice" compares each chosen take once with today's reference and
lets the model go; a new reference makes the checks out of date; "best" with `voice` weighs the
voice in its choice (take_cost), without it only the hearing; which speaker model a job gets."""

from pathlib import Path
from types import SimpleNamespace

import pytest
from project_fakes import saved_project, speech
from standin_engine import StandinEngine

from chattts_studio.core.engine.cancel import CancelToken
from chattts_studio.core.errors import ModelError
from chattts_studio.core.project import edits, store
from chattts_studio.core.services import project_job
from chattts_studio.core.services.project_job import BestJob, VoiceJob, run_project
from chattts_studio.core.services.report import Progress
from chattts_studio.core.speaker import models as speaker_models
from chattts_studio.core.speaker.check import REFERENCE_TAKE, REFERENCE_TYPICAL
from chattts_studio.core.speaker.encoder import SpeakerEncoder

TEXTS = ["The first sentence.", "The second sentence.", "The third sentence."]


@pytest.fixture(scope="module")
def demo_speaker() -> Path:
    """The demo speaker model in the run's cache, made once (a child process, seconds)."""
    from chattts_studio.core.speaker import demo_model

    return demo_model.demo_file()


@pytest.fixture
def engine() -> StandinEngine:
    """An engine holding the demo weights (random: the voice check gets the demo model)."""
    standin = StandinEngine()
    standin.load("demo", "cpu", "fp32")
    return standin


@pytest.fixture
def unloads(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """Each speaker encoder let go, by its model file."""
    gone: list[Path] = []
    real = SpeakerEncoder.unload

    def unload(self: SpeakerEncoder) -> None:
        gone.append(self.model_file)
        real(self)

    monkeypatch.setattr(SpeakerEncoder, "unload", unload)
    return gone


class HearsTheSame:
    """A recogniser that hears the same word in every take: every take of a segment scores
    alike, so the hearing ties and the voice decides."""

    name = "stand-in recogniser"

    def __init__(self) -> None:
        self.unloaded = False

    def transcribe(self, audio: object, sample_rate: int, language: str) -> str:
        return "sentence"

    def unload(self) -> None:
        self.unloaded = True


def test_voice_checks_each_chosen_take_once_against_today_s_reference(
    tmp_path: Path, demo_speaker: Path, engine: StandinEngine, unloads: list[Path]
) -> None:
    folder = saved_project(
        tmp_path / "book.chattts",
        TEXTS,
        [[speech(1.5, 1), speech(1.6, 2)], [speech(1.4, 3)], [speech(1.7, 4)]],
    )
    events: list[object] = []
    done = run_project(engine, VoiceJob(folder), CancelToken(), events.append)

    project = store.load(folder)
    assert done.folder == folder and done.made == 3 and done.skipped == ()
    for segment in project.segments:
        check = segment.chosen_take.voice_check  # type: ignore[union-attr]
        assert check is not None and check.demo and check.model == demo_speaker.name
        assert check.reference == REFERENCE_TYPICAL  # nothing marked, no library clip
    assert project.at(1).takes[0].voice_check is None  # not chosen: not checked
    progress = [e for e in events if isinstance(e, Progress)]
    assert {p.stage for p in progress} == {"checking takes"}  # the live panel's stage
    assert progress[-1].fraction == 1.0 and progress[-1].detail == "3 of 3 takes checked"
    assert unloads == [demo_speaker]  # the model let go after the job

    # Again: every check is against today's reference already, so nothing is checked.
    again = run_project(engine, VoiceJob(folder), CancelToken(), events.append)
    assert again.made == 0 and store.load(folder) == project

    # A marked reference makes every check of the voice out of date: each is made again.
    assert edits.mark_reference(folder, 2) == 1
    third = run_project(engine, VoiceJob(folder), CancelToken(), events.append)
    marked = store.load(folder)
    assert third.made == 3
    reference_id = f"{marked.at(2).id}/1"
    for segment in marked.segments:
        check = segment.chosen_take.voice_check  # type: ignore[union-attr]
        assert check is not None and check.reference == REFERENCE_TAKE
        assert check.reference_id == reference_id
    assert marked.at(2).chosen_take.voice_check.similarity == pytest.approx(1.0, abs=1e-5)  # type: ignore[union-attr]
    assert len(unloads) == 3


def test_a_take_too_short_to_judge_is_skipped_and_said(
    tmp_path: Path, demo_speaker: Path, engine: StandinEngine
) -> None:
    folder = saved_project(
        tmp_path / "short.chattts", TEXTS, [[speech(1.5, 1)], [speech(0.4, 2)], [speech(1.5, 3)]]
    )
    edits.mark_reference(folder, 1)
    done = run_project(engine, VoiceJob(folder), CancelToken(), lambda _event: None)
    assert done.made == 2 and len(done.skipped) == 1
    assert "Take 1 of segment 2 is 0.40 s long" in done.skipped[0]
    assert store.load(folder).at(2).chosen_take.voice_check is None  # type: ignore[union-attr]


@pytest.mark.parametrize("voice", [True, False])
def test_best_of_n_weighs_the_voice_only_when_asked(
    tmp_path: Path,
    demo_speaker: Path,
    engine: StandinEngine,
    unloads: list[Path],
    monkeypatch: pytest.MonkeyPatch,
    voice: bool,
) -> None:
    """Three takes of each segment (the last chosen), the hearing a tie: with `voice` each
    segment ends on the take closest to its voice's reference, and segment 1 on its marked
    reference (similarity 1); without it on the first take (ties go to the earliest), and no
    voice is compared. No take is made: every segment has its three already."""
    clips = [[speech(1.5, 10 * n + k) for k in range(3)] for n in range(len(TEXTS))]
    folder = saved_project(tmp_path / "best.chattts", TEXTS, clips)
    edits.mark_reference(folder, 1, 2)
    recognizer = HearsTheSame()
    monkeypatch.setattr(project_job, "recognizer_for", lambda _engine: recognizer)
    spec = BestJob(folder, takes=3, voice=voice)
    done = run_project(engine, spec, CancelToken(), lambda _event: None)

    project = store.load(folder)
    assert done.made == 0 and recognizer.unloaded
    assert all(t.asr is not None for s in project.segments for t in s.takes)
    if not voice:
        assert all(t.voice_check is None for s in project.segments for t in s.takes)
        assert [s.chosen for s in project.segments] == [1, 1, 1]
        assert unloads == []
        return
    assert all(t.voice_check is not None for s in project.segments for t in s.takes)
    assert project.at(1).chosen == 2  # its marked reference: the same voice, exactly
    for segment in project.segments:
        closest = max(segment.takes, key=lambda t: (t.voice_check.similarity, -t.id))  # type: ignore[union-attr]
        assert segment.chosen == closest.id
    assert unloads == [demo_speaker]


def test_which_speaker_model_a_job_gets(
    tmp_path: Path, demo_speaker: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Demo TTS weights and no official model: the demo one. Real weights without the official
    model: the sentence saying how to get it. The official model, once downloaded, for both."""

    def engine(random_weights: bool) -> SimpleNamespace:
        return SimpleNamespace(
            loaded=SimpleNamespace(info=SimpleNamespace(random_weights=random_weights))
        )

    demo = project_job.speaker_for(engine(True))  # type: ignore[arg-type]
    assert demo.demo and demo.model_file == demo_speaker
    with pytest.raises(ModelError, match="model download-speaker' or use the Models dialog"):
        project_job.speaker_for(engine(False))  # type: ignore[arg-type]
    with pytest.raises(ModelError, match="model download-speaker"):
        project_job.speaker_for(SimpleNamespace(loaded=None))  # type: ignore[arg-type]

    monkeypatch.setenv("CHATTTS_STUDIO_HOME", str(tmp_path / "home"))
    official = speaker_models.official_file()
    official.parent.mkdir(parents=True)
    official.write_bytes(b"the official model's bytes")
    for random_weights in (True, False):
        got = project_job.speaker_for(engine(random_weights))  # type: ignore[arg-type]
        assert got.model_file == official and not got.demo
        assert not project_job.compares_with_demo(random_weights)
