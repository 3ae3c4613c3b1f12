"""A take's voice check as a project keeps it: its similarity to the voice's reference, the
reference, the threshold and rule that judged it, the model and the flag it raises. The threshold
is kept with each check.
"""

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass, replace
from typing import Any, TypeVar

from chattts_studio.core.messages import QT_TRANSLATE_NOOP, Sentence
from chattts_studio.core.speaker.encoder import THRESHOLD
from chattts_studio.core.speaker.spread import RULE_FIXED, RULE_SPREAD, RULES, SPREAD, SpreadRule

# What a reference can be, as a check records it (the window and `project list` say them).
REFERENCE_TAKE = "take"  # a take the user marked as the voice's reference
REFERENCE_RECORDING = "recording"  # the cloned voice's recording in the speaker library
REFERENCE_PREVIEW = "preview"  # the speaker library's preview clip of the voice
REFERENCE_TYPICAL = "typical"  # the voice's take most like its other takes (none marked)
REFERENCES = (REFERENCE_TAKE, REFERENCE_RECORDING, REFERENCE_PREVIEW, REFERENCE_TYPICAL)


@dataclass(frozen=True)
class VoiceCheck:
    """One take against its voice's reference. `reference` is one of REFERENCES and
    `reference_id` what it was exactly (a take as "segment-id/take-id", a file name), so a new
    reference makes the old checks out of date. `rule` says what judged it: RULE_FIXED (the
    threshold) or RULE_SPREAD (`limit`, from the `takes` checked against the same reference)."""

    similarity: float
    threshold: float
    reference: str
    reference_id: str
    model: str = ""
    demo: bool = False
    rule: str = RULE_FIXED
    limit: float | None = None
    takes: int = 0

    @property
    def bound(self) -> float:
        """The lowest similarity its rule calls the same voice."""
        return self.limit if self.rule == RULE_SPREAD and self.limit is not None else self.threshold

    @property
    def same(self) -> bool:
        return self.similarity >= self.bound

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @staticmethod
    def from_json(value: Any) -> "VoiceCheck | None":
        """A check from project JSON; None when there is none or it does not read (damaged:
        checking again makes it; the take itself is whole)."""
        if not isinstance(value, dict):
            return None
        try:
            got = VoiceCheck(
                similarity=_number(value.get("similarity")),
                threshold=_number(value.get("threshold")),
                reference=str(value["reference"]),
                reference_id=_short(value.get("reference_id", "")),
                model=_short(value.get("model", "")),
                demo=value.get("demo") is True,
                rule=str(value.get("rule", RULE_FIXED)),  # a check saved before rules: fixed
                limit=None if value.get("limit") is None else _number(value.get("limit")),
                takes=_count(value.get("takes", 0)),
            )
        except (KeyError, TypeError, ValueError):
            return None
        if got.rule == RULE_SPREAD and got.limit is None:
            return None
        return got if got.reference in REFERENCES and got.rule in RULES else None


Key = TypeVar("Key")


def judged(
    checks: Mapping[Key, VoiceCheck],
    names: Mapping[Key, str],
    rule: SpreadRule = SPREAD,
) -> dict[Key, VoiceCheck]:
    """Every check judged again by the rule that fits its voice: the checks made against one
    reference (at one threshold, by one model) are one voice's takes; with `rule.min_takes`
    of them or more (the reference take counted), each is judged by their spread, else by
    the fixed threshold. `names` gives each check's take as a reference_id names it
    ("segment-id/take-id"), so the reference's own check stays out of the spread. Checks made
    at a threshold other than the default keep it: the user tuned it, and it judges."""
    groups: dict[tuple[str, str, str, float, bool], list[Key]] = {}
    for key, check in checks.items():
        group = (check.reference, check.reference_id, check.model, check.threshold, check.demo)
        groups.setdefault(group, []).append(key)
    out: dict[Key, VoiceCheck] = {}
    for (_, reference_id, _, threshold, _), keys in groups.items():
        pool = [checks[k].similarity for k in keys if names.get(k) != reference_id]
        counted = len(pool) + (len(pool) < len(keys))  # the reference take, when checked
        limit = rule.limit(pool) if counted >= rule.min_takes else None
        if threshold != THRESHOLD:  # a threshold the user chose is the rule they chose
            limit = None
        for key in keys:
            if limit is None:
                out[key] = replace(checks[key], rule=RULE_FIXED, limit=None, takes=counted)
            else:
                out[key] = replace(checks[key], rule=RULE_SPREAD, limit=limit, takes=counted)
    return out


def voice_flag(check: VoiceCheck) -> Sentence | None:
    """The sentence the segment editor shows when the take's voice drifted from its
    reference, naming the rule that said so; None when its rule calls it the same voice."""
    if check.same:
        return None
    if check.rule == RULE_SPREAD:
        said = Sentence(
            QT_TRANSLATE_NOOP(
                "core",
                "The voice drifts from its reference more than this voice's {takes} takes do "
                "(spread rule): similarity {score} is below {limit}.",
            ),
            takes=str(check.takes),
            score=f"{check.similarity:.2f}",
            limit=f"{check.bound:.2f}",
        )
    else:
        said = Sentence(
            QT_TRANSLATE_NOOP(
                "core",
                "The voice drifts from its reference: similarity {score} is below {threshold}.",
            ),
            score=f"{check.similarity:.2f}",
            threshold=f"{check.threshold:.2f}",
        )
    if check.demo:
        said = Sentence(
            QT_TRANSLATE_NOOP(
                "core", "{reason} The demo speaker model (random weights) judged it: noise."
            ),
            reason=said,
        )
    return said


def _number(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ValueError("not a number")
    if not -1.0 <= float(value) <= 1.0:
        raise ValueError("out of range")
    return float(value)


def _count(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 10_000_000:
        raise ValueError("not a count")
    return value


def _short(value: Any, limit: int = 4_096) -> str:
    if not isinstance(value, str) or len(value) > limit:
        raise ValueError("not a short text")
    return value
