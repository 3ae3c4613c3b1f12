"""Automatic take flags (core/project/flags.py): audio built here shows each flag, and audio
that should pass shows it does not fire."""

import ast
import json
import math
import re
import string
from pathlib import Path

import numpy as np
import pytest

from chattts_studio.core import SAMPLE_RATE
from chattts_studio.core.messages import Sentence
from chattts_studio.core.project import flags
from chattts_studio.core.project.flags import KINDS, Flag, Measures, Norms, Rate

ZH = "今天天气很好，[uv_break]我们去公园。"  # 11 spoken characters
ZH_COUNT = 11
EN = "Hello world, [laugh] this is a test."  # 21 letters
EN_COUNT = 21
LEVEL = 0.03  # RMS of a normal take: far from clipping even 12 dB up
NO_NORMS = Norms()  # no project ranges: only the flags that need none


def noise(seconds: float, rms: float = LEVEL, seed: int = 0) -> np.ndarray:
    """Band-limited (100 Hz - 4 kHz) noise at `rms`: speech-like enough for level and
    silence measures, and the same for the same seed."""
    count = round(seconds * SAMPLE_RATE)
    white = np.random.default_rng(seed).standard_normal(count)
    spectrum = np.fft.rfft(white)
    frequencies = np.fft.rfftfreq(count, 1 / SAMPLE_RATE)
    spectrum[(frequencies < 100) | (frequencies > 4000)] = 0
    shaped = np.fft.irfft(spectrum, count)
    return (shaped * (rms / np.sqrt(np.mean(shaped**2)))).astype(np.float32)


def zeros(seconds: float) -> np.ndarray:
    return np.zeros(round(seconds * SAMPLE_RATE), dtype=np.float32)


def kinds(m: Measures, norms: Norms = NO_NORMS, **take: object) -> list[str]:
    options: dict[str, object] = {
        "steps": 10,
        "cap": 100,
        "ended_by_eos": True,
        "random_weights": False,
    }
    options.update(take)
    return [f.kind for f in flags.flags_for(m, norms, **options)]  # type: ignore[arg-type]


def zh_take(rate: float, seed: int) -> Measures:
    return flags.measure(noise(rate * ZH_COUNT, seed=seed), ZH)


ZH_RATES = [0.20, 0.21, 0.22, 0.22, 0.23, 0.23, 0.24, 0.22]  # a consistent speaker


# -- counting the text -----------------------------------------------------------------------
def test_spoken_characters_skip_tokens_spaces_and_punctuation() -> None:
    assert flags.spoken_count(ZH) == (ZH_COUNT, "zh")
    assert flags.spoken_count(EN) == (EN_COUNT, "en")
    assert flags.spoken_count("It's 2024 [uv_break] [break_3] !!") == (7, "en")  # 3 + 4 digits
    assert flags.spoken_count("こんにちは、안녕하세요。") == (10, "zh")  # kana and hangul
    assert flags.spoken_count("[uv_break][laugh]，。 ...") == (0, "en")
    # Mostly CJK with an English word is Chinese; mostly Latin with one character is not.
    assert flags.spoken_count("我们用 AI 说话吧") == (8, "zh")
    assert flags.spoken_count("The word 好 means good") == (17, "en")


# -- a normal take ---------------------------------------------------------------------------
def test_normal_take_is_measured_and_not_flagged() -> None:
    m = flags.measure(noise(2.42), ZH)
    assert m.seconds == pytest.approx(2.42)
    assert (m.spoken, m.language, m.clipped, m.finite) == (ZH_COUNT, "zh", 0, True)
    assert m.longest_silence == 0.0
    assert m.loudness_db is not None and -40 < m.loudness_db < -20
    project = [zh_take(r, seed) for seed, r in enumerate(ZH_RATES)]
    assert kinds(m, flags.norms([*project, m])) == []


# -- rate: short and long --------------------------------------------------------------------
def test_rate_far_below_or_above_the_project_flags_short_or_long() -> None:
    project = [zh_take(r, seed) for seed, r in enumerate(ZH_RATES)]
    fast = zh_take(0.08, 20)  # words missing
    slow = zh_take(0.6, 21)  # babble
    near = zh_take(0.26, 22)  # a slower reading, but within reason
    norms = flags.norms([*project, fast, slow, near])
    assert set(norms.rates) == {"zh"}
    assert norms.rates["zh"].median == pytest.approx(0.22, abs=0.011)
    assert kinds(fast, norms) == ["short"]
    assert kinds(slow, norms) == ["long"]
    assert kinds(near, norms) == []
    assert all(kinds(m, norms) == [] for m in project)
    # The sentences say the numbers, already formatted.
    (short,) = flags.flags_for(fast, norms, steps=1, cap=9, ended_by_eos=True, random_weights=False)
    assert short.sentence.params["count"] == str(ZH_COUNT)
    assert short.sentence.params["seconds"] == f"{0.08 * ZH_COUNT:.1f}"
    assert "words may be missing" in short.sentence


