"""What the segment editor says on the status line when a job or a change is done: the right
verb for each kind of job (a check makes no takes), which recogniser listened or which speaker
model compared voices, and what a pick, a lock or a new voice reference did."""

from chattts_studio.core.services.project_job import (
    HearJob,
    ProjectJob,
    VoiceJob,
    compares_voices,
    hears,
)
from chattts_studio.gui.common.notices import figure, plural
from chattts_studio.gui.i18n import core_text, translate


def working(job: ProjectJob, detail: str = "") -> str:
    """The status line while a job runs (`detail`: its progress, "3 of 7 takes checked", as
    the live panel says it)."""
    if detail:
        return translate("Projects", "{detail}  (Esc cancels)").format(detail=detail)
    if isinstance(job, HearJob):
        return translate("Projects", "Hearing takes…  (Esc cancels)")
    if isinstance(job, VoiceJob):
        return translate("Projects", "Comparing voices…  (Esc cancels)")
    return translate("Projects", "Making takes…  (Esc cancels)")


def finished(
    job: ProjectJob,
    count: int,
    seconds: float,
    demo: bool,
    voice_demo: bool = False,
    skipped: tuple[str, ...] = (),
) -> str:
    """A job's end: `count` takes checked (a check) or made (anything else) in `seconds`, and,
    when the demo recogniser listened (`demo`), that its hearing is not real; when the job
    compared voices, with the demo speaker model when `voice_demo`; `skipped`: why takes were
    left out of the voice check (the first reason is said)."""
    takes, time = plural(count, "take"), figure(seconds, ".1f")
    voice, hearing = compares_voices(job), hears(job)
    if isinstance(job, HearJob):
        said = translate("Projects", "{takes} checked in {seconds} s.")
    elif isinstance(job, VoiceJob):
        said = translate("Projects", "Voices of {takes} compared in {seconds} s.")
    elif hearing and voice:
        said = translate(
            "Projects", "{takes} made in {seconds} s; every take heard and its voice compared."
        )
    elif hearing:
        said = translate("Projects", "{takes} made in {seconds} s; every take heard.")
    else:
        said = translate("Projects", "{takes} made in {seconds} s.")
    said = said.format(takes=takes, seconds=time)
    if hearing and demo:
        said += " " + translate(
            "Projects",
            "Heard by the demo recogniser (random weights): not a real hearing.",
        )
    if voice and voice_demo:
        said += " " + translate(
            "Projects",
            "Compared by the demo speaker model (random weights): its similarities judge noise.",
        )
    if skipped:
        said += " " + translate("Projects", "{takes} not compared: {reason}").format(
            takes=plural(len(skipped), "take"), reason=core_text(skipped[0])
        )
    return said


def reference(number: int, place: int) -> str:
    """What marking a take as its voice's reference did."""
    return translate(
        "Projects",
        "Segment {number}: take {take} is its voice's reference; Check voices compares the "
        "voice's other takes with it.",
    ).format(number=number, take=place)


def picked(number: int, place: int) -> str:
    return translate("Projects", "Segment {number}: take {take} picked.").format(
        number=number, take=place
    )


def locked(numbers: list[int], locked: bool) -> str:
    """What a lock or an unlock of segments `numbers` did."""
    if len(numbers) == 1:
        if locked:
            said = translate("Projects", "Segment {numbers} locked: its take will not be remade.")
        else:
            said = translate(
                "Projects", "Segment {numbers} unlocked: re-rolls may make new takes of it."
            )
    elif locked:
        said = translate("Projects", "Segments {numbers} locked: their takes will not be remade.")
    else:
        said = translate(
            "Projects", "Segments {numbers} unlocked: re-rolls may make new takes of them."
        )
    return said.format(numbers=", ".join(str(n) for n in numbers))
