"""The devtool's split measure on embeddings built to shape (no audio): the two sets share no
variant, a trial's impostor is counted as a false accept only when its rule passes it, and a
near voice that the fixed threshold lets through is caught by the spread of steady takes."""

import numpy as np

from chattts_studio.core.devtools.voicesplit import (
    TAKE_COUNTS,
    VARIANTS,
    fixed_threshold,
    language_pairs,
    rule_errors,
    split_voices,
    trials,
)
from chattts_studio.core.speaker.spread import SpreadRule

RNG = np.random.default_rng(3)


def _voice(centre: np.ndarray, spread: float, count: int = 12) -> np.ndarray:
    takes = centre + spread * RNG.standard_normal((count, len(centre)))
    return takes / np.linalg.norm(takes, axis=1, keepdims=True)


def test_the_sets_share_no_variant_and_each_language_has_every_voice_of_its_set() -> None:
    sets = split_voices(VARIANTS)
    variants = {name: {v.split("+")[1] for v in s["en"] + s["zh"]} for name, s in sets.items()}
    assert not variants["calibrate"] & variants["held_out"]
    assert len(sets["held_out"]["en"]) == len(sets["held_out"]["zh"]) == len(VARIANTS) // 2


def test_a_near_voice_passes_the_fixed_threshold_and_not_the_spread() -> None:
    base = RNG.standard_normal(192)
    other = RNG.standard_normal(192)
    near = base + 0.75 * other  # about 0.8 like the first voice
    voices = {"a": _voice(base, 0.012), "b": _voice(near, 0.012)}
    found = trials(voices, ["a", "b"])
    assert len(found.takes) == 2 * len(TAKE_COUNTS) * 2  # per voice, count, other: clean + one
    fixed = rule_errors(found, None, 0.73)
    spread = rule_errors(found, SpreadRule(min_takes=3), 0.73)
    assert fixed["false_accept"] == 1.0 and fixed["false_reject"] == 0.0
    assert spread["false_accept"] == 0.0 and spread["false_reject"] == 0.0
    only = found.only(5)
    assert set(only.takes) == {5} and len(only.own) == 2 * 4  # each clean trial: 4 own but medoid
    same, different = language_pairs(voices, ["a", "b"])
    assert len(same) == 2 * 66 and len(different) == 144
    assert fixed_threshold({"en": (same, different)}) > float(different.max())
