"""Stable voices first, in the real window's Audition (the stand-in engine, ops inline): with
Rate stability checked each candidate's row shows its score, marked when a pair of its lines
falls below the threshold, with a tooltip saying what it means; Sort by stability puts the
steadiest first and back; a cancel or a failure while rating leaves the candidates, unrated;
unchecked, nothing is rated. The candidates speak with espeak-ng voices (some steady, some
changing voice from line to line) and the real CAM++ encoder scores them."""

import numpy as np
import pytest
from conftest import GUI_WAIT_MS
from espeak_speakers import EspeakVoices

from chattts_studio.core.errors import ModelError, StudioError
from chattts_studio.core.services import project_job
from chattts_studio.core.services.audition import Candidate
from chattts_studio.core.speaker.encoder import SpeakerEncoder
from chattts_studio.core.speaker.stability import Stability

pytestmark = pytest.mark.window(engine="standin")

SENTENCE = "Each candidate reads this sentence first."
# The candidates in the order the audition draws them: two wander, two hold their voice.
SPEAKS = (
    ["en+m1", "en+f3", "en+grandma", "en-us+m5"],
    ["en+m1"],
    ["en+f3", "en+m3"],
    ["en-us+m5"],
)
STEADY = (1, 3)


def _generate(qtbot, window, rate: bool) -> None:  # type: ignore[no-untyped-def]
    window.auditions.show_audition()
    dialog = window.auditions.dialog
    dialog.sentence.setText(SENTENCE)
    dialog.count.setValue(4)
    dialog.rate.setChecked(rate)
    dialog.generate.click()
    qtbot.waitUntil(lambda: window.jobs.current is None, timeout=GUI_WAIT_MS)


def _rows(dialog) -> list[Candidate]:  # type: ignore[no-untyped-def]
    """The candidates as the grid shows them, top to bottom (each by its label's row)."""
    rows = {}
    for candidate, label in ((m[0], m[1]) for m in dialog._marks):
        row, _column, _span, _cols = dialog.grid.getItemPosition(dialog.grid.indexOf(label))
        rows[row] = candidate
    return [rows[row] for row in sorted(rows)]


def test_each_candidate_shows_its_stability_and_the_steadiest_sort_first(
    qtbot, make_window, monkeypatch, chosen_speaker_models
) -> None:  # type: ignore[no-untyped-def]
    window = make_window()
    speaking = EspeakVoices(SPEAKS)
    monkeypatch.setattr(window.host.worker.engine, "audition", speaking)
    dialog = window.auditions.dialog
    details: list[str] = []
    real_progress = dialog.set_progress
    monkeypatch.setattr(
        dialog, "set_progress", lambda f, d: (details.append(d), real_progress(f, d))
    )
    assert not dialog.sort.isEnabled()
    _generate(qtbot, window, rate=True)
    assert len(speaking.texts) == 5 and speaking.texts[0] == SENTENCE  # + one pass a line
    assert "Rating stability: 4 of 4 lines read." in details
    assert dialog.status.text() == (
        "4 candidates ready, rated for stability: play, keep or drop each."
    )
    assert speaking.order([c.embedding for c in dialog.candidates]) == [0, 1, 2, 3]  # as they came
    for candidate in dialog.candidates:
        got = candidate.stability
        assert candidate.rated and got is not None and got.pairs == 6
        score = dialog.score_of(candidate)
        assert score is not None
        mark = " ⚠" if got.below else ""
        assert score.text() == f"stability {got.mean:.2f}{mark}"
        assert score.toolTip().split("\n") == [
            f"Mean similarity of its lines: {got.mean:.2f}",
            f"Lowest pair: {got.lowest:.2f}",
            f"Pairs below 0.73: {got.below} of 6",
        ]
    steady = [c for c in dialog.candidates if speaking.order([c.embedding])[0] in STEADY]
    assert all(c.stability.below == 0 for c in steady)  # type: ignore[union-attr]
    assert "⚠" in dialog.score_of(dialog.candidates[0]).text()  # type: ignore[union-attr]
    # Sort by stability: the steady two first, every score no higher than the one above.
    assert dialog.sort.isEnabled()
    dialog.sort.setChecked(True)
    shown = _rows(dialog)
    assert shown == dialog.candidates
    assert set(speaking.order([c.embedding for c in shown[:2]])) == set(STEADY)
    means = [c.stability.mean for c in shown]  # type: ignore[union-attr]
    assert means == sorted(means, reverse=True)
    score_rows = [
        dialog.grid.getItemPosition(dialog.grid.indexOf(dialog.score_of(c)))[0] for c in shown
    ]
    assert score_rows == [0, 1, 2, 3]  # each score moved with its candidate's row
    # Unsorted: back in the order they came.
    dialog.sort.setChecked(False)
    assert speaking.order([c.embedding for c in _rows(dialog)]) == [0, 1, 2, 3]
    assert [e._extractor for e in chosen_speaker_models] == [None]  # let go after the job