def test_zero_mad_does_not_flag_a_hair_of_difference() -> None:
    # Every take exactly alike: MAD 0. A 10% deviation is no flag, a 50% one is.
    same = [Measures(2.2, 10, "zh", -25.0, 0.0, 0, True) for _ in range(6)]
    norms = flags.norms(same)
    assert norms.rates["zh"] == Rate(pytest.approx(0.22), 0.0)
    assert kinds(Measures(2.42, 10, "zh", -25.0, 0.0, 0, True), norms) == []
    # 24% off passes the (floored) MAD test but not the 25% one: a tight project flags no hairs.
    assert kinds(Measures(2.728, 10, "zh", -25.0, 0.0, 0, True), norms) == []
    assert kinds(Measures(3.3, 10, "zh", -25.0, 0.0, 0, True), norms) == ["long"]


def test_english_is_counted_by_letters_and_judged_apart_from_chinese() -> None:
    rates = [0.065, 0.07, 0.07, 0.072, 0.068, 0.075]
    english = [flags.measure(noise(r * EN_COUNT, seed=i), EN) for i, r in enumerate(rates)]
    assert all((m.spoken, m.language) == (EN_COUNT, "en") for m in english)
    clipped_words = flags.measure(noise(0.02 * EN_COUNT, seed=30), EN)
    chinese = [zh_take(r, 40 + i) for i, r in enumerate(ZH_RATES)]
    norms = flags.norms([*english, *chinese, clipped_words])
    assert set(norms.rates) == {"en", "zh"}
    assert norms.rates["en"].median == pytest.approx(0.07, abs=0.003)
    assert kinds(clipped_words, norms) == ["short"]
    # English at its own pace is not "short" next to Chinese's 0.22 s per character.
    assert all(kinds(m, norms) == [] for m in english)


def test_fewer_than_min_takes_give_no_rate_or_loudness_flags() -> None:
    few = [zh_take(r, seed) for seed, r in enumerate(ZH_RATES[:3])]
    fast = zh_take(0.08, 50)
    loud = flags.measure(noise(0.22 * ZH_COUNT, rms=LEVEL * 4, seed=51), ZH)
    norms = flags.norms([*few, fast])  # 4 takes
    assert norms == Norms({}, None)
    assert kinds(fast, norms) == []
    assert kinds(loud, flags.norms([*few, loud])) == []
    # One more take makes the range (MIN_TAKES = 5), and the same take is flagged.
    more = flags.norms([*few, zh_take(0.22, 52), fast])
    assert flags.MIN_TAKES == 5
    assert kinds(fast, more) == ["short"]


# -- silence ---------------------------------------------------------------------------------
def test_silence_inside_flags_but_leading_trailing_and_pauses_do_not() -> None:
    stalled = flags.measure(np.concatenate([noise(1, seed=1), zeros(2), noise(1, seed=2)]), ZH)
    assert stalled.longest_silence == pytest.approx(2.0, abs=0.04)
    assert kinds(stalled) == ["silence"]
    framed = flags.measure(np.concatenate([zeros(2), noise(2, seed=3), zeros(2)]), ZH)
    assert framed.longest_silence == 0.0
    assert kinds(framed) == []
    paused = flags.measure(np.concatenate([noise(1, seed=4), zeros(0.5), noise(1, seed=5)]), ZH)
    assert paused.longest_silence == pytest.approx(0.5, abs=0.04)
    assert kinds(paused) == []
    # Silence is relative: a hiss 50 dB down is silence, a passage 20 dB down is speech.
    hiss = noise(2, rms=LEVEL * 10 ** (-50 / 20), seed=6)
    hushed = flags.measure(np.concatenate([noise(1, seed=7), hiss, noise(1, seed=8)]), ZH)
    assert kinds(hushed) == ["silence"]
    soft = noise(2, rms=LEVEL * 10 ** (-20 / 20), seed=6)
    assert (
        kinds(flags.measure(np.concatenate([noise(1, seed=7), soft, noise(1, seed=8)]), ZH)) == []
    )


# -- clipping --------------------------------------------------------------------------------
def test_clipped_samples_flag_clipping() -> None:
    hot = np.clip(noise(1, rms=0.5, seed=9), -1.0, 1.0)
    m = flags.measure(hot, ZH)
    assert m.clipped >= 100
    assert kinds(m) == ["clipping"]
    two = noise(1, seed=10)
    two[[100, 5000]] = [1.0, -1.0]
    assert flags.measure(two, ZH).clipped == 2
    assert kinds(flags.measure(two, ZH)) == []
    three = two.copy()
    three[9000] = 0.9995
    assert kinds(flags.measure(three, ZH)) == ["clipping"]


