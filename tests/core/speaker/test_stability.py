"""Stable voices first: each candidate speaks a few short lines and the spread of its clips'
similarities is its stability. Here an engine stands in for ChatTTS whose "speakers" are
espeak-ng voices: a steady one reads every line in one voice, a wandering one changes voice
between lines, and the real CAM++ encoder must rank the steady one first."""

import json
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from espeak_speakers import EspeakVoices

from chattts_studio.core.engine.request import SynthesisRequest
from chattts_studio.core.services.audition import stability_of
from chattts_studio.core.speaker.encoder import SpeakerEncoder
from chattts_studio.core.speaker.stability import LINES, stability
from chattts_studio.core.voices.voice import Voice

STEADY, WANDERING = Voice("steady"), Voice("wandering")
SPEAKS = {"steady": ["en+m1"], "wandering": ["en+m1", "en+f3", "en+grandma", "en-us+m5"]}


def _engine() -> SimpleNamespace:
    return SimpleNamespace(audition=EspeakVoices(SPEAKS))


def test_a_steady_voice_ranks_above_one_that_wanders(speaker_encoder: SpeakerEncoder) -> None:
    engine = _engine()
    request = SynthesisRequest(text="A sentence of the book in English.")
    steady, wandering = stability_of(engine, request, [STEADY, WANDERING], speaker_encoder)  # type: ignore[arg-type]
    assert engine.audition.texts == list(
        LINES["en"]
    )  # one batched pass a line, both speakers in it
    assert steady is not None and wandering is not None
    assert steady.pairs == wandering.pairs == 6
    assert steady.mean > wandering.mean + 0.2 and steady.below == 0
    assert wandering.below >= 3 and wandering.lowest < steady.lowest


def test_the_lines_follow_the_text_s_language_and_short_clips_are_left_out(
    speaker_encoder: SpeakerEncoder,
) -> None:
    engine = _engine()
    request = SynthesisRequest(text="今天的天气很好。")
    found = stability_of(engine, request, [STEADY], speaker_encoder)  # type: ignore[arg-type]
    assert engine.audition.texts == list(LINES["zh"]) and found[0] is not None
    short = stability_of(engine, request, [STEADY], speaker_encoder, ("Yes.", "No.", "Hi."))  # type: ignore[arg-type]
    assert short == [None]  # every clip under a second: nothing to judge


def test_stability_needs_two_clips() -> None:
    with pytest.raises(ValueError, match="two clips"):
        stability([np.ones(4, np.float32)])
    got = stability([np.array([1.0, 0.0]), np.array([1.0, 0.0]), np.array([0.0, 1.0])])
    assert (got.pairs, got.below) == (3, 2) and got.lowest == 0.0
    assert got.mean == pytest.approx(1 / 3) and json.dumps(got.to_json())


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        ((), "Name library speakers, or give --seeds or --count."),
        (("Nobody",), "There is no speaker named 'Nobody' in the library."),
        (("--seeds", "3,x"), "--seeds takes whole numbers separated by commas, like 3,42."),
        (("--count", "65"), "--count must be between 0 and 64."),
        (("--seeds", "3", "--lines", "only one"), "--lines needs two lines or more"),
        (("--seeds", "3", "--voice-threshold", "2"), "--voice-threshold is a cosine similarity"),
        (("--seeds", "3", "--model", "official"), "The voice check's speaker model is not"),
    ],
)
def test_stability_mistakes_are_one_sentence_before_any_model_loads(
    private_home: Path, capsys: pytest.CaptureFixture[str], argv: tuple[str, ...], said: str
) -> None:
    from chattts_studio.core.cli.main import main

    assert main(["speakers", "stability", *argv]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.startswith(f"error: {said}"), err
    assert len(err.strip().splitlines()) == 1 and "loaded in" not in err
