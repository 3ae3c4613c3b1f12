"""Segmenting and text checks: boundaries, control tokens, numbers, bad text."""

import re

import pytest

from chattts_studio.core.errors import BadTextError
from chattts_studio.core.text.prepare import (
    PLAN_STEP_LIMIT,
    clean,
    estimate_seconds,
    needed_steps,
    split_segments,
    step_cap,
)

ZH = "今天天气很好。我们去公园散步吧！公园里有很多人，有的在跑步，有的在下棋。然后我们回家吃饭。"


def _squash(text: str) -> str:
    return re.sub(r"\s+", "", text)


def test_chinese_splits_at_sentence_ends_and_packs_up_to_the_limit() -> None:
    segments = split_segments(ZH, 20)
    assert [s.text for s in segments] == [
        "今天天气很好。我们去公园散步吧！",
        "公园里有很多人，有的在跑步，有的在下棋。",
        "然后我们回家吃饭。",
    ]
    assert all(len(s.text) <= 20 for s in segments)
    assert [s.index for s in segments] == [0, 1, 2]


def test_long_sentence_splits_at_clauses_then_characters() -> None:
    # 150 characters with no clause mark, then a clause: past the model's limit (118).
    text = "一二三四五六七八九十" * 15 + "，" + "甲乙丙丁" * 3 + "。"
    segments = split_segments(text, 12)
    assert [len(s.text) for s in segments] == [75, 89]
    assert segments[1].text.endswith("，甲乙丙丁甲乙丙丁甲乙丙丁。")
    assert _squash("".join(s.text for s in segments)) == _squash(text)


def test_latin_without_punctuation_splits_between_words_only() -> None:
    letters = "abcdefghij"
    words = [f"word{letters[i % 10]}{letters[i // 10 % 10]}" for i in range(150)]
    text = " ".join(words)  # 63 s of speech: past the model's limit twice
    segments = split_segments(text, 30)
    assert len(segments) == 3
    assert all(needed_steps(s.text) <= PLAN_STEP_LIMIT for s in segments)
    assert [w for s in segments for w in s.text.split()] == words


def test_numbers_and_control_tokens_are_never_cut() -> None:
    text = "pi is 3.14159 and the price is 1,000,000 dollars [uv_break] then [laugh] ok"
    for limit in range(8, 30):
        segments = split_segments(text, limit)
        joined = " ".join(s.text for s in segments)
        for atom in ["3.14159", "1,000,000", "[uv_break]", "[laugh]"]:
            assert sum(atom in s.text for s in segments) == 1, (limit, joined)
        assert _squash(joined) == _squash(text)


def test_newlines_are_boundaries() -> None:
    segments = split_segments("first line\nsecond line", 200)
    assert [s.text for s in segments] == ["first line second line"]
    segments = split_segments("first line\nsecond line", 5)
    assert [s.text for s in segments] == ["first line", "second line"]


def test_mixed_text_keeps_order_and_content() -> None:
    text = "Hello, 世界。This is ChatTTS Studio! 我们在测试 mixed text, 好吗？"
    segments = split_segments(text, 15)
    assert _squash("".join(s.text for s in segments)) == _squash(text)


def test_unspeakable_pieces_join_a_neighbour() -> None:
    segments = split_segments("……你好。……", 3)
    assert len(segments) == 1 and "你好" in segments[0].text


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "empty"),
        ("   \n\t  ", "empty"),
        ("🙂🙂🙂", "nothing ChatTTS can speak"),
        ("。。！？……", "nothing ChatTTS can speak"),
        ("مرحبا بالعالم", "nothing ChatTTS can speak"),
        ("hello [shout] world", "Unknown control token [shout]"),
        ("hello [spk_emb] world", "reserved"),
        ("hello [uv_break world", "'['"),
        ("hello ] world", "'['"),
    ],
)
def test_bad_text_is_refused_with_a_sentence(text: str, message: str) -> None:
    with pytest.raises(BadTextError, match=re.escape(message)):
        split_segments(text, 50)


def test_control_characters_and_nul_bytes_are_dropped() -> None:
    assert clean("he\x00llo\x07 wo\u200brld\n") == "hello world\n"
    assert split_segments("你\x00好", 50)[0].text == "你好"


