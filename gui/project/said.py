"""What the segment editor says on the status line when a job or a change is done: the right
verb for each kind of job (a check makes no takes), which recogniser listened, and what a pick
or a lock did."""

from chattts_studio.gui.common.notices import figure, plural
from chattts_studio.gui.i18n import translate

HEARING = ("check", "clean", "best")  # the jobs that run speech recognition


def working(action: str, detail: str = "") -> str:
    """The status line while a job runs (`detail`: its progress, "3 of 7 takes checked", as
    the live panel says it)."""
    if detail:
        return translate("Projects", "{detail}  (Esc cancels)").format(detail=detail)
    if action == "check":
        return translate("Projects", "Hearing takes…  (Esc cancels)")
    return translate("Projects", "Making takes…  (Esc cancels)")


def finished(action: str, count: int, seconds: float, demo: bool) -> str:
    """A job's end: `count` takes checked (a check) or made (anything else) in `seconds`, and,
    when the demo recogniser listened (`demo`), that its hearing is not real."""
    takes, time = plural(count, "take"), figure(seconds, ".1f")
    if action == "check":
        said = translate("Projects", "{takes} checked in {seconds} s.")
    elif action in HEARING:
        said = translate("Projects", "{takes} made in {seconds} s; every take heard.")
    else:
        said = translate("Projects", "{takes} made in {seconds} s.")
    said = said.format(takes=takes, seconds=time)
    if action in HEARING and demo:
        said += " " + translate(
            "Projects",
            "Heard by the demo recogniser (random weights): not a real hearing.",
        )
    return said


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
