"""A segment editor job's work, run by the worker with the engine it already holds: the
window's request turned into the project service's call (core/services/project.py): a new
project, re-rolls, or an edited segment made again. No Qt here: progress goes out through a
plain callback."""

import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from chattts_studio.core.engine.cancel import CancelToken
from chattts_studio.core.engine.request import SynthesisRequest
from chattts_studio.core.project.model import TakeSettings
from chattts_studio.core.voices.voice import Voice
from chattts_studio.gui.worker.jobs import ProjectDone, ProjectJob

if TYPE_CHECKING:
    from chattts_studio.core.engine.engine import Engine
    from chattts_studio.core.services.project import NewProject

Report = Callable[[int, int], None]  # takes made, takes asked


def run_project(
    engine: "Engine", spec: ProjectJob, cancel: CancelToken, report: Report
) -> ProjectDone:
    from chattts_studio.core.services import project as service

    request = spec.request or SynthesisRequest(text="")
    settings = TakeSettings(request.temperature, request.top_p, request.top_k)
    made = 0
    start = time.perf_counter()

    def progress(done: int, asked: int, _seconds: float) -> None:
        nonlocal made
        made = done
        report(done, asked)

    lexicon = request.lexicon
    folder = spec.path
    if spec.action == "new":
        folder = service.new_project(
            engine, spec.path, _new(engine, spec, settings), cancel, progress
        )
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
    else:
        raise ValueError(f"unknown project action {spec.action!r}")
    return ProjectDone(folder, made, time.perf_counter() - start)


def _new(engine: "Engine", spec: ProjectJob, settings: TakeSettings) -> "NewProject":
    from chattts_studio.core.services.project import Line, NewProject

    request = spec.request or SynthesisRequest(text="")
    loaded = engine.loaded
    assert loaded is not None  # the window asks only with a model loaded
    seed = spec.speaker_seed if spec.speaker_seed is not None else request.seed
    voice = request.voice or Voice(embedding=request.speaker or engine.sample_speaker(seed))
    info = loaded.info
    return NewProject(
        text=request.text,
        voice=engine.check_voice(voice),
        settings=settings,
        model=str(info.folder) if info.kind == "folder" else info.name,
        segment_size=request.segment_size,
        pause=request.pause_seconds,
        takes=spec.takes,
        device=loaded.device.id,
        precision=loaded.precision.value,
        engine=loaded.engine.value,
        lines=tuple(Line(name, engine.check_voice(v), text) for name, v, text in spec.lines),
        turn_pause=request.turn_pause_seconds,
        lexicon=request.lexicon,
    )
