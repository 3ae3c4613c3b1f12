"""A result's words in time and in its text: each word lands on its own characters of the text
that was synthesized (control tokens and punctuation skipped, a word the text lacks left out),
the word spoken at a time and the word under a character are found, and a result made of two
segments of espeak-ng speech is timed where the segments sit."""

import numpy as np
import pytest

from chattts_studio.core import SAMPLE_RATE
from chattts_studio.core.align.spans import (
    HOLD_SECONDS,
    WordSpan,
    result_spans,
    spoken_at,
    word_at,
    word_spans,
)
from chattts_studio.core.align.words import Word
from chattts_studio.core.devtools.alignacc import sentence


def words(*texts: str) -> list[Word]:
    return [Word(t, i * 1.0, i * 1.0 + 0.5, i % 2 == 1) for i, t in enumerate(texts)]


def test_each_word_lands_on_its_own_characters() -> None:
    text = "Hi [uv_break]there, 你好。uv break again!"
    found = word_spans(text, words("Hi", "there", "你", "好", "uv", "break", "again"))
    assert [text[s.first : s.last] for s in found] == [
        "Hi",
        "there",
        "你",
        "好",
        "uv",
        "break",
        "again",
    ]
    # "uv" and "break" are the words after 好, not the ones inside the control token.
    assert found[4].first == text.index("uv break")
    assert [s.estimated for s in found] == [False, True, False, True, False, True, False]


def test_a_word_the_text_lacks_is_left_out_and_the_rest_still_found() -> None:
    text = "one two three"
    found = word_spans(text, words("one", "deux", "three"))
    assert [text[s.first : s.last] for s in found] == ["one", "three"]


def test_the_word_spoken_at_a_time() -> None:
    spans = [WordSpan(0.2, 0.5, 0, 3), WordSpan(0.6, 0.9, 4, 7), WordSpan(3.0, 3.4, 8, 11)]
    assert spoken_at(spans, 0.1) is None  # before the first word
    assert spoken_at(spans, 0.2) == 0
    assert spoken_at(spans, 0.55) == 0  # a short pause belongs to the word before
    assert spoken_at(spans, 0.6) == 1
    assert spoken_at(spans, 0.9 + HOLD_SECONDS + 0.01) is None  # a long pause: none
    assert spoken_at(spans, 3.1) == 2
    assert spoken_at(spans, 9.0) is None
    assert spoken_at([], 1.0) is None


def test_the_word_under_a_character() -> None:
    spans = [WordSpan(0.2, 0.5, 0, 3), WordSpan(0.6, 0.9, 4, 7)]
    assert word_at(spans, 0) == 0
    assert word_at(spans, 3) == 0  # just after its last character
    assert word_at(spans, 5) == 1
    assert word_at(spans, 8) is None
    assert word_at([], 0) is None


def test_a_result_of_two_segments_is_timed_where_they_sit() -> None:
    first_text, second_text = "The weather is very nice today.", "Please bring the blue folder."
    one, two = sentence("en-us+f2", first_text), sentence("en-us+f2", second_text)
    assert one is not None and two is not None
    text = f"{first_text} [uv_break]{second_text}"
    second_at = len(one.audio) + SAMPLE_RATE // 4
    found = result_spans(
        text, [(first_text, one.audio, 0), (second_text, two.audio, second_at)], SAMPLE_RATE
    )
    assert [text[s.first : s.last] for s in found] == [*one.words, *two.words]
    truth = one.starts + [s + second_at / SAMPLE_RATE for s in two.starts]
    assert np.median(np.abs(np.subtract([s.start for s in found], truth))) <= 0.04
    assert found[len(one.words)].first == text.index("Please")


def test_noise_gives_estimated_words_not_an_error() -> None:
    noise = np.random.default_rng(5).normal(0, 0.1, SAMPLE_RATE * 2).astype(np.float32)
    found = result_spans("Hello there my friend.", [("Hello there my friend.", noise, 0)], 24000)
    assert len(found) == 4 and all(s.estimated for s in found)
    assert all(0 <= s.start <= s.end <= 2.0 for s in found)


@pytest.mark.parametrize("text", ["", "。！"])
def test_a_text_without_words_is_one_sentence(text: str) -> None:
    from chattts_studio.core.errors import StudioError

    with pytest.raises(StudioError):
        result_spans(text, [], SAMPLE_RATE)