# -- loudness --------------------------------------------------------------------------------
def test_a_take_far_from_the_project_loudness_is_flagged() -> None:
    project = [flags.measure(noise(1.5, seed=60 + i), ZH) for i in range(8)]

    def at(db: float, seed: int) -> Measures:
        return flags.measure(noise(1.5, rms=LEVEL * 10 ** (db / 20), seed=seed), ZH)

    louder, quieter, close = at(12, 70), at(-12, 71), at(3, 72)
    norms = flags.norms([*project, louder, quieter, close])
    assert norms.loudness_db is not None
    assert louder.loudness_db is not None
    assert louder.loudness_db - norms.loudness_db == pytest.approx(12, abs=0.5)
    assert kinds(louder, norms) == ["loudness"]
    assert kinds(quieter, norms) == ["loudness"]
    assert kinds(close, norms) == []
    assert all(kinds(m, norms) == [] for m in project)
    said = [f.sentence for f in flags.flags_for(louder, norms, **_FINE)]
    assert "louder" in said[0]
    said = [f.sentence for f in flags.flags_for(quieter, norms, **_FINE)]
    assert "quieter" in said[0]


_FINE: dict[str, object] = {"steps": 10, "cap": 100, "ended_by_eos": True, "random_weights": False}


# -- invalid and empty audio -----------------------------------------------------------------
def test_nonfinite_audio_is_measured_without_raising_and_flagged() -> None:
    audio = noise(2, seed=11)
    audio[24_000:24_010] = np.nan
    audio[30_000] = np.inf
    m = flags.measure(audio, ZH)
    assert m.finite is False
    assert m.seconds == pytest.approx(2.0)
    assert m.loudness_db is not None and math.isfinite(m.loudness_db)  # the finite part
    assert m.clipped == 0  # inf is not counted as a clipped sample
    assert kinds(m) == ["nonfinite"]
    # Other flags still come from what can be measured.
    assert kinds(m, steps=100, ended_by_eos=False) == ["nonfinite", "cap"]
    nothing = flags.measure(np.full(SAMPLE_RATE, np.nan, dtype=np.float32), ZH)
    assert (nothing.finite, nothing.loudness_db, nothing.longest_silence) == (False, None, 0.0)
    assert kinds(nothing) == ["nonfinite"]


def test_empty_and_tiny_audio_measure_zeros() -> None:
    empty = flags.measure(np.zeros(0, dtype=np.float32), "")
    assert empty == Measures(0.0, 0, "en", None, 0.0, 0, True)
    tiny = flags.measure(noise(0.01), ZH)  # under one loudness block and one silence frame
    assert (tiny.loudness_db, tiny.longest_silence, tiny.finite) == (None, 0.0, True)
    norms = flags.norms([*(zh_take(r, s) for s, r in enumerate(ZH_RATES)), empty, tiny])
    assert kinds(empty, norms) == []  # nothing spoken: no rate to judge
    assert kinds(tiny, norms) == ["short"]
    assert kinds(flags.measure(zeros(2), ZH)) == []  # silent: no loudness, nothing inside


# -- the step cap ----------------------------------------------------------------------------
def test_cap_fires_only_at_the_cap_without_eos_and_with_real_weights() -> None:
    m = Measures(2.0, 10, "zh", -25.0, 0.0, 0, True)
    assert kinds(m, steps=100, cap=100, ended_by_eos=False) == ["cap"]
    assert kinds(m, steps=101, cap=100, ended_by_eos=False) == ["cap"]
    assert kinds(m, steps=99, cap=100, ended_by_eos=False) == []
    assert kinds(m, steps=100, cap=100, ended_by_eos=True) == []
    assert kinds(m, steps=100, cap=100, ended_by_eos=False, random_weights=True) == []
    (cap,) = flags.flags_for(
        m, Norms(), steps=100, cap=100, ended_by_eos=False, random_weights=False
    )
    assert cap.sentence.params == {"cap": "100"}


# The kinds reading.take_flags adds from a take's checks (core/asr, core/speaker), not flags_for.
FROM_CHECKS = ("asr", "voice")


def test_flags_come_in_a_fixed_order() -> None:
    norms = Norms({"zh": Rate(0.22, 0.01)}, -25.0)
    slow = Measures(8.0, 10, "zh", -5.0, 2.5, 40, False)  # every flag there is, but "short"
    assert kinds(slow, norms, steps=100, ended_by_eos=False) == [
        k for k in KINDS if k not in ("short", *FROM_CHECKS)
    ]
    fast = Measures(0.5, 10, "zh", -45.0, 2.5, 40, False)
    assert kinds(fast, norms, steps=100, ended_by_eos=False) == [
        k for k in KINDS if k not in ("long", *FROM_CHECKS)
    ]


