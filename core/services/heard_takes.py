"""Takes chosen by what speech recognition heard (core/asr): re-roll the flagged segments until
they are clean, and best of N (every segment topped up to N current takes, every take heard
once, the lowest error chosen). Every take made is kept and checked; a segment picked by hand or
locked keeps its take."""

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from chattts_studio.core.engine.cancel import CancelToken
from chattts_studio.core.errors import BadSettingError
from chattts_studio.core.messages import QT_TRANSLATE_NOOP, Sentence
from chattts_studio.core.project import store, writer
from chattts_studio.core.project.edits import MAX_TRIES, check_takes
from chattts_studio.core.project.model import Project, Segment
from chattts_studio.core.project.reading import Lexicon, flagged_numbers, take_flags
from chattts_studio.core.services.project import Progress, reroll

if TYPE_CHECKING:
    from chattts_studio.core.asr.recognizer import Recognizer
    from chattts_studio.core.engine.engine import Engine


def reroll_until_clean(
    engine: "Engine",
    path: Path,
    recognizer: "Recognizer",
    max_tries: int,
    seed: int | None = None,
    cancel: CancelToken | None = None,
    progress: Progress | None = None,
    lexicon: Lexicon = (),
) -> dict[int, int]:
    """Re-roll the flagged segments (speech recognition's flag included) one take at a time
    until they are clean or have had `max_tries` new takes each: every take is kept and
    checked, and each segment not picked by hand ends on its best take (best_by_check). The
    tries each segment took, by segment number."""
    from chattts_studio.core.services.project_check import check_project

    if not 1 <= max_tries <= MAX_TRIES:
        raise BadSettingError(
            Sentence(
                QT_TRANSLATE_NOOP("core", "Tries must be between 1 and {most}."),
                most=str(MAX_TRIES),
            )
        )
    token = cancel or CancelToken()
    tries: dict[int, int] = {}
    check_project(path, recognizer, all_takes=True, cancel=token, unchecked_only=True)
    for attempt in range(max_tries):
        left = flagged_numbers(store.load(path))
        if not left:
            break
        base = None if seed is None else seed + attempt
        numbers = reroll(engine, path, ",".join(map(str, left)), 1, False, base, None, token,
                         progress, lexicon)  # fmt: skip
        for number in numbers:
            tries[number] = tries.get(number, 0) + 1
        spec = ",".join(map(str, numbers))
        check_project(path, recognizer, spec, all_takes=True, cancel=token, unchecked_only=True)
        with writer.opened(path) as handle:
            best_by_check(handle.project, [handle.project.at(n) for n in numbers])
            handle.save()
    return tries


def best_by_check(project: Project, segments: Iterable[Segment]) -> None:
    """For each segment not picked by hand or locked: of its current takes (not stale), the
    one with the fewest flags, then the lowest speech recognition error (unchecked last),
    then the earliest, becomes the chosen one ("Best of N")."""
    found = take_flags(project)
    for segment in segments:
        if segment.picked or segment.locked:
            continue
        pool = [t for t in segment.takes if segment.current(t)]
        if pool:
            best = min(
                pool,
                key=lambda t: (
                    len(found[(segment.id, t.id)]),
                    float("inf") if t.asr is None else t.asr.score,
                    t.id,
                ),
            )
            segment.chosen = best.id


def best_of(
    engine: "Engine",
    path: Path,
    recognizer: "Recognizer",
    takes: int,
    seed: int | None = None,
    cancel: CancelToken | None = None,
    progress: Progress | None = None,
    lexicon: Lexicon = (),
) -> int:
    """Best of N: each segment not locked gets new takes until it has `takes` current ones
    (takes of an older text do not count), every take not heard yet is checked, and each
    segment not picked by hand ends on its best take (best_by_check). The takes made."""
    from chattts_studio.core.services.project_check import check_project

    check_takes(takes)
    token = cancel or CancelToken()
    project = store.load(path)
    short: dict[int, list[int]] = {}  # takes missing -> segment numbers
    for number, segment in enumerate(project.segments, 1):
        have = sum(1 for t in segment.takes if segment.current(t))
        if not segment.locked and have < takes:
            short.setdefault(takes - have, []).append(number)
    made = 0
    for missing, numbers in sorted(short.items()):
        reroll(engine, path, ",".join(map(str, numbers)), missing, False, seed, None, token,
               progress, lexicon)  # fmt: skip
        made += missing * len(numbers)
    check_project(path, recognizer, all_takes=True, cancel=token, unchecked_only=True)
    with writer.opened(path) as handle:
        best_by_check(handle.project, handle.project.segments)
        handle.save()
    return made
