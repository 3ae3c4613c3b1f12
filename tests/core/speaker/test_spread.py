"""The voice check's two rules, on embeddings built to known similarities: with enough takes a
voice is judged by its own takes' spread, so a steady voice catches a near voice that the
fixed threshold passes and a wandering voice keeps a take the fixed threshold would flag; with
too few the fixed threshold judges. Every verdict names its rule, in the record and the flag."""

import numpy as np
import pytest

from chattts_studio.core.speaker.check import (
    REFERENCE_TYPICAL,
    VoiceCheck,
    judged,
    voice_flag,
)
from chattts_studio.core.speaker.encoder import THRESHOLD
from chattts_studio.core.speaker.spread import (
    MIN_TAKES,
    RULE_FIXED,
    RULE_SPREAD,
    judge_takes,
)

DIMENSION = 192  # CAM++'s embedding


def voice(similarities: list[float]) -> list[np.ndarray]:
    """A centre take and one take per similarity, each exactly that like the centre (the
    others lie in their own orthogonal directions), so the centre is the medoid."""
    basis = np.eye(DIMENSION)
    takes = [basis[0]]
    for i, s in enumerate(similarities, 1):
        takes.append(s * basis[0] + np.sqrt(1 - s * s) * basis[i])
    return takes


STEADY = [0.95, 0.94, 0.96, 0.93, 0.95, 0.94, 0.96]  # a voice that keeps its timbre
WIDE = [0.70, 0.78, 0.68, 0.74, 0.81, 0.69, 0.76]  # one whose takes wander


def test_a_steady_voice_flags_a_near_voice_that_the_fixed_threshold_passes() -> None:
    near = 0.80  # another voice of the same language (espeak's en-gb+f2 against en-us+m3)
    assert near >= THRESHOLD  # the fixed threshold calls it the same voice
    verdicts = judge_takes(voice([*STEADY, near]))
    assert {v.rule for v in verdicts} == {RULE_SPREAD}
    assert verdicts[-1].similarity == pytest.approx(near)
    assert not verdicts[-1].same and verdicts[-1].limit > near
    assert all(v.same for v in verdicts[:-1])  # its own takes pass


def test_a_wandering_voice_keeps_its_own_take_that_the_fixed_threshold_flags() -> None:
    verdicts = judge_takes(voice(WIDE))
    own = verdicts[3]
    assert own.similarity == pytest.approx(0.68) and own.similarity < THRESHOLD
    assert own.rule == RULE_SPREAD and own.same
    assert all(v.same for v in verdicts)


def test_too_few_takes_are_judged_by_the_fixed_threshold() -> None:
    few = [*STEADY[: MIN_TAKES - 3], 0.80]  # MIN_TAKES - 1 takes with the centre
    verdicts = judge_takes(voice(few))
    assert {v.rule for v in verdicts} == {RULE_FIXED}
    assert all(v.limit == THRESHOLD for v in verdicts) and verdicts[-1].same
    assert not judge_takes(voice([*few[:-1], 0.7]))[-1].same


def _checks(similarities: list[float]) -> dict[str, VoiceCheck]:
    """A voice's checks as a project keeps them: take 1/1 is the typical take (its own check
    is 1.0), the others are takes 2/1, 3/1, ... against it."""
    found = {"1/1": VoiceCheck(1.0, THRESHOLD, REFERENCE_TYPICAL, "1/1", "campplus.onnx")}
    for n, s in enumerate(similarities, 2):
        found[f"{n}/1"] = VoiceCheck(s, THRESHOLD, REFERENCE_TYPICAL, "1/1", "campplus.onnx")
    return found


def test_a_project_s_checks_are_judged_as_their_voice_s_takes_and_say_the_rule() -> None:
    checks = _checks([*STEADY, 0.8])
    got = judged(checks, {key: key for key in checks})
    near = got[f"{len(STEADY) + 2}/1"]
    assert near.rule == RULE_SPREAD and not near.same and near.takes == len(STEADY) + 2
    assert near.limit is not None and near.bound == near.limit > 0.80
    said = voice_flag(near)
    assert said is not None and "spread rule" in said
    assert all(c.same for k, c in got.items() if k != f"{len(STEADY) + 2}/1")
    # The record keeps the rule: written and read back, the verdict is the same.
    again = VoiceCheck.from_json(near.to_json())
    assert again == near and again is not None and not again.same

    few_checks = _checks([0.80, 0.70][: MIN_TAKES - 2])  # one take fewer than the spread needs
    few = judged(few_checks, {key: key for key in few_checks})
    assert {c.rule for c in few.values()} == {RULE_FIXED}
    assert few["2/1"].same  # 0.80: the fixed threshold passes it
    lone = judged(_checks([0.70]), {"1/1": "1/1", "2/1": "2/1"})["2/1"]
    fixed = voice_flag(lone)
    assert lone.rule == RULE_FIXED and fixed is not None
    assert fixed == "The voice drifts from its reference: similarity 0.70 is below 0.73."


def test_a_wandering_voice_s_checks_keep_its_own_take() -> None:
    checks = _checks(WIDE)
    got = judged(checks, {key: key for key in checks})
    assert got["4/1"].similarity < THRESHOLD and got["4/1"].rule == RULE_SPREAD
    assert got["4/1"].same and voice_flag(got["4/1"]) is None


def test_checks_against_other_references_are_other_voices() -> None:
    checks = _checks([*STEADY, 0.8])
    other = {"90/1": VoiceCheck(0.5, THRESHOLD, REFERENCE_TYPICAL, "90/1")}  # its own take
    got = judged(checks | other, {key: key for key in checks | other})
    assert got["90/1"].rule == RULE_FIXED and got["90/1"].takes == 1 and not got["90/1"].same


def test_a_check_saved_before_rules_reads_as_fixed_and_a_damaged_rule_as_none() -> None:
    old = {"similarity": 0.8, "threshold": 0.73, "reference": "typical", "reference_id": "1/1"}
    got = VoiceCheck.from_json(old)
    assert got is not None and got.rule == RULE_FIXED and got.limit is None and got.same
    assert VoiceCheck.from_json(old | {"rule": "spread"}) is None  # a spread without its limit
    assert VoiceCheck.from_json(old | {"rule": "vibes", "limit": 0.9}) is None
    assert VoiceCheck.from_json(old | {"rule": "spread", "limit": 2.0}) is None
    assert VoiceCheck.from_json(old | {"takes": -1}) is None
    spread = VoiceCheck.from_json(old | {"rule": "spread", "limit": 0.85, "takes": 8})
    assert spread is not None and not spread.same and spread.bound == 0.85


def test_a_threshold_the_user_chose_judges_however_many_takes() -> None:
    checks = {
        k: VoiceCheck(c.similarity, 0.82, c.reference, c.reference_id, c.model)
        for k, c in _checks([*WIDE]).items()
    }
    got = judged(checks, {key: key for key in checks})
    assert {c.rule for c in got.values()} == {RULE_FIXED}
    assert not got["4/1"].same and got["4/1"].bound == 0.82  # the spread would keep it
