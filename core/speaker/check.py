"""A take's voice check as a project keeps it: its similarity to its voice's reference, what
the reference was, the threshold in force and the model, and the flag it raises below it.

The threshold is kept with each check (`project check --voice --threshold`), so a user who tunes
it sees flags that match the number they chose; the model's name says when it was the demo's
random weights (its scores judge noise)."""

import math
from dataclasses import asdict, dataclass
from typing import Any

from chattts_studio.core.messages import QT_TRANSLATE_NOOP, Sentence

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
    reference makes the old checks out of date."""

    similarity: float
    threshold: float
    reference: str
    reference_id: str
    model: str = ""
    demo: bool = False

    @property
    def same(self) -> bool:
        return self.similarity >= self.threshold

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
            )
        except (KeyError, TypeError, ValueError):
            return None
        return got if got.reference in REFERENCES else None


def voice_flag(check: VoiceCheck) -> Sentence | None:
    """The sentence the segment editor shows when the take's voice drifted from its
    reference; None when it is the same voice at the check's threshold."""
    if check.same:
        return None
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


def _short(value: Any, limit: int = 4_096) -> str:
    if not isinstance(value, str) or len(value) > limit:
        raise ValueError("not a short text")
    return value
