"""Changes to a project that need no model: segments picked, locked, cut in two, joined or
given another voice. Each runs under the project's lock and is saved as it is made; a locked or
unknown segment is one sentence and the project is left as it was. Segments are named by their
1-based numbers, as users see them ("3,7-9")."""

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from chattts_studio.core.asr.score import AsrCheck
from chattts_studio.core.errors import BadSettingError
from chattts_studio.core.messages import QT_TRANSLATE_NOOP, Sentence
from chattts_studio.core.project import writer
from chattts_studio.core.project.model import Project, Segment, Take
from chattts_studio.core.project.store import ProjectError
from chattts_studio.core.text.prepare import check_text
from chattts_studio.core.voices.voice import Voice


def segment_numbers(spec: str | Sequence[int], count: int) -> list[int]:
    """Segment numbers as a person writes them ('3,7-9') or as numbers, each checked to be
    one of the project's 1..count (BadSettingError, one sentence, when not)."""
    if isinstance(spec, str):
        return parse_numbers(spec, count)
    numbers: list[int] = []
    for number in spec:
        if not 1 <= number <= count:
            raise _no_segment(str(number), count)
        if number not in numbers:
            numbers.append(number)
    return numbers


def _no_segment(part: str, count: int) -> BadSettingError:
    return BadSettingError(
        Sentence(
            QT_TRANSLATE_NOOP(
                "core", "There is no segment {part}: the project has segments 1 to {count}."
            ),
            part=part,
            count=str(count),
        )
    )


def parse_numbers(spec: str, count: int) -> list[int]:
    """'3,7-9' -> [3, 7, 8, 9] (1-based segment numbers); BadSettingError, one sentence, for
    anything else or a number outside 1..count."""
    numbers: list[int] = []
    for part in spec.split(","):
        part = part.strip()
        first, dash, last = part.partition("-")
        try:
            low = int(first)
            high = int(last) if dash else low
        except ValueError:
            raise BadSettingError(
                Sentence(
                    QT_TRANSLATE_NOOP(
                        "core", "'{spec}' is not a list of segments; write them like 3,7-9."
                    ),
                    spec=spec,
                )
            ) from None
        if not 1 <= low <= high <= count:
            raise _no_segment(part, count)
        numbers.extend(n for n in range(low, high + 1) if n not in numbers)
    return numbers


MAX_TAKES = 16  # takes of one segment in one command (each is a row of the batch)
MAX_TRIES = 20  # re-rolls of one segment until it is clean: past this, the text is the problem


def check_takes(count: int) -> None:
    if not 1 <= count <= MAX_TAKES:
        raise BadSettingError(
            Sentence(
                QT_TRANSLATE_NOOP("core", "Make from 1 to {most} takes of a segment at a time."),
                most=str(MAX_TAKES),
            )
        )


def refuse_locked(project: Project, numbers: list[int]) -> None:
    locked = [str(n) for n in numbers if project.at(n).locked]
    if locked:
        raise ProjectError(
            Sentence(
                QT_TRANSLATE_NOOP("core", "Segment {numbers} is locked; unlock it first."),
                numbers=", ".join(locked),
            )
        )


def pick(path: Path, number: int, take_id: int) -> None:
    """Take `take_id` chosen for segment `number` by hand (automatic choices never replace
    it)."""
    with writer.opened(path) as handle:
        project = handle.project
        segment = project.at(parse_numbers(str(number), len(project.segments))[0])
        _take_of(segment, number, take_id)
        refuse_locked(project, [number])
        segment.chosen, segment.picked = take_id, True
        handle.save()


def mark_reference(path: Path, number: int, take_id: int | None = None) -> int:
    """Take `take_id` of segment `number` (its chosen take by default) becomes its voice's
    reference for the voice check, in place of any other take of that voice; the take id."""
    with writer.opened(path) as handle:
        project = handle.project
        segment = project.at(parse_numbers(str(number), len(project.segments))[0])
        take_id = segment.chosen if take_id is None else take_id
        if take_id is None:
            raise ProjectError(
                Sentence(
                    QT_TRANSLATE_NOOP("core", "Segment {number} has no take to mark yet."),
                    number=str(number),
                )
            )
        _take_of(segment, number, take_id)
        for other in project.segments:
            if other.voice.key() == segment.voice.key():
                other.reference = None
        segment.reference = take_id
        handle.save()
        return take_id


