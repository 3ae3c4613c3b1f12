"""Word timings on real speech whose word times are known: espeak-ng's words joined with known
gaps, and whole sentences against espeak-ng's own word events (core/devtools/alignacc.py makes
both). English through PocketSphinx's forced alignment; Chinese estimated without a recogniser,
and timed from a recogniser's tokens where one is given. The bounds are those docs/alignment.md
states for the method, with room for one voice and few sentences."""

from dataclasses import dataclass

import numpy as np
import pytest

from chattts_studio.core import SAMPLE_RATE
from chattts_studio.core.align.aligner import AlignmentError, align
from chattts_studio.core.align.estimate import speech_span
from chattts_studio.core.align.recognised import heard_words, matched_times
from chattts_studio.core.align.sphinx import EnglishAligner
from chattts_studio.core.devtools.alignacc import (
    ESPEAK_RATE,
    at_app_rate,
    errors,
    espeak,
    joined,
    sentence,
)
from chattts_studio.core.errors import BadTextError

VOICE = "en-us+f2"
TEXTS = (
    "The weather is very nice today, so we will go to the park.",
    "Please remember to bring the blue folder to the meeting.",
)


@pytest.fixture(scope="module")
def english() -> EnglishAligner:
    return EnglishAligner()


def test_joined_words_start_and_end_where_they_were_put(english: EnglishAligner) -> None:
    rng = np.random.default_rng(7)
    starts, ends = [], []
    for text in TEXTS:
        truth = joined(VOICE, text, rng)
        got = align(truth.audio, SAMPLE_RATE, text, "en", english=english)
        assert [w.text for w in got.words] == truth.words
        s, e, guessed = errors(got.words, truth)
        assert len(guessed) <= 1, got.words
        starts += s
        ends += e
    assert np.median(starts) <= 0.04 and np.percentile(starts, 90) <= 0.1, starts
    assert np.median(ends) <= 0.06, ends


def test_whole_sentences_start_at_espeaks_word_events(english: EnglishAligner) -> None:
    starts = []
    for text in TEXTS:
        truth = sentence(VOICE, text)
        assert truth is not None
        got = align(truth.audio, SAMPLE_RATE, text, "auto", english=english)
        assert got.language == "en" and got.method.startswith("pocketsphinx")
        starts += errors(got.words, truth)[0]
    assert len(starts) >= 20
    assert np.median(starts) <= 0.04 and np.percentile(starts, 90) <= 0.1, starts


def test_a_word_the_audio_leaves_out_is_estimated_not_measured(english: EnglishAligner) -> None:
    said = at_app_rate(espeak().say("en-us", TEXTS[0].replace("today, ", ""))[0], ESPEAK_RATE)
    got = align(said, SAMPLE_RATE, TEXTS[0], "en", english=english)
    by_text = {w.text: w for w in got.words}
    assert by_text["today"].estimated
    assert sum(w.estimated for w in got.words) <= 2
    assert not by_text["weather"].estimated and not by_text["park"].estimated
    starts = [w.start for w in got.words]
    assert starts == sorted(starts)  # an estimate sits between its neighbours


@pytest.mark.parametrize(
    "other",
    [
        "Our train was delayed by almost an hour this morning.",  # words squeezed, phones disagree
        "I like cats.",  # the model's silence would swallow the rest of the speech
    ],
)
def test_another_text_is_refused(english: EnglishAligner, other: str) -> None:
    said = at_app_rate(espeak().say(VOICE, TEXTS[0])[0], ESPEAK_RATE)
    with pytest.raises(AlignmentError, match="does not say the text"):
        align(said, SAMPLE_RATE, other, "en", english=english)


def test_silence_and_a_text_without_words_are_refused(english: EnglishAligner) -> None:
    with pytest.raises(AlignmentError, match="silent"):
        align(np.zeros(SAMPLE_RATE, np.float32), SAMPLE_RATE, "hello there", english=english)
    said = at_app_rate(espeak().say(VOICE, "hello")[0], ESPEAK_RATE)
    with pytest.raises(BadTextError, match="no words"):
        align(said, SAMPLE_RATE, " ... !? [uv_break]", english=english)


