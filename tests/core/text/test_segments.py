"""Segments end at sentence ends: sentences whole up to the model's limit, the segment size a
target measured in speech, long sentences cut at clauses, then words, never inside one."""

import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chattts_studio.core.errors import BadTextError
from chattts_studio.core.text.lexicon import Lexicon
from chattts_studio.core.text.prepare import (
    MAX_CJK_SEGMENT,
    MAX_SEGMENT_SECONDS,
    MAX_STEP_CAP,
    PLAN_STEP_LIMIT,
    SECONDS_PER_CJK,
    estimate_seconds,
    needed_steps,
    split_segments,
    target_seconds,
)

# A new user's text, as in the report that sentences were cut in half.
NEW_USER = (
    "The old bridge over the river was closed for repairs last spring. I think we should "
    "bring some water and a few snacks. 下午我们可以去河边的公园散步，顺便看看新修好的桥。"
    "If it rains, we can stay at home and watch a movie instead. 你觉得这个计划怎么样？"
    "Let me know by Friday evening, so I can book the tickets in time. 周末见！"
)
ENGLISH = [
    "The old bridge over the river was closed for repairs last spring.",
    "I think we should bring some water and a few snacks.",
    "If it rains, we can stay at home and watch a movie instead.",
    "Let me know by Friday evening, so I can book the tickets in time.",
]
CHINESE = [
    "下午我们可以去河边的公园散步，顺便看看新修好的桥。",
    "你觉得这个计划怎么样？",
    "周末见！",
]


def _squash(text: str) -> str:
    return re.sub(r"\s+", "", text)


def _fits(text: str) -> bool:
    return needed_steps(text) <= PLAN_STEP_LIMIT


def test_the_model_limit_is_the_step_caps_and_the_slider_ends_at_it() -> None:
    # 2,048 steps (ChatTTS's max_new_token; its GPT has 4,096 positions), planned to 85 %, with
    # 30 % head-room at 46.875 steps a second: about 28.5 s of speech in one segment.
    assert (MAX_STEP_CAP, PLAN_STEP_LIMIT) == (2048, 1740)
    assert round(MAX_SEGMENT_SECONDS, 2) == 28.55
    assert MAX_CJK_SEGMENT == 118
    assert _fits("字" * MAX_CJK_SEGMENT) and not _fits("字" * (MAX_CJK_SEGMENT + 1))
    # The segment size counts Chinese characters' worth of speech, up to that limit.
    assert target_seconds(50) == pytest.approx(50 * SECONDS_PER_CJK)
    assert target_seconds(500) == MAX_SEGMENT_SECONDS


def test_the_sentence_of_the_report_stays_whole_at_the_default_size() -> None:
    sentence = ENGLISH[0]
    assert [s.text for s in split_segments(sentence, 50)] == [sentence]
    # Even at the smallest segment size: the size is a target, not a knife.
    assert [s.text for s in split_segments(sentence, 10)] == [sentence]


@pytest.mark.parametrize("size", [10, 20, 50, 80, MAX_CJK_SEGMENT])
def test_every_sentence_of_a_mixed_text_is_whole_in_one_segment(size: int) -> None:
    segments = split_segments(NEW_USER, size)
    for sentence in ENGLISH + CHINESE:
        assert sum(sentence in s.text for s in segments) == 1, (size, sentence)
    # And every segment ends at a sentence end.
    assert all(s.text[-1] in ".？！。" for s in segments)
    assert _squash("".join(s.text for s in segments)) == _squash(NEW_USER)


def test_the_english_sentence_before_chinese_is_not_cut() -> None:
    text = "I think we should bring some water and a few snacks. 下午我们可以去公园散步。"
    segments = split_segments(text, 50)
    assert any(ENGLISH[1] in s.text for s in segments)
    assert all(not s.text.startswith("snacks") for s in segments)


def test_whole_sentences_are_packed_up_to_the_segment_size() -> None:
    sentences = [f"第{'一二三四五六七八九十'[i]}句话说得很短。" for i in range(10)]
    text = "".join(sentences)
    segments = split_segments(text, 20)
    target = target_seconds(20)
    assert _squash("".join(s.text for s in segments)) == text
    assert len(segments) > 1
    for i, s in enumerate(segments):
        assert s.est_seconds <= target + 1e-9
        if i + 1 < len(segments):  # the next sentence would have made it too long
            following = next(x for x in sentences if segments[i + 1].text.startswith(x))
            assert s.est_seconds + estimate_seconds(following) > target
    assert all(sum(x in s.text for s in segments) == 1 for x in sentences)


