"""The segment editor's service: a text made into a project of segments with takes, segments
re-rolled, picked, edited, locked, and the chosen takes exported. One function per action, for
the command line and the window alike; each change is saved as soon as it is made.

Seeds: a take's seed comes from the seed the user gave (`--seed`) and the take's place (its
segment's id and its own id), so the same command on the same text makes the same takes; with
no seed given, fresh seeds are drawn. Either way the take records its seed: it can be made
again bit for bit (`remake`).
"""

import secrets
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from chattts_studio.core.engine.cancel import CancelToken
from chattts_studio.core.engine.decode.rowwise import segment_seed
from chattts_studio.core.errors import BadSettingError
from chattts_studio.core.messages import QT_TRANSLATE_NOOP, Sentence
from chattts_studio.core.project import flags, store
from chattts_studio.core.project.model import Maker, Project, Segment, Take, TakeSettings
from chattts_studio.core.project.store import OpenProject, ProjectError
from chattts_studio.core.text.prepare import check_text, split_segments
from chattts_studio.core.voices.voice import Voice

if TYPE_CHECKING:
    from chattts_studio.core.engine.engine import Engine
    from chattts_studio.core.project.takes import MadeTake, Rows

Progress = Callable[[int, int, float], None]  # (takes made, asked, seconds of the last take)


Lexicon = tuple[tuple[str, str], ...]  # pronunciation dictionary entries (word, replacement)


@dataclass(frozen=True)
class Line:
    """A dialogue script's line: its speaker's name and voice, and what they say."""

    speaker: str
    voice: Voice
    text: str


@dataclass(frozen=True)
class NewProject:
    text: str  # the text; ignored when `lines` are given
    voice: Voice
    settings: TakeSettings
    model: str
    segment_size: int = 50
    pause: float = 0.25
    takes: int = 1
    seed: int | None = None
    title: str = ""
    device: str | None = None
    precision: str = "fp32"
    engine: str = "auto"
    lines: tuple[Line, ...] = ()  # a dialogue script: each line's segments keep its speaker
    turn_pause: float = 0.4  # before a line's first segment (a script's)
    lexicon: Lexicon = ()


def take_seed(seed: int, segment_id: int, take_id: int) -> int:
    """A take's seed from the user's seed and the take's place (see the module's note)."""
    return segment_seed(seed, segment_id * 10_007 + take_id) % (2**31)


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
            raise BadSettingError(
                Sentence(
                    QT_TRANSLATE_NOOP(
                        "core", "There is no segment {part}: the project has segments 1 to {count}."
                    ),
                    part=part,
                    count=str(count),
                )
            )
        numbers.extend(n for n in range(low, high + 1) if n not in numbers)
    return numbers


MAX_TAKES = 16  # takes of one segment in one command (each is a row of the batch)


def check_takes(count: int) -> None:
    if not 1 <= count <= MAX_TAKES:
        raise BadSettingError(
            Sentence(
                QT_TRANSLATE_NOOP("core", "Make from 1 to {most} takes of a segment at a time."),
                most=str(MAX_TAKES),
            )
        )


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def spoken(text: str, lexicon: Lexicon) -> str:
    """A segment's text with the pronunciation dictionary applied (what synthesis reads)."""
    if not lexicon:
        return text
    from chattts_studio.core.text.lexicon import Lexicon as Entries

    return Entries(lexicon).apply(text)


def model_text(engine: "Engine", text: str) -> str:
    """What the model reads of a text (numbers read out, as synthesis does)."""
    model = engine.model
    assert model is not None
    return model.normalize(text)


def _maker(engine: "Engine", rows: "Rows") -> Maker:
    from chattts_studio.core.weights.models import weights_identity

    loaded = engine.loaded
    assert loaded is not None
    return Maker(
        weights_identity(loaded.info),
        loaded.engine.value,
        loaded.precision.value,
        loaded.device.id,
        rows.product_rows,
        loaded.info.random_weights,
    )


@dataclass
class _Asked:
    segment: Segment
    take_id: int
    seed: int
    settings: TakeSettings


