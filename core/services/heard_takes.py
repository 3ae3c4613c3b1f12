"""Takes chosen by what speech recognition heard (core/asr) and, when asked, by the voice check
(core/speaker): re-roll the flagged segments until they are clean, and best of N (every segment
topped up to N current takes, every take checked once, the best chosen by best_by_check's rule).
Every take made is kept and checked; a segment picked by hand or locked keeps its take."""

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from chattts_studio.core.engine.cancel import CancelToken
from chattts_studio.core.errors import BadSettingError
from chattts_studio.core.messages import QT_TRANSLATE_NOOP, Sentence
from chattts_studio.core.project import store, writer
from chattts_studio.core.project.edits import MAX_TRIES, check_takes
from chattts_studio.core.project.model import Project, Segment, Take
from chattts_studio.core.project.reading import Lexicon, flagged_numbers, take_flags
from chattts_studio.core.services.project import Progress, reroll

if TYPE_CHECKING:
    from chattts_studio.core.asr.recognizer import Recognizer
    from chattts_studio.core.engine.engine import Engine
    from chattts_studio.core.services.project_check import VoiceRun
    from chattts_studio.core.speaker.encoder import SpeakerEncoder

VoiceChecker = Callable[[Path, str, CancelToken], "VoiceRun"]  # (project, segments, cancel)


def voice_checker(
    encoder: "SpeakerEncoder", threshold: float, clips: dict[str, tuple[str, Path]]
) -> VoiceChecker:
    """The voice check the loops below run after each round: every take not checked against
    today's reference yet, in the segments named."""
    from chattts_studio.core.services.project_check import check_voices

    def check(path: Path, spec: str, cancel: CancelToken) -> "VoiceRun":
        return check_voices(path, encoder, spec, True, cancel, None, True, threshold, clips)

    return check


def _check(
    path: Path,
    recognizer: "Recognizer | None",
    voices: VoiceChecker | None,
    spec: str,
    cancel: CancelToken,
) -> None:
    from chattts_studio.core.services.project_check import check_project

    if recognizer is not None:
        check_project(path, recognizer, spec, all_takes=True, cancel=cancel, unchecked_only=True)
    if voices is not None:
        voices(path, spec, cancel)


def reroll_until_clean(
    engine: "Engine",
    path: Path,
    recognizer: "Recognizer | None",
    max_tries: int,
    seed: int | None = None,
    cancel: CancelToken | None = None,
    progress: Progress | None = None,
    lexicon: Lexicon = (),
    voices: VoiceChecker | None = None,
) -> dict[int, int]:
    """Re-roll the flagged segments (speech recognition's flag and, with `voices`, the voice
    check's included) one take at a time until they are clean or have had `max_tries` new
    takes each: every take is kept and checked, and each segment not picked by hand ends on
    its best take (best_by_check). The tries each segment took, by segment number."""
    if not 1 <= max_tries <= MAX_TRIES:
        raise BadSettingError(
            Sentence(
                QT_TRANSLATE_NOOP("core", "Tries must be between 1 and {most}."),
                most=str(MAX_TRIES),
            )
        )
    token = cancel or CancelToken()
    tries: dict[int, int] = {}
    _check(path, recognizer, voices, "", token)
    for attempt in range(max_tries):
        left = flagged_numbers(store.load(path))
        if not left:
            break
        base = None if seed is None else seed + attempt
        numbers = reroll(engine, path, ",".join(map(str, left)), 1, False, base, None, token,
                         progress, lexicon)  # fmt: skip
        for number in numbers:
            tries[number] = tries.get(number, 0) + 1
        _check(path, recognizer, voices, ",".join(map(str, numbers)), token)
        with writer.opened(path) as handle:
            best_by_check(handle.project, [handle.project.at(n) for n in numbers])
            handle.save()
    return tries


def best_by_check(project: Project, segments: Iterable[Segment]) -> None:
    """For each segment not picked by hand or locked: of its current takes (not stale), the
    one with the fewest flags (the checks' flags included), then the lowest cost (take_cost),
    then the earliest, becomes the chosen one ("Best of N")."""
    found = take_flags(project)
    for segment in segments:
        if segment.picked or segment.locked:
            continue
        pool = [t for t in segment.takes if segment.current(t)]
        if pool:
            heard = any(t.asr is not None for t in pool)
            voiced = any(t.voice_check is not None for t in pool)
            best = min(
                pool,
                key=lambda t: (len(found[(segment.id, t.id)]), take_cost(t, heard, voiced), t.id),
            )
            segment.chosen = best.id


def take_cost(take: Take, heard: bool, voiced: bool) -> float:
    """Text and voice weighed together: the speech recognition error rate (0: every word
    heard as written) plus the voice's distance from its reference (1 - similarity: 0 for the
    reference itself). A check its pool has and it lacks counts as the worst."""
    cost = 0.0
    if heard:
        cost += float("inf") if take.asr is None else take.asr.score
    if voiced:
        cost += 2.0 if take.voice_check is None else 1.0 - take.voice_check.similarity
    return cost


def best_of(
    engine: "Engine",
    path: Path,
    recognizer: "Recognizer | None",
    takes: int,
    seed: int | None = None,
    cancel: CancelToken | None = None,
    progress: Progress | None = None,
    lexicon: Lexicon = (),
    voices: VoiceChecker | None = None,
) -> int:
    """Best of N: each segment not locked gets new takes until it has `takes` current ones
    (takes of an older text do not count), every take not checked yet is checked (heard by
    `recognizer`, compared by `voices`), and each segment not picked by hand ends on its best
    take (best_by_check). The takes made."""
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
    _check(path, recognizer, voices, "", token)
    with writer.opened(path) as handle:
        best_by_check(handle.project, handle.project.segments)
        handle.save()
    return made