def test_a_sentence_past_the_segment_size_keeps_its_own_segment() -> None:
    long = "这是一个比分段大小长得多的句子，但是模型一次完全可以把它读完，所以它不应该被切开。"
    text = f"你好。{long}再见。"
    segments = split_segments(text, 10)
    assert [s.text for s in segments] == ["你好。", long, "再见。"]


def test_chinese_and_english_count_by_what_they_cost_to_say() -> None:
    # 60 Chinese characters are over a size of 50; 60 English letters are far under it.
    chinese = "我们" * 15 + "。" + "他们" * 15 + "。"
    english = "Sixty letters of English cost less than a Chinese text. " * 2
    assert len(split_segments(chinese, 50)) == 2
    assert len(split_segments(english.strip(), 50)) == 1
    assert estimate_seconds("a") < estimate_seconds("字")


def test_a_sentence_past_the_limit_is_cut_at_clauses_first() -> None:
    clauses = [f"第{n}个分句里有一些需要慢慢读出来的内容和细节" for n in "一二三四五六七八"]
    text = "，".join(clauses) + "。"
    assert not _fits(text)
    segments = split_segments(text, 50)
    assert len(segments) == 2
    assert all(_fits(s.text) for s in segments)
    assert segments[0].text.endswith("，") and segments[1].text.endswith("。")
    # As even as the clauses allow.
    assert abs(len(segments[0].text) - len(segments[1].text)) <= len(clauses[0]) + 1


@pytest.mark.parametrize("mark", ["；", ";", "：", ":", "、", ","])
def test_semicolons_and_colons_are_clauses_not_sentence_ends(mark: str) -> None:
    text = f"今天天气很好{mark}我们去公园散步吧。"
    assert [s.text for s in split_segments(text, 5)] == [text]


def test_an_english_sentence_of_600_characters_without_punctuation_splits_between_words() -> None:
    words = [f"river{'abcdefghij'[i % 10]}" for i in range(100)]
    text = " ".join(words)
    assert len(text) >= 600 and not _fits(text)
    segments = split_segments(text, 50)
    assert len(segments) == 2
    assert [w for s in segments for w in s.text.split()] == words
    assert all(_fits(s.text) for s in segments)
    lengths = sorted(len(s.text) for s in segments)
    assert lengths[1] - lengths[0] <= 7  # cut in the middle, not after a full first piece


def test_a_chinese_sentence_of_600_characters_splits_between_characters() -> None:
    text = ("我们今天一起去河边散步看风景" * 50)[:600]
    segments = split_segments(text, 50)
    assert "".join(s.text for s in segments) == text
    assert all(_fits(s.text) for s in segments)
    assert len(segments) == 6  # 144 s of speech in the fewest pieces that fit, even ones


def test_mixed_long_sentence_never_cuts_a_word_number_url_or_token() -> None:
    atoms = ["1,234.56", "3.14", "https://example.com/a/b?c=1&d=2", "[uv_break]", "e-mail"]
    words = []
    for i in range(60):
        words += ["我们看到", atoms[i % len(atoms)], "and", "another"]
    text = " ".join(words)
    assert not _fits(text)
    segments = split_segments(text, 50)
    assert len(segments) >= 2
    assert all(_fits(s.text) for s in segments)
    assert _squash("".join(s.text for s in segments)) == _squash(text)
    joined = "\n".join(s.text for s in segments)
    for atom in atoms:
        assert joined.count(atom) == text.count(atom)


def test_a_url_ends_a_sentence_with_its_own_full_stop_and_is_never_cut() -> None:
    text = "See https://example.com/docs/start.html. Then write to help@example.org, please."
    segments = split_segments(text, 1)
    assert [s.text for s in segments] == [
        "See https://example.com/docs/start.html.",
        "Then write to help@example.org, please.",
    ]


def test_abbreviations_do_not_end_a_sentence() -> None:
    text = "Mr. Smith met Dr. Brown at noon. They talked."
    assert [s.text for s in split_segments(text, 1)] == [
        "Mr. Smith met Dr. Brown at noon.",
        "They talked.",
    ]