def _make(
    engine: "Engine",
    handle: OpenProject,
    asked: list[_Asked],
    cancel: CancelToken,
    progress: Progress | None,
    choose: bool,
    lexicon: Lexicon = (),
) -> list[tuple[Segment, Take]]:
    """Make the asked takes as one batch; each saved (audio, then the project) the moment it
    exists, so a kill or a cancel keeps every take already made."""
    from chattts_studio.core.project.takes import TakeOrder, make_takes, rows_for

    if not asked:
        return []
    said = {a.segment.id: spoken(a.segment.text, lexicon) for a in asked}
    texts = {key: model_text(engine, text) for key, text in said.items()}
    orders = [
        TakeOrder(n, texts[a.segment.id], a.segment.voice, a.seed, a.settings)
        for n, a in enumerate(asked)
    ]
    rows = rows_for(engine, len(orders))
    maker = _maker(engine, rows)
    made: list[tuple[Segment, Take]] = []

    def keep(done: "MadeTake") -> None:
        a = asked[done.order.key]
        audio_file = handle.write_take_audio(a.segment, a.take_id, done.audio)
        take = Take(
            id=a.take_id,
            seed=a.seed,
            settings=a.settings,
            maker=maker,
            text=a.segment.text,
            spoken_text=said[a.segment.id],
            model_text=done.order.model_text,
            voice=a.segment.voice.key(),
            audio=audio_file,
            steps=done.steps,
            cap=done.cap,
            eos=done.eos,
            compute_seconds=round(done.compute_seconds, 4),
            measures=flags.measure(done.audio, a.segment.text),
            made_at=_now(),
        )
        a.segment.takes.append(take)
        if a.segment.chosen is None or (choose and not a.segment.picked):
            a.segment.chosen = take.id
        handle.save()
        made.append((a.segment, take))
        if progress is not None:
            progress(len(made), len(asked), take.measures.seconds)

    if progress is not None:
        progress(0, len(asked), 0.0)
    make_takes(engine, orders, cancel, keep, rows)
    return made


def _choose_fewest_flags(
    project: Project, segments: Iterable[Segment], candidates: set[int]
) -> None:
    """For each segment not picked by hand: of its takes in `candidates` (take ids), the one
    with the fewest flags (the first on a tie) becomes the chosen one."""
    found = take_flags(project)
    for segment in segments:
        if segment.picked or segment.locked:
            continue
        pool = [t for t in segment.takes if t.id in candidates]
        if pool:
            best = min(pool, key=lambda t: len(found[(segment.id, t.id)]))
            segment.chosen = best.id


def take_flags(project: Project) -> dict[tuple[int, int], list[flags.Flag]]:
    """Every take's flags, (segment id, take id) -> flags, against the project's norms (made
    from its current takes)."""
    current = [t for s in project.segments for t in s.takes if s.current(t)]
    norms = flags.norms([t.measures for t in current])
    return {
        (s.id, t.id): flags.flags_for(
            t.measures,
            norms,
            steps=t.steps,
            cap=t.cap,
            ended_by_eos=t.eos,
            random_weights=t.maker.random_weights,
        )
        for s in project.segments
        for t in s.takes
    }


def new_project(
    engine: "Engine",
    path: Path,
    spec: NewProject,
    cancel: CancelToken | None = None,
    progress: Progress | None = None,
) -> Path:
    """The text split into segments, `spec.takes` takes each (the fewest-flags one chosen),
    saved in a new project folder at `path`; its folder."""
    token = cancel or CancelToken()
    check_takes(spec.takes)
    title = spec.title or store.project_folder(path).stem
    project = Project(
        title,
        spec.settings,
        spec.model,
        device=spec.device,
        precision=spec.precision,
        engine=spec.engine,
        pause=spec.pause,
    )
    lines = spec.lines or (Line("", spec.voice, spec.text),)
    for line in lines:
        for i, piece in enumerate(_pieces(line, spec.segment_size, spec.lexicon, bool(spec.lines))):
            pause = spec.turn_pause if spec.lines and i == 0 else spec.pause
            segment = project.new_segment(
                piece, line.voice, speaker=line.speaker, pause_before=pause
            )
            project.segments.append(segment)
    project.segments[0].pause_before = 0.0
    base = spec.seed if spec.seed is not None else secrets.randbits(31)
    with store.created(path, project) as handle:
        asked = [
            _Asked(s, n, take_seed(base, s.id, n), spec.settings)
            for s in project.segments
            for n in range(1, spec.takes + 1)
        ]
        made = _make(engine, handle, asked, token, progress, False, spec.lexicon)
        _choose_fewest_flags(project, project.segments, {t.id for _s, t in made})
        handle.save()
        return handle.folder


