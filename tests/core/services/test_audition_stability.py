"""An audition asked for stability: after the candidates read the sentence, each reads the
stability lines and is scored by the speaker model project_job.speaker_for chooses. Here an
engine stands in for ChatTTS whose candidates are espeak-ng voices (one steady, one that
changes voice between lines), scored by the real CAM++ encoder."""

from pathlib import Path

import pytest
from espeak_speakers import EspeakVoices

from chattts_studio.core.engine.cancel import CancelToken
from chattts_studio.core.engine.request import SynthesisRequest
from chattts_studio.core.errors import Cancelled, ModelError
from chattts_studio.core.services import project_job
from chattts_studio.core.services.audition import AuditionJob, Candidate, audition
from chattts_studio.core.services.report import Partial, Progress
from chattts_studio.core.speaker.encoder import SpeakerEncoder
from chattts_studio.core.speaker.stability import LINES

SENTENCE = "Each candidate reads this sentence first."
# The candidates in the order the audition draws them: the first wanders, the second holds.
SPEAKS = (["en+m1", "en+f3", "en+grandma", "en-us+m5"], ["en+m1"])


class EspeakEngine:
    """What audition() asks of an engine: a speaker per seed, and each voice reading the
    request's text in its espeak-ng voices; `heard` keeps each pass's text, `cancel_at`
    cancels a token after that many passes."""

    def __init__(self, cancel: CancelToken | None = None, cancel_at: int = 0) -> None:
        self.audition = EspeakVoices(
            SPEAKS, lambda n: cancel.cancel() if cancel is not None and n == cancel_at else None
        )
        self.heard = self.audition.texts
        self.loaded = None

    def sample_speaker(self, seed: int) -> str:
        return f"speaker of seed {seed}"


def _job(stability: bool) -> AuditionJob:
    return AuditionJob(SENTENCE, 2, SynthesisRequest(text="", seed=1), stability=stability)


def test_a_rated_audition_scores_each_candidate_after_the_sentence(
    chosen_speaker_models: list[SpeakerEncoder],
) -> None:
    engine = EspeakEngine()
    events: list[object] = []
    wandering, steady = audition(engine, _job(True), CancelToken(), events.append)  # type: ignore[arg-type]
    assert engine.heard == [SENTENCE, *LINES["en"]]  # the sentence, then one pass a line
    assert wandering.rated and steady.rated and not steady.stability_demo
    assert steady.stability is not None and wandering.stability is not None
    assert steady.stability.mean > wandering.stability.mean + 0.2
    assert steady.stability.below == 0 and wandering.stability.below >= 3
    # The candidates, unrated, were handed over before the rating: what a cancel keeps.
    [partial] = [e.value for e in events if isinstance(e, Partial)]
    assert [c.seed for c in partial] == [wandering.seed, steady.seed]
    assert not any(c.rated for c in partial)
    progress = [e for e in events if isinstance(e, Progress)]
    fractions = [p.fraction for p in progress]
    assert fractions == sorted(fractions) and fractions[0] == 0.0 and fractions[-1] == 1.0
    said = [p.detail for p in progress if p.stage == "stability" and p.detail]
    assert said == [f"Rating stability: {n} of 4 lines read." for n in range(5)]
    assert [e._extractor for e in chosen_speaker_models] == [None]  # type: ignore[attr-defined]  # let go after


def test_scores_of_the_demo_speaker_model_say_so(
    monkeypatch: pytest.MonkeyPatch, real_speaker_model: Path
) -> None:
    demo = SpeakerEncoder(real_speaker_model, 2, demo=True)
    monkeypatch.setattr(project_job, "speaker_for", lambda _engine: demo)
    found = audition(EspeakEngine(), _job(True), CancelToken(), lambda _e: None)  # type: ignore[arg-type]
    assert [(c.rated, c.stability_demo) for c in found] == [(True, True), (True, True)]


def test_without_stability_no_line_is_read_and_no_speaker_model_is_chosen(
    chosen_speaker_models: list[SpeakerEncoder],
) -> None:
    engine = EspeakEngine()
    events: list[object] = []
    found = audition(engine, _job(False), CancelToken(), events.append)  # type: ignore[arg-type]
    assert engine.heard == [SENTENCE] and chosen_speaker_models == []
    assert [c.rated for c in found] == [False, False]
    assert all(c.stability is None for c in found)
    assert not any(isinstance(e, Partial) for e in events)


def test_a_cancel_between_lines_stops_the_rating_and_keeps_the_candidates(
    chosen_speaker_models: list[SpeakerEncoder],
) -> None:
    cancel = CancelToken()
    engine = EspeakEngine(cancel, cancel_at=2)  # cancelled as the first line is read
    events: list[object] = []
    with pytest.raises(Cancelled):
        audition(engine, _job(True), cancel, events.append)  # type: ignore[arg-type]
    assert engine.heard == [SENTENCE, LINES["en"][0]]  # no line after the cancel
    [partial] = [e.value for e in events if isinstance(e, Partial)]
    assert len(partial) == 2 and all(isinstance(c, Candidate) and not c.rated for c in partial)
    assert all(e._extractor is None for e in chosen_speaker_models)  # type: ignore[attr-defined]


def test_a_missing_speaker_model_is_said_before_any_audio_is_made(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def missing(_engine: object) -> SpeakerEncoder:
        raise ModelError("The voice check's speaker model is not downloaded yet.")

    monkeypatch.setattr(project_job, "speaker_for", missing)
    engine = EspeakEngine()
    with pytest.raises(ModelError, match="not downloaded"):
        audition(engine, _job(True), CancelToken(), lambda _e: None)  # type: ignore[arg-type]
    assert engine.heard == []
