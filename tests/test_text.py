"""Segmenting and text checks: boundaries, control tokens, numbers, bad text."""

import re

import pytest

from core.errors import BadTextError
from core.text import clean, estimate_seconds, split_segments, step_cap

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
    text = "一二三四五六七八九十" * 5 + "，" + "甲乙丙丁" * 3 + "。"
    segments = split_segments(text, 12)
    assert all(len(s.text) <= 12 for s in segments)
    assert _squash("".join(s.text for s in segments)) == _squash(text)


def test_latin_without_punctuation_splits_between_words_only() -> None:
    words = [f"word{i}" for i in range(40)]
    text = " ".join(words)
    segments = split_segments(text, 30)
    assert all(len(s.text) <= 30 for s in segments)
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
    segments = split_segments("first line\nsecond line", 12)
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
    from core.text import NUMBER_READERS

    assert NUMBER_READERS["zh"]("今天是2024年3月5日，气温-3.5度。") == (
        "今天是二零二四年三月五日，气温负三点五度。"
    )
    english = NUMBER_READERS["en"]("It costs 1,000 dollars and 3.5 cents on day 42.")
    assert "one thousand" in english and "three point five" in english
    assert "forty-two" in english and not any(c.isdigit() for c in english)
    # Shapes cn2an rejects keep their digits rather than failing the job.
    assert NUMBER_READERS["zh"]("版本1.2.3").startswith("版本")


def test_mixed_chinese_english_numbers_segment_and_stay_in_order() -> None:
    text = "2024年，ChatTTS Studio 发布了 version 1.0。It reads 3.14 and 一百 well!"
    segments = split_segments(text, 20)
    assert _squash("".join(s.text for s in segments)) == _squash(text)
    assert all(s.step_cap >= 16 for s in segments)