def test_a_cancel_while_rating_leaves_the_candidates_unrated(
    qtbot, make_window, monkeypatch, chosen_speaker_models
) -> None:  # type: ignore[no-untyped-def]
    window = make_window()
    dialog = window.auditions.dialog

    def cancel_at_the_second_line(number: int) -> None:
        if number == 3:  # the sentence, the first line, then the second: cancel while read
            assert dialog.cancel.isEnabled()
            dialog.cancel.click()

    speaking = EspeakVoices(SPEAKS, cancel_at_the_second_line)
    monkeypatch.setattr(window.host.worker.engine, "audition", speaking)
    _generate(qtbot, window, rate=True)
    assert len(speaking.texts) == 3  # no line read after the cancel
    assert dialog.status.text() == "Stability rating cancelled: the candidates are here, unrated."
    assert len(dialog.candidates) == 4 and len(dialog.rows) == 16
    assert not any(c.rated for c in dialog.candidates)
    assert all(dialog.score_of(c) is None for c in dialog.candidates)
    assert not dialog.sort.isEnabled()
    assert dialog.generate.isEnabled() and not dialog.cancel.isEnabled()
    assert [e._extractor for e in chosen_speaker_models] == [None]


def test_a_failure_while_rating_leaves_the_candidates_and_says_why(
    qtbot, make_window, monkeypatch, chosen_speaker_models
) -> None:  # type: ignore[no-untyped-def]
    window = make_window()

    def fail_at_the_first_line(number: int) -> None:
        if number == 2:
            raise StudioError("The device gave out.")

    monkeypatch.setattr(
        window.host.worker.engine, "audition", EspeakVoices(SPEAKS, fail_at_the_first_line)
    )
    _generate(qtbot, window, rate=True)
    dialog = window.auditions.dialog
    assert dialog.status.text() == (
        "Stability not rated: The device gave out. The candidates are here, unrated."
    )
    assert len(dialog.candidates) == 4 and not any(c.rated for c in dialog.candidates)


def test_unchecked_nothing_is_rated(qtbot, make_window, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    window = make_window()
    engine = window.host.worker.engine
    passes: list[str] = []
    real = engine.audition

    def counted(request, *args, **kwargs):  # type: ignore[no-untyped-def]
        passes.append(request.text)
        return real(request, *args, **kwargs)

    monkeypatch.setattr(engine, "audition", counted)

    def no_model(_engine: object) -> SpeakerEncoder:
        raise AssertionError("an unrated audition chose a speaker model")

    monkeypatch.setattr(project_job, "speaker_for", no_model)
    _generate(qtbot, window, rate=False)
    dialog = window.auditions.dialog
    assert passes == [SENTENCE]
    assert dialog.status.text() == "4 candidates ready: play, keep or drop each."
    assert len(dialog.candidates) == 4 and not any(c.rated for c in dialog.candidates)
    assert all(dialog.score_of(c) is None for c in dialog.candidates)
    assert not dialog.sort.isEnabled()


def test_a_missing_speaker_model_is_said_and_nothing_is_made(
    qtbot, make_window, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    window = make_window()
    speaking = EspeakVoices(SPEAKS)
    monkeypatch.setattr(window.host.worker.engine, "audition", speaking)
    said = "The voice check's speaker model is not downloaded yet."

    def missing(_engine: object) -> SpeakerEncoder:
        raise ModelError(said)

    monkeypatch.setattr(project_job, "speaker_for", missing)
    _generate(qtbot, window, rate=True)
    dialog = window.auditions.dialog
    assert speaking.texts == [] and dialog.candidates == []
    assert dialog.status.text() == said and dialog.generate.isEnabled()


def test_the_demo_model_s_scores_and_unjudged_candidates_say_so(make_window) -> None:  # type: ignore[no-untyped-def]
    window = make_window(model=None, wait=False)
    dialog = window.auditions.dialog
    audio = np.zeros(2400, np.float32)
    drifting = Candidate(
        5, "a", audio, rated=True, stability=Stability(0.64, 0.41, 2, 6), stability_demo=True
    )
    unjudged = Candidate(6, "b", audio, rated=True, stability=None)
    unrated = Candidate(7, "c", audio)
    steady = Candidate(8, "d", audio, rated=True, stability=Stability(0.91, 0.85, 0, 6))
    dialog.show_candidates([drifting, unjudged, unrated, steady])
    assert dialog.score_of(drifting).text() == "stability 0.64 ⚠ (demo)"  # type: ignore[union-attr]
    assert dialog.score_of(drifting).toolTip().split("\n")[0] == (  # type: ignore[union-attr]
        "Demo speaker model (random weights): its scores judge noise, not voices."
    )
    assert dialog.score_of(unjudged).text() == "stability —"  # type: ignore[union-attr]
    assert "Too little audio" in dialog.score_of(unjudged).toolTip()  # type: ignore[union-attr]
    assert dialog.score_of(unrated) is None
    assert dialog.score_of(steady).text() == "stability 0.91"  # type: ignore[union-attr]
    dialog.sort.setChecked(True)
    assert [c.seed for c in _rows(dialog)] == [8, 5, 6, 7]  # scored, unjudged, unrated
    # Dropping a row takes its score with it; the sort still holds for the rest.
    dialog.drop(steady, dialog.rows[12:16])  # its label, play, keep and drop
    assert dialog.score_of(steady) is None
    assert [c.seed for c in dialog.candidates] == [5, 6, 7]