# -- JSON ------------------------------------------------------------------------------------
def test_measures_json_round_trip() -> None:
    m = flags.measure(np.concatenate([noise(1, seed=12), zeros(1.5), noise(1, seed=13)]), EN)
    data = json.loads(json.dumps(flags.to_json(m)))
    assert flags.from_json(data) == m
    silent = flags.measure(zeros(1), "")
    assert silent.loudness_db is None
    assert flags.from_json(json.loads(json.dumps(flags.to_json(silent)))) == silent
    # A newer version's extra keys are ignored; whole numbers read as floats.
    newer = {**data, "seconds": 3, "pitch_hz": 180.0, "notes": ["x"]}
    assert flags.from_json(newer) == Measures(3.0, *list(flags.to_json(m).values())[1:])


@pytest.mark.parametrize(
    "change",
    [
        {"seconds": None},
        {"seconds": "2.0"},
        {"seconds": float("nan")},
        {"seconds": -1.0},
        {"spoken": 2.5},
        {"spoken": True},
        {"spoken": -1},
        {"language": 5},
        {"loudness_db": "loud"},
        {"loudness_db": float("inf")},
        {"longest_silence": [1.0]},
        {"clipped": "3"},
        {"finite": "yes"},
        {"finite": 1},
    ],
)
def test_malformed_measures_are_refused(change: dict[str, object]) -> None:
    good = flags.to_json(Measures(2.0, 10, "zh", -25.0, 0.0, 0, True))
    assert flags.from_json(good) == Measures(2.0, 10, "zh", -25.0, 0.0, 0, True)
    with pytest.raises(ValueError):
        flags.from_json({**good, **change})


def test_measures_not_a_dict_or_missing_a_key_are_refused() -> None:
    good = flags.to_json(Measures(2.0, 10, "zh", -25.0, 0.0, 0, True))
    for broken in ([], "measures", None, {k: v for k, v in good.items() if k != "clipped"}):
        with pytest.raises(ValueError):
            flags.from_json(broken)


# -- sentences for the translators -----------------------------------------------------------
def _marked_templates() -> set[str]:
    """The literal templates flags.py marks with QT_TRANSLATE_NOOP("core", ...)."""
    tree = ast.parse(Path(flags.__file__).read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "QT_TRANSLATE_NOOP":
            context, text = node.args
            assert isinstance(context, ast.Constant) and context.value == "core"
            assert isinstance(text, ast.Constant) and isinstance(text.value, str)
            found.add(text.value)
    return found


def test_every_flag_sentence_is_a_marked_template() -> None:
    # The flags' names are marked too: one per kind, each a word or two, not a sentence.
    assert set(flags.FLAG_NAMES) == set(KINDS)
    names = set(flags.FLAG_NAMES.values())
    assert names <= _marked_templates() and len(names) == len(KINDS)
    templates = _marked_templates() - names
    norms = Norms({"zh": Rate(0.22, 0.01)}, -25.0)
    takes = [
        Measures(8.0, 10, "zh", -5.0, 2.5, 40, False),  # long, louder, everything else
        Measures(0.5, 10, "zh", -45.0, 0.0, 0, True),  # short, quieter
    ]
    seen: list[Flag] = []
    for m in takes:
        seen += flags.flags_for(
            m, norms, steps=100, cap=100, ended_by_eos=False, random_weights=False
        )
    assert {f.kind for f in seen} == set(KINDS) - set(FROM_CHECKS)
    # Every marked template is said by some flag (loudness has two: louder, quieter).
    assert {f.sentence.template for f in seen} == templates
    assert len(templates) == (len(KINDS) - len(FROM_CHECKS)) + 1  # loudness has two
    for f in seen:
        assert isinstance(f.sentence, Sentence)
        assert f.sentence.template in templates, f.kind
        assert str(f.sentence) == f.sentence.template.format(**f.sentence.params)
        # No format specs in templates (translators keep placeholders verbatim): the numbers
        # come formatted as strings.
        fields = list(string.Formatter().parse(f.sentence.template))
        assert all(not spec and not conversion for _, _, spec, conversion in fields)
        assert all(isinstance(v, str) for v in f.sentence.params.values())
        # One sentence: it ends with a full stop and has no sentence end inside.
        assert str(f.sentence).endswith(".")
        assert re.search(r"[.!?]\s", str(f.sentence)) is None, f.sentence