def _pieces(line: Line, segment_size: int, lexicon: Lexicon, scripted: bool) -> list[str]:
    """A line's segments as the user wrote them (never splitting a dictionary word); a
    script's bad line says whose it is."""
    from chattts_studio.core.errors import BadTextError
    from chattts_studio.core.messages import said
    from chattts_studio.core.text.dialogue import ScriptError
    from chattts_studio.core.text.lexicon import Lexicon as Entries

    entries = Entries(lexicon) if lexicon else None
    try:
        return [p.shown for p in split_segments(check_text(line.text), segment_size, entries)]
    except BadTextError as exc:
        if not scripted:
            raise
        raise ScriptError(
            Sentence(
                QT_TRANSLATE_NOOP("core", "{name}'s line: {problem}"),
                name=line.speaker,
                problem=said(exc),
            )
        ) from None


def refuse_locked(project: Project, numbers: list[int]) -> None:
    locked = [str(n) for n in numbers if project.at(n).locked]
    if locked:
        raise ProjectError(
            Sentence(
                QT_TRANSLATE_NOOP("core", "Segment {numbers} is locked; unlock it first."),
                numbers=", ".join(locked),
            )
        )


def flagged_numbers(project: Project) -> list[int]:
    """The segments whose chosen take has a flag (locked ones left out)."""
    found = take_flags(project)
    return [
        n
        for n, s in enumerate(project.segments, 1)
        if not s.locked and s.chosen is not None and found[(s.id, s.chosen)]
    ]


def reroll(
    engine: "Engine",
    path: Path,
    spec: str | None,
    takes: int = 1,
    flagged: bool = False,
    seed: int | None = None,
    settings: TakeSettings | None = None,
    cancel: CancelToken | None = None,
    progress: Progress | None = None,
    lexicon: Lexicon = (),
    unlocked: bool = False,
) -> list[int]:
    """New takes of the segments `spec` names ('3,7-9'), the flagged ones, or (`unlocked`)
    every one not locked; the earlier
    takes stay, the new (fewest-flags) one becomes the chosen one unless one was picked by
    hand. Only those segments are decoded. The segment numbers re-rolled."""
    token = cancel or CancelToken()
    check_takes(takes)
    with store.opened(path) as handle:
        project = handle.project
        numbers = parse_numbers(spec, len(project.segments)) if spec else []
        refuse_locked(project, numbers)
        if flagged:
            numbers += [n for n in flagged_numbers(project) if n not in numbers]
        if unlocked:
            free = [n for n, s in enumerate(project.segments, 1) if not s.locked]
            numbers += [n for n in free if n not in numbers]
        base = seed if seed is not None else secrets.randbits(31)
        asked = []
        for number in numbers:
            segment = project.at(number)
            first = segment.next_take_id()
            for take_id in range(first, first + takes):
                chosen = settings or project.settings
                asked.append(_Asked(segment, take_id, take_seed(base, segment.id, take_id), chosen))
        made = _make(engine, handle, asked, token, progress, True, lexicon)
        _choose_fewest_flags(project, [s for s, _t in made], {t.id for _s, t in made})
        handle.save()
        return numbers


def pick(path: Path, number: int, take_id: int) -> None:
    """Take `take_id` chosen for segment `number` by hand (automatic choices never replace
    it)."""
    with store.opened(path) as handle:
        project = handle.project
        segment = project.at(parse_numbers(str(number), len(project.segments))[0])
        if segment.take(take_id) is None:
            raise ProjectError(
                Sentence(
                    QT_TRANSLATE_NOOP("core", "Segment {number} has no take {take}."),
                    number=str(number),
                    take=str(take_id),
                )
            )
        refuse_locked(project, [number])
        segment.chosen, segment.picked = take_id, True
        handle.save()


def set_locked(path: Path, spec: str, locked: bool) -> list[int]:
    with store.opened(path) as handle:
        project = handle.project
        numbers = parse_numbers(spec, len(project.segments))
        for number in numbers:
            project.at(number).locked = locked
        handle.save()
        return numbers


def edit(
    engine: "Engine",
    path: Path,
    number: int,
    text: str,
    seed: int | None = None,
    cancel: CancelToken | None = None,
    progress: Progress | None = None,
    lexicon: Lexicon = (),
) -> None:
    """Segment `number` says `text` now: one new take of it is made and chosen; its earlier
    takes stay (stale: they say the old text)."""
    token = cancel or CancelToken()
    check_text(text)
    with store.opened(path) as handle:
        project = handle.project
        index = parse_numbers(str(number), len(project.segments))[0]
        refuse_locked(project, [index])
        segment = project.at(index)
        segment.text, segment.picked = text.strip(), False
        handle.save()
        base = seed if seed is not None else secrets.randbits(31)
        take_id = segment.next_take_id()
        asked = [_Asked(segment, take_id, take_seed(base, segment.id, take_id), project.settings)]
        _make(engine, handle, asked, token, progress, True, lexicon)


