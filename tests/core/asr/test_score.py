"""The speech recognition check's scoring on given transcripts: CER for Chinese, WER for
English, a mixed segment counted per script, the text read as spoken (numbers, the
dictionary, control tokens, punctuation, case, full-width and traditional forms folded), and
the alignment naming what is missing, extra and changed."""

import pytest

from chattts_studio.core.asr.score import AsrCheck, AsrLimits, asr_flag, check, joined, tokens
from chattts_studio.core.text.lexicon import Lexicon
from chattts_studio.core.text.prepare import split_segments


def test_a_dropped_chinese_word_is_named_and_scored_per_character() -> None:
    got = check("今天天气很好，我们去公园散步。", "今天很好我们去公园散步")
    assert got.missing == ["天气"] and not got.extra and not got.changed
    assert got.cer == pytest.approx(2 / 13) and got.wer is None
    assert got.score == got.cer


def test_english_words_dropped_repeated_and_changed_are_named() -> None:
    got = check(
        "The quick brown fox jumps over the lazy dog.",
        "the quick fox jumps over the the lazy log",
    )
    assert got.missing == ["brown"]
    assert got.extra == ["the"]
    assert got.changed == [("dog", "log")]
    assert got.wer == pytest.approx(3 / 9) and got.cer is None and got.score == got.wer


def test_a_dropped_phrase_is_one_run() -> None:
    got = check("我们明天早上八点在学校门口见面。", "我们在学校门口见面")
    assert got.missing == ["明天早上八点"]
    assert got.cer == pytest.approx(6 / 15)


def test_a_mixed_segment_is_counted_per_script() -> None:
    """One alignment; a word's error counts in the WER, a character's in the CER."""
    text = "我用Python写代码，很快。"
    assert tokens(text) == ["我", "用", "python", "写", "代", "码", "很", "快"]
    got = check(text, "我用python写码很快")
    assert got.missing == ["代"] and got.cer == pytest.approx(1 / 7) and got.wer == 0.0
    got = check(text, "我用pyton写代码很快")
    assert got.changed == [("python", "pyton")] and got.wer == 1.0 and got.cer == 0.0
    assert got.score == pytest.approx(1 / 8)


@pytest.mark.parametrize(
    ("text", "heard"),
    [
        ("会议在10:30开始，收入增长了3.5%。", "会议在十点三十分开始收入增长了百分之三点五"),
        ("It costs $5, on May 3rd.", "it costs five dollars on may third"),
        ("[laugh]Hello, World![uv_break] [break_3]", "hello world"),
        ("今天天氣很好，我們去公園。", "今天天气很好我们去公园"),
        ("ＡＢＣ是字母。", "abc是字母"),
        ("Don’t stop.", "don't stop"),
    ],
)
def test_text_and_transcript_are_read_as_spoken_before_they_are_compared(
    text: str, heard: str
) -> None:
    got = check(text, heard)
    assert got.score == 0.0 and not (got.missing or got.extra or got.changed), got


def test_digits_a_recogniser_writes_are_read_as_the_text_was() -> None:
    assert check("收入增长了百分之三点五。", "收入增长了3.5%").score == 0.0
    assert check("She was twenty one.", "she was 21").score == 0.0


def test_the_dictionary_is_applied_as_the_model_read_it() -> None:
    lexicon = Lexicon([("SQL", "sequel"), ("行长", "hang zhang")])
    (segment,) = split_segments("Learn SQL today.", 50, lexicon)
    assert check(segment.text, "learn sequel today").score == 0.0
    assert check(segment.text, "learn s q l today").score > 0.0


def test_nothing_heard_misses_everything_and_nothing_to_say_is_clean() -> None:
    got = check("你好世界。", "")
    assert got.score == 1.0 and got.missing == ["你好世界"]
    assert check("[uv_break]", "").score == 0.0
    assert check("[uv_break]", "hello").score == 1.0


def test_runs_are_written_as_a_reader_writes_them() -> None:
    assert joined(["天", "气"]) == "天气"
    assert joined(["the", "lazy", "dog"]) == "the lazy dog"
    assert joined(["用", "python", "写"]) == "用 python 写"


def test_a_check_survives_its_json() -> None:
    got = check(
        "The quick brown fox jumps over the lazy dog.", "the quick fox jumps over the the lazy log"
    )
    back = AsrCheck.from_json(got.to_json())
    assert back == got and back.missing == ["brown"] and back.extra == ["the"]
    assert back.changed == [("dog", "log")]
    with pytest.raises((KeyError, TypeError, ValueError)):
        AsrCheck.from_json({"score": 0.1})


def test_a_flag_names_what_was_missed_first_and_a_clean_take_has_none() -> None:
    text = "今天天气很好，我们下午一起去公园散步，然后回家吃饭。"
    assert asr_flag(check(text, "今天天气很好我们下午一起去公园散步然后回家吃饭")) is None
    dropped = check(text, "今天很好我们下午一起去公园散步然后回家吃饭")
    assert dropped.score < AsrLimits().max_score  # a short run in a long segment ...
    flag = asr_flag(dropped)
    assert flag is not None and "“天气”" in flag and "9%" in flag  # 2 of 22: still named
    assert asr_flag(dropped, AsrLimits(run_tokens=3)) is None
    # One character heard differently (a homophone: a recogniser's slip) is not flagged ...
    assert asr_flag(check(text, "今天天气很好我们下午一起去公园散步然后回家吃放")) is None
    # ... nor is one English word missing, until the rate passes the limit.
    said = "The weather is very nice today so we will go to the park."
    assert asr_flag(check(said, "the weather is very nice today so we go to the park")) is None
    babble = asr_flag(check(said, "the weather is very nice nice nice today so we will go"))
    assert babble is not None and "“to the park”" in babble  # missing first, then extra
    repeated = asr_flag(
        check(said, "the weather is very nice nice nice today so we will go to the park")
    )
    assert (
        repeated is not None
        and "“nice nice”" in repeated
        and "which the text does not say" in repeated
    )
    changed = asr_flag(check(said, "the weather is very bad tonight so we will go to the shop"))
    assert changed is not None and "where the text says" in changed


def test_a_flag_s_sentence_is_said_in_chinese_with_its_words_kept() -> None:
    flag = asr_flag(check("今天天气很好。", "今天很好"))
    assert flag is not None
    assert (
        flag.template.startswith("Speech recognition did not hear")
        and flag.params["words"] == "“天气”"
    )