def test_stereo_at_another_rate_gives_the_mono_times(english: EnglishAligner) -> None:
    mono, _ = espeak().say(VOICE, TEXTS[0])
    stereo = np.stack([mono, mono], axis=1)
    at_24k = align(at_app_rate(mono, ESPEAK_RATE), SAMPLE_RATE, TEXTS[0], english=english)
    native = align(stereo, ESPEAK_RATE, TEXTS[0], english=english)
    assert [w.text for w in native.words] == [w.text for w in at_24k.words]
    gaps = [abs(a.start - b.start) for a, b in zip(native.words, at_24k.words, strict=True)]
    assert max(gaps) <= 0.03, gaps


def test_chinese_without_a_recogniser_is_all_estimated_inside_the_speech() -> None:
    truth = sentence("cmn", "今天天气很好。")
    assert truth is not None
    got = align(truth.audio, SAMPLE_RATE, "今天天气很好。", "auto")
    assert got.language == "zh" and [w.text for w in got.words] == list("今天天气很好")
    assert all(w.estimated for w in got.words)
    span = speech_span(truth.audio, SAMPLE_RATE)
    assert span is not None
    assert got.words[0].start == pytest.approx(span[0]) and got.words[-1].end <= span[1] + 1e-9
    assert got.words[-1].tail == "。"


@dataclass
class EventRecogniser:
    """A recogniser that hears what espeak-ng said, at its word events: the token times a
    perfect CTC model would give, less `deaf` characters it fails to hear."""

    starts: list[float]
    text: str
    deaf: str = ""
    name: str = "espeak-events"

    def timed(self, audio: np.ndarray, sample_rate: int, language: str) -> list[tuple[str, float]]:
        heard = [("<|zh|>", 0.0)]
        pairs = zip(self.text, self.starts, strict=True)
        return heard + [(c, s) for c, s in pairs if c not in self.deaf]


def test_chinese_from_a_recognisers_tokens_marks_what_it_did_not_hear() -> None:
    text = "请把那本书递给我"
    truth = sentence("cmn", text)
    assert truth is not None
    heard = EventRecogniser(truth.starts, text, deaf="本")
    got = align(truth.audio, SAMPLE_RATE, text, "zh", recognizer=heard)
    assert got.method == "espeak-events token times"
    assert [w.text for w in got.words if w.estimated] == ["本"]
    pairs = zip(got.words, truth.starts, strict=True)
    measured = [(w.start, t) for w, t in pairs if not w.estimated]
    assert all(abs(a - b) < 1e-6 for a, b in measured)
    missing = got.words[text.index("本")]
    assert got.words[2].end <= missing.start <= missing.end <= got.words[4].start


def test_word_pieces_join_into_words_and_match_in_order() -> None:
    tokens = [("<|en|>", 0.0), ("▁hel", 0.1), ("lo", 0.2), ("▁wor", 0.5), ("ld", 0.6), ("你", 1.0)]
    assert heard_words(tokens) == [("hello", 0.1), ("world", 0.5), ("你", 1.0)]
    times = matched_times(["Hello", "big", "World", "你"], heard_words(tokens), speech_end=1.3)
    assert times[0] == (0.1, 0.5) and times[1] is None and times[2] == (0.5, 1.0)
    assert times[3] == (1.0, 1.3)


def test_words_the_dictionary_lacks_are_estimated_not_refused(english: EnglishAligner) -> None:
    said = at_app_rate(espeak().say(VOICE, "Xyzzyq")[0], ESPEAK_RATE)
    alone = align(said, SAMPLE_RATE, "Xyzzyq", "en", english=english)
    assert [(w.text, w.estimated) for w in alone.words] == [("Xyzzyq", True)]
    text = TEXTS[0].replace("nice", "nice Xyzzyq")
    got = align(at_app_rate(espeak().say(VOICE, text)[0], ESPEAK_RATE), SAMPLE_RATE, text)
    assert [w.text for w in got.words if w.estimated] == ["Xyzzyq"]