def _changeable(project: Project, spec: str) -> list[int]:
    numbers = parse_numbers(spec, len(project.segments))
    refuse_locked(project, numbers)
    return numbers


def split(path: Path, number: int, at: int) -> None:
    """Segment `number` cut in two after its first `at` characters (1 to its length - 1),
    both to be made again: the first keeps its takes (stale now, never lost), the second has none
    yet and comes after the project's pause."""
    with store.opened(path) as handle:
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
    with store.opened(path) as handle:
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
    with store.opened(path) as handle:
        project = handle.project
        numbers = _changeable(project, spec)
        for number in numbers:
            segment = project.at(number)
            segment.voice, segment.speaker, segment.picked = voice, speaker, False
        handle.save()
        return numbers


def remake(engine: "Engine", project: Project, segment: Segment, take: Take) -> np.ndarray:
    """A take made again from its record alone (its model text, voice, seed, settings and row
    count): the same samples when the same model, engine and precision run it."""
    from chattts_studio.core.project.takes import TakeOrder, make_takes, rows_for

    out: list[np.ndarray] = []
    order = TakeOrder(0, take.model_text, segment.voice, take.seed, take.settings)
    rows = rows_for(engine, 1, take.maker.rows)
    make_takes(engine, [order], CancelToken(), lambda done: out.append(done.audio), rows)
    return out[0]


# -- reading ------------------------------------------------------------------------------------
def listing(project: Project, lexicon: Lexicon | None = None) -> list[dict[str, Any]]:
    """Per segment what `project list --json` gives: index (1-based), text, chosen, takes
    (each with seed, seconds, flags, stale), locked, picked, speaker. A take is stale when
    its segment's text or voice changed since, or (given today's `lexicon`) when the
    pronunciation dictionary now reads the text otherwise."""
    found = take_flags(project)
    rows = []
    for number, s in enumerate(project.segments, 1):
        now = None if lexicon is None else spoken(s.text, lexicon)
        rows.append(
            {
                "index": number,
                "text": s.text,
                "speaker": s.speaker,
                "chosen": s.chosen,
                "picked": s.picked,
                "locked": s.locked,
                "takes": [
                    {
                        "take": t.id,
                        "seed": t.seed,
                        "seconds": round(t.measures.seconds, 3),
                        "flags": [
                            {"kind": f.kind, "why": str(f.sentence)} for f in found[(s.id, t.id)]
                        ],
                        "stale": not s.current(t, now),
                    }
                    for t in s.takes
                ],
            }
        )
    return rows


def chosen_audio(folder: Path, project: Project) -> list[tuple[Segment, np.ndarray]]:
    """Each segment's chosen take's samples, in order; ProjectError for a segment with none."""
    out = []
    for number, segment in enumerate(project.segments, 1):
        take = segment.chosen_take
        if take is None:
            raise ProjectError(
                Sentence(
                    QT_TRANSLATE_NOOP(
                        "core", "Segment {number} has no take yet; re-roll it before exporting."
                    ),
                    number=str(number),
                )
            )
        out.append((segment, store.take_audio(folder, take)))
    return out


def export(
    path: Path,
    out: Path,
    subtitles: Path | None = None,
    per_segment: bool = False,
    float_wav: bool = False,
) -> list[Path]:
    """The chosen takes in order with each segment's pause before it, in one file (with
    subtitles when asked), or one file per segment (`out` a folder then); the files written."""
    from chattts_studio.core.audio.stream_writer import AudioStreamWriter, pause_samples
    from chattts_studio.core.audio.subtitles import cues_for, write_subtitles

    folder = store.project_folder(path)
    project = store.load(folder)
    pieces = chosen_audio(folder, project)
    if per_segment:
        out.mkdir(parents=True, exist_ok=True)
        suffix = ".wav"
        written = []
        for number, (_segment, audio) in enumerate(pieces, 1):
            target = out / f"{number:04d}{suffix}"
            with AudioStreamWriter(target, float_wav=float_wav, pause_seconds=0.0) as writer:
                writer.add_segment(audio)
            written.append(target)
        return written
    timeline = []
    with AudioStreamWriter(out, float_wav=float_wav, pause_seconds=0.0) as writer:
        for n, (segment, audio) in enumerate(pieces):
            if n:
                writer.write_silence(pause_samples(segment.pause_before))
            first, end = writer.add_segment(audio)
            timeline.append((segment.text, first, end))
    written = [out]
    if subtitles is not None:
        speakers = [s.speaker for s, _a in pieces]
        write_subtitles(subtitles, cues_for(timeline, speakers=speakers if any(speakers) else None))
        written.append(subtitles)
    return written