def test_step_cap_grows_with_the_text_and_matches_speech_rate() -> None:
    short, long = "你好。", "你好。" * 10
    assert step_cap(long) > 5 * step_cap(short)
    # 20 Chinese characters read in about 4.8 s; the cap is that at 46.875 steps/s, plus 30 %.
    assert estimate_seconds("你" * 20) == pytest.approx(4.8)
    assert step_cap("你" * 20) == pytest.approx(4.8 * 46.875 * 1.3, abs=1)
    # Never past ChatTTS's own max_new_token (its GPT has 4096 positions).
    assert step_cap("你" * 500) == 2048


def test_numbers_and_dates_are_read_out() -> None:
    from chattts_studio.core.text.numbers import NUMBER_READERS

    assert NUMBER_READERS["zh"]("今天是2024年3月5日，气温-3.5度。") == (
        "今天是二零二四年三月五日，气温负三点五度。"
    )
    english = NUMBER_READERS["en"]("It costs 1,000 dollars and 3.5 cents on day 42.")
    assert "one thousand" in english and "three point five" in english
    # Hyphens and commas are dropped: ChatTTS's normalizer reads both as pauses.
    assert "forty two" in english and not any(c.isdigit() or c in "-," for c in english)
    # Shapes cn2an rejects keep their digits rather than failing the job.
    assert NUMBER_READERS["zh"]("版本1.2.3").startswith("版本")


def test_mixed_chinese_english_numbers_segment_and_stay_in_order() -> None:
    text = "2024年，ChatTTS Studio 发布了 version 1.0。It reads 3.14 and 一百 well!"
    segments = split_segments(text, 20)
    assert _squash("".join(s.text for s in segments)) == _squash(text)
    assert all(s.step_cap >= 16 for s in segments)


@pytest.mark.parametrize(
    ("lang", "text", "spoken"),
    [
        ("zh", "涨了3.5%。", "涨了百分之三点五。"),
        ("zh", "2024年5月1日放假", "二零二四年五月一日放假"),
        ("zh", "跑了5 km", "跑了五公里"),
        ("zh", "重100kg", "重一百公斤"),
        ("zh", "共1,234人", "共一千二百三十四人"),
        ("zh", "价格是$12.50", "价格是十二点五美元"),
        ("zh", "会议10:30开始，10:05结束", "会议十点三十分开始，十点零五分结束"),
        ("zh", "气温-3°C", "气温零下三摄氏度"),
        ("zh", "我有-5元", "我有负五元"),
        ("zh", "电话13812345678", "电话一三八一二三四五六七八"),
        ("en", "It rose 3.5% today.", "It rose three point five percent today."),
        ("en", "I ran 5 km.", "I ran five kilometers."),
        ("en", "Just 1 km.", "Just one kilometer."),
        (
            "en",
            "There were 1,234 people.",
            "There were one thousand two hundred and thirty four people.",
        ),
        ("en", "It costs $12.50.", "It costs twelve dollars and fifty cents."),
        (
            "en",
            "Meet at 10:30 or 9:05 or 11:00.",
            "Meet at ten thirty or nine oh five or eleven o'clock.",
        ),
        ("en", "It is -3°C outside.", "It is minus three degrees Celsius outside."),
        ("en", "On 2024-05-01 we met.", "On May first, twenty twenty four we met."),
        ("en", "He came 3rd in 1999.", "He came third in nineteen ninety nine."),
        ("en", "Room 2024 is free.", "Room two thousand and twenty four is free."),
    ],
)
def test_numbers_units_dates_and_money_are_read_in_words(lang: str, text: str, spoken: str) -> None:
    from chattts_studio.core.text.numbers import NUMBER_READERS

    out = NUMBER_READERS[lang](text)
    assert " ".join(out.split()).replace(" .", ".").replace(" ,", ",") == spoken


def test_what_the_model_reads_keeps_units_and_signs_through_chattts_normalizer() -> None:
    """Through ChatTTS's own normaliser (which drops '%', '°' and '$' it cannot say): the
    words made for them survive, and no digit or symbol is left to be dropped."""
    from chattts_studio.core.engine.chattts.chat import text_normalizer
    from chattts_studio.core.text.numbers import NUMBER_READERS

    normalize = text_normalizer(NUMBER_READERS)
    assert "percent" in normalize("Prices rose 3.5% this year.")
    assert "minus three degrees Celsius" in normalize("It is -3°C outside.")
    assert "百分之三点五" in normalize("价格涨了3.5%。")
    assert "零下三摄氏度" in normalize("今天气温-3°C。")
    for text in ("It costs $12.50 at 10:30.", "共1,234人，10:30见。"):
        assert not any(c.isdigit() for c in normalize(text))
