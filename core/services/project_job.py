"""A segment editor job for the window's worker, on the engine it already holds: a new
project, re-rolls, an edited segment made again (core/services/project.py), or takes heard by
the recogniser (check, re-roll until clean, best of N). Progress is reported as takes made."""

import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from chattts_studio.core.engine.cancel import CancelToken
from chattts_studio.core.engine.request import SynthesisRequest
from chattts_studio.core.messages import QT_TRANSLATE_NOOP, Sentence
from chattts_studio.core.project.model import TakeSettings
from chattts_studio.core.services.report import Progress, Report
from chattts_studio.core.voices.voice import Voice

if TYPE_CHECKING:
    from chattts_studio.core.asr.sensevoice import SenseVoice
    from chattts_studio.core.engine.engine import Engine
    from chattts_studio.core.services.project import NewProject

HEARING = ("check", "clean", "best")


@dataclass(frozen=True)
class ProjectJob:
    """ "new" (the request's text, or the script `lines`, as a new project at `path`),
    "reroll" (segments `numbers`, or the flagged or the unlocked ones), "edit" (segment
    numbers[0] says `text` now), "check" (every chosen take not heard yet), "clean" (flagged
    segments re-rolled until clean, `tries` takes at most each) or "best" (best of `takes`).
    The request carries the window's sampling settings, seed and dictionary."""

    action: str
    path: Path
    numbers: tuple[int, ...] | list[int] = ()
    takes: int = 1
    text: str = ""
    flagged: bool = False
    unlocked: bool = False
    request: SynthesisRequest | None = None
    speaker_seed: int | None = None  # "new": the speaker of this seed when no voice is given
    lines: tuple[tuple[str, Voice, str], ...] = ()  # "new": a script's speaker, voice, text
    tries: int = 0  # "clean": new takes of a segment at most


@dataclass(frozen=True)
class ProjectDone:
    folder: Path
    made: int  # takes made
    seconds: float  # the job's wall time


def run_project(
    engine: "Engine", spec: ProjectJob, cancel: CancelToken, report: Report
) -> ProjectDone:
    from chattts_studio.core.services import project as service

    request = spec.request or SynthesisRequest(text="")
    settings = TakeSettings(request.temperature, request.top_p, request.top_k, request.speed)
    made = 0
    start = time.perf_counter()
    checking = spec.action == "check"

    def progress(done: int, asked: int, _seconds: float) -> None:
        nonlocal made
        made = done
        said = Sentence(
            QT_TRANSLATE_NOOP("core", "{done} of {total} takes checked")
            if checking
            else QT_TRANSLATE_NOOP("core", "{done} of {total} takes made"),
            done=done,
            total=asked,
        )
        report(Progress("checking takes" if checking else "takes", done / max(1, asked), said))

    lexicon = request.lexicon
    folder = spec.path
    if spec.action == "new":
        made_from = new_project_spec(engine, spec, settings)
        folder = service.new_project(engine, spec.path, made_from, cancel, progress)
    elif spec.action == "reroll":
        numbers = ",".join(str(n) for n in spec.numbers)
        service.reroll(
            engine,
            spec.path,
            numbers or None,
            spec.takes,
            flagged=spec.flagged,
            unlocked=spec.unlocked,
            settings=None,  # the project's own: every take of it alike
            cancel=cancel,
            progress=progress,
            lexicon=lexicon,
        )
    elif spec.action == "edit":
        number = spec.numbers[0]
        service.edit(engine, spec.path, number, spec.text, None, cancel, progress, lexicon)
    elif spec.action in HEARING:
        _hear(engine, spec, cancel, progress)
    else:
        raise ValueError(f"unknown project action {spec.action!r}")
    return ProjectDone(folder, made, time.perf_counter() - start)


def _hear(engine: "Engine", spec: ProjectJob, cancel: CancelToken, progress) -> None:  # type: ignore[no-untyped-def]
    """Check, re-roll until clean or best of N: the recogniser loaded for the job and let go
    after it."""
    from chattts_studio.core.services import heard_takes
    from chattts_studio.core.services.project_check import check_project

    recognizer = recognizer_for(engine)
    lexicon = spec.request.lexicon if spec.request is not None else ()
    try:
        if spec.action == "check":
            check_project(
                spec.path,
                recognizer,
                cancel=cancel,
                progress=lambda done, asked: progress(done, asked, 0.0),
                unchecked_only=True,
            )
        elif spec.action == "clean":
            heard_takes.reroll_until_clean(
                engine, spec.path, recognizer, spec.tries, None, cancel, progress, lexicon
            )
        else:
            heard_takes.best_of(
                engine, spec.path, recognizer, spec.takes, None, cancel, progress, lexicon
            )
    finally:
        recognizer.unload()


def recognizer_for(engine: "Engine") -> "SenseVoice":
    """The official recogniser when it is downloaded; with random TTS weights loaded (a demo
    model), the demo recogniser (random too: it checks the plumbing, not speech); else the
    sentence that says how to get the official one."""
    from chattts_studio.core.asr import models
    from chattts_studio.core.asr.sensevoice import SenseVoice

    loaded = engine.loaded
    random_tts = loaded is not None and loaded.info.random_weights
    name = models.DEMO if hears_with_demo(random_tts) else models.OFFICIAL
    return SenseVoice(models.recognizer_folder(name), threads=2)


def hears_with_demo(random_tts: bool) -> bool:
    """Whether a hearing job on a model with (or without) random weights uses the demo
    recogniser: random TTS weights and no official recogniser downloaded."""
    from chattts_studio.core.asr import models

    return random_tts and not models.official_present()


def new_project_spec(engine: "Engine", spec: ProjectJob, settings: TakeSettings) -> "NewProject":
    """The window's "new" as `project new` would ask for it: the same text, settings and
    seed make the same takes."""
    from chattts_studio.core.services.project import Line, new_project_for

    request = spec.request or SynthesisRequest(text="")
    seed = spec.speaker_seed if spec.speaker_seed is not None else request.seed
    voice = request.voice or Voice(embedding=request.speaker or engine.sample_speaker(seed))
    return new_project_for(
        engine,
        request.text,
        voice,
        settings,
        segment_size=request.segment_size,
        pause=request.pause_seconds,
        takes=spec.takes,
        lines=tuple(Line(name, v, text) for name, v, text in spec.lines),
        turn_pause=request.turn_pause_seconds,
        lexicon=request.lexicon,
        seed=request.seed,
    )