def test_a_word_of_200_letters_is_one_segment_whole() -> None:
    word = "a" * 200
    segments = split_segments(f"{word}.", 10)
    assert [s.text for s in segments] == [f"{word}."]
    # Even past the model's limit a word is never cut: it stays whole, alone.
    huge = "b" * 600
    segments = split_segments(f"Start here. {huge} end.", 10)
    assert any(s.text.split()[0] == huge for s in segments)
    assert all(huge in s.text or "b" not in s.text for s in segments)


@pytest.mark.parametrize("text", ["。。！？……", "...,,,;;;!!!", "— – ：", "[uv_break][laugh]"])
def test_a_text_of_only_punctuation_is_refused_with_a_sentence(text: str) -> None:
    with pytest.raises(BadTextError, match="nothing ChatTTS can speak"):
        split_segments(text, 50)


def test_a_dictionary_word_is_never_cut_and_counts_as_it_is_read() -> None:
    lexicon = Lexicon([("ACME", "阿克米超级无敌有限公司"), ("Zed", "zed")])
    text = " ".join(["ACME sells Zed"] * 80)
    segments = split_segments(text, 50, lexicon)
    assert all(_fits(s.text) for s in segments)
    shown = " ".join(s.shown for s in segments)
    assert shown.split() == text.split()
    assert all("阿克米超级无敌有限公司" in s.text for s in segments)


# Sentences of Chinese, English and mixed words, numbers, URLs and tokens, some far past the
# limit, some without any punctuation.
_WORDS = st.sampled_from(
    [
        "river",
        "bridge",
        "a",
        "Spring",
        "1,234.56",
        "3.14",
        "42",
        "www.example.com/x",
        "[uv_break]",
        "我们",
        "公园",
        "散步",
        "桥",
        "ChatTTS",
        "e-mail",
        "O'Neil",
    ]
)
_CLAUSE = st.lists(_WORDS, min_size=1, max_size=40).map(" ".join)
_SENTENCE = st.tuples(
    st.lists(_CLAUSE, min_size=1, max_size=8),
    st.sampled_from(["，", ", ", "；", "; ", ": "]),
    st.sampled_from([".", "。", "!", "？", "", "\n"]),
).map(lambda t: t[1].join(t[0]) + t[2])
_TEXT = st.lists(_SENTENCE, min_size=1, max_size=8).map(" ".join)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=_TEXT, size=st.integers(min_value=5, max_value=500))
def test_any_text_comes_back_whole_in_segments_that_fit(text: str, size: int) -> None:
    try:
        segments = split_segments(text, size)
    except BadTextError:
        return  # nothing speakable drawn
    assert _squash("".join(s.text for s in segments)) == _squash(text)
    for s in segments:
        # No segment past the model's limit unless it is one word that cannot be cut.
        assert _fits(s.text) or len(s.text.split()) == 1
    joined = "\n".join(s.text for s in segments)
    for word in ["1,234.56", "3.14", "www.example.com/x", "[uv_break]", "O'Neil"]:
        assert joined.count(word) == text.count(word)


def test_a_project_made_before_keeps_its_segments(tmp_path: Path) -> None:
    from project_fakes import small_project

    from chattts_studio.core.project import store

    texts = ["Hello there.", "A second one.", "And the last."]
    folder = small_project(tmp_path / "old.chattts")
    assert len(split_segments(" ".join(texts), 50)) == 1  # split today, they would be one
    assert [s.text for s in store.load(folder).segments] == texts


def test_the_first_sentence_apart_makes_a_short_first_segment_and_packs_the_rest_alike() -> None:
    """A synthesis's first audio waits for its first segment's refine pass: the first sentence
    is a segment of its own, and the rest pack as they would after it."""
    text = (
        "今天天气很好，我们一起去公园散步吧。 The quick brown fox jumps over the lazy dog. "
        "长时间运行时，内存不应该随着文本长度增长。 Memory must not grow with the text."
    )
    together = split_segments(text, 50)
    apart = split_segments(text, 50, first_apart=True)
    assert len(together[0].text) > len(apart[0].text)
    assert apart[0].text == "今天天气很好，我们一起去公园散步吧。"
    rest = text[len(apart[0].text) :].strip()
    assert [s.text for s in apart[1:]] == [s.text for s in split_segments(rest, 50)]
    # Unspeakable pieces still join a speakable neighbour; one sentence stays one segment.
    assert [s.text for s in split_segments("……。你好。今天。", 50, first_apart=True)] == [
        "……。你好。",
        "今天。",
    ]
    assert [s.text for s in split_segments("你好", 50, first_apart=True)] == ["你好"]
