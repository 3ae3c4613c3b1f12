"""How an auditioned candidate's stability reads in its row: the mean similarity of its lines,
marked when a pair falls below the threshold or a demo model scored it, with a tooltip; and the
order that puts the steadiest first.
"""

from chattts_studio.core.services.audition import Candidate
from chattts_studio.core.speaker.encoder import THRESHOLD
from chattts_studio.gui.i18n import translate

DRIFT_MARK = "⚠"  # as the segment editor marks a voice that drifts


def stability_text(candidate: Candidate) -> tuple[str, str]:
    """A rated candidate's score and its tooltip."""
    got = candidate.stability
    demo = (
        translate(
            "Audition", "Demo speaker model (random weights): its scores judge noise, not voices."
        )
        if candidate.stability_demo
        else ""
    )
    if got is None:
        shown = translate("Audition", "stability —")
        why = translate(
            "Audition", "Too little audio to judge: fewer than two of its lines were long enough."
        )
    else:
        shown = translate("Audition", "stability {score:.2f}").format(score=got.mean)
        if got.below:
            shown = f"{shown} {DRIFT_MARK}"
        why = translate(
            "Audition",
            "Mean similarity of its lines: {mean:.2f}\n"
            "Lowest pair: {lowest:.2f}\n"
            "Pairs below {threshold:.2f}: {below} of {pairs}",
        ).format(
            mean=got.mean, lowest=got.lowest, threshold=THRESHOLD, below=got.below, pairs=got.pairs
        )
    if candidate.stability_demo:
        shown = translate("Audition", "{score} (demo)").format(score=shown)
    return shown, "\n".join(line for line in (demo, why) if line)


def steadiness(candidate: Candidate) -> float:
    """The sort key that puts the steadiest first: the highest mean similarity, then the
    candidates too short to judge, then those never rated."""
    if not candidate.rated:
        return 2.0
    return 1.0 if candidate.stability is None else -candidate.stability.mean
