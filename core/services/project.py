"""The segment editor's service, the actions that run the model: a text (or a dialogue script)
made into a project of segments with takes, segments re-rolled or edited and made again, a take
made again from its record (`remake`), for the command line and the window alike. Each take is
saved as soon as it exists; its seed comes from core/seeds.py's take_seed. No-model changes:
core/project/edits.py; listing and export: core/project/reading.py. See docs/projects.md.
"""

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from chattts_studio.core.engine.cancel import CancelToken
from chattts_studio.core.messages import QT_TRANSLATE_NOOP, Sentence
from chattts_studio.core.project import flags, store, writer
from chattts_studio.core.project.edits import (
    check_takes,
    parse_numbers,
    refuse_locked,
    segment_numbers,
)
from chattts_studio.core.project.model import Maker, Project, Segment, Take, TakeSettings
from chattts_studio.core.project.reading import Lexicon, flagged_numbers, spoken, take_flags
from chattts_studio.core.project.writer import OpenProject
from chattts_studio.core.seeds import fresh_seed, take_seed
from chattts_studio.core.text.prepare import check_text, split_segments
from chattts_studio.core.voices.voice import Voice

if TYPE_CHECKING:
    from chattts_studio.core.engine.engine import Engine
    from chattts_studio.core.engine.takes import MadeTake, TakeOrder, TakeRows

Progress = Callable[[int, int, float], None]  # (takes made, asked, seconds of the last take)


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


def new_project_for(
    engine: "Engine",
    text: str,
    voice: Voice,
    settings: TakeSettings,
    *,
    segment_size: int,
    pause: float,
    takes: int,
    seed: int | None,
    lines: tuple[Line, ...] = (),
    turn_pause: float = 0.4,
    lexicon: Lexicon = (),
) -> NewProject:
    """What a new project is made from, for the window and `project new` alike: the voices
    checked against the loaded model, and the model, device, precision and engine recorded
    as loaded."""
    loaded = engine.loaded
    assert loaded is not None  # a project is made only with a model loaded
    info = loaded.info
    return NewProject(
        text=text,
        voice=engine.check_voice(voice),
        settings=settings,
        model=str(info.folder) if info.kind == "folder" else info.name,
        segment_size=segment_size,
        pause=pause,
        takes=takes,
        seed=seed,
        device=loaded.device.id,
        precision=loaded.precision.value,
        engine=loaded.engine.value,
        lines=tuple(Line(n.speaker, engine.check_voice(n.voice), n.text) for n in lines),
        turn_pause=turn_pause,
        lexicon=lexicon,
    )


def project_seed(project: Project, seed: int | None) -> int:
    """The seed a command's takes come from: the one it gave, else the project's own (drawn
    now for a project that has none; saved with the takes)."""
    if seed is not None:
        return seed
    if project.seed is None:
        project.seed = fresh_seed()
    return project.seed


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def model_text(engine: "Engine", text: str) -> str:
    """What the model reads of a text (numbers read out, as synthesis does)."""
    model = engine.model
    assert model is not None
    return model.normalize(text)


def take_order(
    key: int, model_text: str, voice: Voice, seed: int, settings: TakeSettings
) -> "TakeOrder":
    """What the engine makes a take from: a project's take settings as its sampling and speed."""
    from chattts_studio.core.engine.request import Sampling
    from chattts_studio.core.engine.takes import TakeOrder

    sampling = Sampling(settings.temperature, settings.top_p, settings.top_k)
    return TakeOrder(key, model_text, voice, seed, sampling, settings.speed)


def _maker(engine: "Engine", rows: "TakeRows") -> Maker:
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
    if not asked:
        return []
    said = {a.segment.id: spoken(a.segment.text, lexicon) for a in asked}
    texts = {key: model_text(engine, text) for key, text in said.items()}
    orders = [
        take_order(n, texts[a.segment.id], a.segment.voice, a.seed, a.settings)
        for n, a in enumerate(asked)
    ]
    rows = engine.take_rows(len(orders))
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
        chosen = a.segment.chosen is None or (choose and not a.segment.picked)
        if chosen:
            a.segment.chosen = take.id
        handle.add_take(a.segment, take, chosen)  # the take exists from here on
        handle.save_soon()
        made.append((a.segment, take))
        if progress is not None:
            progress(len(made), len(asked), take.measures.seconds)

    if progress is not None:
        progress(0, len(asked), 0.0)
    try:
        engine.make_takes(orders, cancel, keep, rows)
    finally:
        handle.save()  # cancelled or failed too: what was made is named in project.json
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
    project.seed = base = spec.seed if spec.seed is not None else fresh_seed()
    with writer.created(path, project) as handle:
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


def reroll(
    engine: "Engine",
    path: Path,
    spec: str | Sequence[int] | None,
    takes: int = 1,
    flagged: bool = False,
    seed: int | None = None,
    settings: TakeSettings | None = None,
    cancel: CancelToken | None = None,
    progress: Progress | None = None,
    lexicon: Lexicon = (),
    unlocked: bool = False,
) -> list[int]:
    """New takes of the segments `spec` names ('3,7-9', or the numbers), the flagged ones, or
    (`unlocked`) every one not locked; the earlier
    takes stay, the new (fewest-flags) one becomes the chosen one unless one was picked by
    hand. Only those segments are decoded. The segment numbers re-rolled."""
    token = cancel or CancelToken()
    check_takes(takes)
    with writer.opened(path) as handle:
        project = handle.project
        numbers = segment_numbers(spec, len(project.segments)) if spec else []
        refuse_locked(project, numbers)
        if flagged:
            numbers += [n for n in flagged_numbers(project) if n not in numbers]
        if unlocked:
            free = [n for n, s in enumerate(project.segments, 1) if not s.locked]
            numbers += [n for n in free if n not in numbers]
        base = project_seed(project, seed)
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
    with writer.opened(path) as handle:
        project = handle.project
        index = parse_numbers(str(number), len(project.segments))[0]
        refuse_locked(project, [index])
        segment = project.at(index)
        segment.text, segment.picked = text.strip(), False
        base = project_seed(project, seed)
        handle.save()
        take_id = segment.next_take_id()
        asked = [_Asked(segment, take_id, take_seed(base, segment.id, take_id), project.settings)]
        _make(engine, handle, asked, token, progress, True, lexicon)


def remake(engine: "Engine", project: Project, segment: Segment, take: Take) -> np.ndarray:
    """A take made again from its record alone (its model text, voice, seed, settings and row
    count): the same samples when the same model, engine and precision run it."""
    out: list[np.ndarray] = []
    order = take_order(0, take.model_text, segment.voice, take.seed, take.settings)
    rows = engine.take_rows(1, take.maker.rows)
    engine.make_takes([order], CancelToken(), lambda done: out.append(done.audio), rows)
    return out[0]