def set_locked(path: Path, spec: str, locked: bool) -> list[int]:
    with writer.opened(path) as handle:
        project = handle.project
        numbers = parse_numbers(spec, len(project.segments))
        for number in numbers:
            project.at(number).locked = locked
        handle.save()
        return numbers


def _changeable(project: Project, spec: str) -> list[int]:
    numbers = parse_numbers(spec, len(project.segments))
    refuse_locked(project, numbers)
    return numbers


def split(path: Path, number: int, at: int) -> None:
    """Segment `number` cut in two after its first `at` characters (1 to its length - 1),
    both to be made again: the first keeps its takes (stale now, never lost), the second has none
    yet and comes after the project's pause."""
    with writer.opened(path) as handle:
        project = handle.project
        index = _changeable(project, str(number))[0] - 1
        segment = project.segments[index]
        head, tail = segment.text[:at].strip(), segment.text[at:].strip()
        if not 0 < at < len(segment.text) or not head or not tail:
            raise BadSettingError(
                Sentence(
                    QT_TRANSLATE_NOOP(
                        "core",
                        "Segment {number} has {count} characters: keep from 1 to {last} in "
                        "its first part.",
                    ),
                    number=str(number),
                    count=str(len(segment.text)),
                    last=str(max(1, len(segment.text) - 1)),
                )
            )
        check_text(head)
        check_text(tail)
        second = project.new_segment(
            tail, segment.voice, speaker=segment.speaker, pause_before=project.pause
        )
        segment.text, segment.picked = head, False
        project.segments.insert(index + 1, second)
        handle.save()


def merge(path: Path, number: int) -> None:
    """Segment `number` and the next made one: their texts joined, every take of both kept
    (stale now) under the first's id, the first's chosen take still chosen."""
    with writer.opened(path) as handle:
        project = handle.project
        index = _changeable(project, f"{number}-{number + 1}")[0] - 1
        first, second = project.segments[index], project.segments[index + 1]
        gap = " " if first.text[-1:].isascii() and second.text[:1].isascii() else ""
        first.text = f"{first.text}{gap}{second.text}"
        first.picked = False
        for take in second.takes:  # their files keep their names: only the ids move
            first.takes.append(replace(take, id=first.next_take_id()))
        if first.chosen is None and first.takes:
            first.chosen = first.takes[0].id
        del project.segments[index + 1]
        handle.save()


def set_voice(path: Path, spec: str, voice: Voice, speaker: str = "") -> list[int]:
    """The segments `spec` names read by `voice` (a library speaker's `speaker` name) from
    now on; their takes stay (stale: another voice read them)."""
    with writer.opened(path) as handle:
        project = handle.project
        numbers = _changeable(project, spec)
        for number in numbers:
            segment = project.at(number)
            segment.voice, segment.speaker, segment.picked = voice, speaker, False
        handle.save()
        return numbers


def set_check(path: Path, number: int, take_id: int, check: AsrCheck) -> None:
    """Keep what speech recognition heard in take `take_id` of segment `number` (core/asr),
    replacing an earlier check of it. A locked segment's takes may be checked: a check
    changes no audio and no choice."""
    with writer.opened(path) as handle:
        segment = handle.project.at(parse_numbers(str(number), len(handle.project.segments))[0])
        take = _take_of(segment, number, take_id)
        segment.takes[segment.takes.index(take)] = replace(take, asr=check)
        handle.save()


def _take_of(segment: Segment, number: int, take_id: int) -> Take:
    take = segment.take(take_id)
    if take is None:
        raise ProjectError(
            Sentence(
                QT_TRANSLATE_NOOP("core", "Segment {number} has no take {take}."),
                number=str(number),
                take=str(take_id),
            )
        )
    return take
