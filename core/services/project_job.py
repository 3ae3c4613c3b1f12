"""A segment editor job for the window's worker, on the engine it already holds: a new
project, re-rolls, an edited segment made again (core/services/project.py), takes heard by the
recogniser (check, re-roll until clean, best of N) or compared by the voice check with their
voice's reference (voice; until clean and best of N too when asked). Progress is reported as
takes made or checked."""

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, assert_never

from chattts_studio.core.engine.cancel import CancelToken
from chattts_studio.core.engine.request import SynthesisRequest
from chattts_studio.core.messages import QT_TRANSLATE_NOOP, Sentence
from chattts_studio.core.project.model import TakeSettings
from chattts_studio.core.services.report import Progress, Report
from chattts_studio.core.voices.voice import Voice

TakesDone = Callable[[int, int, float], None]  # takes done, asked, seconds

if TYPE_CHECKING:
    from chattts_studio.core.asr.sensevoice import SenseVoice
    from chattts_studio.core.engine.engine import Engine
    from chattts_studio.core.services.heard_takes import VoiceChecker
    from chattts_studio.core.services.project import NewProject
    from chattts_studio.core.services.project_check import VoiceRun
    from chattts_studio.core.speaker.encoder import SpeakerEncoder


@dataclass(frozen=True)
class NewProjectJob:
    """The request's text, or a script's `lines` (speaker, voice, text), as a new project at
    `path`, `takes` takes a segment; the speaker of `speaker_seed` when no voice is given."""

    path: Path
    request: SynthesisRequest | None = None
    takes: int = 1
    speaker_seed: int | None = None
    lines: tuple[tuple[str, Voice, str], ...] = ()


@dataclass(frozen=True)
class RerollJob:
    """New takes of segments `numbers`, or of the flagged or the unlocked ones."""

    path: Path
    numbers: tuple[int, ...] = ()
    takes: int = 1
    flagged: bool = False
    unlocked: bool = False
    request: SynthesisRequest | None = None


@dataclass(frozen=True)
class EditJob:
    """Segment `number` says `text` now: its new take made."""

    path: Path
    number: int
    text: str
    request: SynthesisRequest | None = None


@dataclass(frozen=True)
class HearJob:
    """Every chosen take not heard by the recogniser yet, heard."""

    path: Path
    request: SynthesisRequest | None = None


@dataclass(frozen=True)
class VoiceJob:
    """Every chosen take not compared with its voice's reference of today yet, compared."""

    path: Path
    request: SynthesisRequest | None = None


@dataclass(frozen=True)
class CleanJob:
    """Flagged segments re-rolled until clean, `tries` takes at most each; with `voice`
    every take's voice compared too."""

    path: Path
    tries: int
    voice: bool = False
    request: SynthesisRequest | None = None


@dataclass(frozen=True)
class BestJob:
    """Best of `takes` new takes of each flagged segment; with `voice` every take's voice
    compared too."""

    path: Path
    takes: int
    voice: bool = False
    request: SynthesisRequest | None = None


# A segment editor job; each carries the window's sampling settings, seed and dictionary
# (`request`).
ProjectJob = NewProjectJob | RerollJob | EditJob | HearJob | VoiceJob | CleanJob | BestJob


def hears(job: ProjectJob) -> bool:
    """Whether the job runs speech recognition on its takes."""
    return isinstance(job, HearJob | CleanJob | BestJob)


def compares_voices(job: ProjectJob) -> bool:
    """Whether the job compares its takes' voices with their references."""
    return isinstance(job, VoiceJob) or (isinstance(job, CleanJob | BestJob) and job.voice)


def checks_only(job: ProjectJob) -> bool:
    """Whether the job checks takes and makes none."""
    return isinstance(job, HearJob | VoiceJob)


@dataclass(frozen=True)
class ProjectDone:
    folder: Path
    made: int  # takes made (checked, for a HearJob or a VoiceJob)
    seconds: float  # the job's wall time
    # VoiceJob: a sentence for each take the voice check could not judge (too short, silent,
    # no reference), which the others did not wait for.
    skipped: tuple[str, ...] = ()


def run_project(
    engine: "Engine", spec: ProjectJob, cancel: CancelToken, report: Report
) -> ProjectDone:
    from chattts_studio.core.services import project as service

    request = spec.request or SynthesisRequest(text="")
    settings = TakeSettings(request.temperature, request.top_p, request.top_k, request.speed)
    made = 0
    start = time.perf_counter()
    checking = checks_only(spec)

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
    match spec:
        case NewProjectJob():
            made_from = new_project_spec(engine, spec, settings)
            folder = service.new_project(engine, spec.path, made_from, cancel, progress)
        case RerollJob():
            service.reroll(
                engine,
                spec.path,
                spec.numbers or None,
                spec.takes,
                flagged=spec.flagged,
                unlocked=spec.unlocked,
                settings=None,  # the project's own: every take of it alike
                cancel=cancel,
                progress=progress,
                lexicon=lexicon,
            )
        case EditJob():
            service.edit(engine, spec.path, spec.number, spec.text, None, cancel, progress, lexicon)
        case HearJob() | CleanJob() | BestJob():
            _hear(engine, spec, cancel, progress)
        case VoiceJob():
            run = _compare(engine, spec, cancel, progress)
            skipped = tuple(why for _number, _take, why in run.skipped)
            return ProjectDone(folder, len(run.checked), time.perf_counter() - start, skipped)
        case _:
            assert_never(spec)
    return ProjectDone(folder, made, time.perf_counter() - start)


def _hear(
    engine: "Engine",
    spec: HearJob | CleanJob | BestJob,
    cancel: CancelToken,
    progress: TakesDone,
) -> None:
    """Check, re-roll until clean or best of N: the recogniser (and when the job compares
    voices, the speaker encoder) loaded for the job and let go after it."""
    from chattts_studio.core.services import heard_takes
    from chattts_studio.core.services.project_check import check_project
    from chattts_studio.core.speaker.encoder import THRESHOLD

    recognizer = recognizer_for(engine)
    encoder = None
    lexicon = spec.request.lexicon if spec.request is not None else ()
    try:
        voices: VoiceChecker | None = None
        if compares_voices(spec):
            encoder = speaker_for(engine)
            voices = heard_takes.voice_checker(encoder, THRESHOLD, _library_clips())
        if isinstance(spec, HearJob):
            check_project(
                spec.path,
                recognizer,
                cancel=cancel,
                progress=lambda done, asked: progress(done, asked, 0.0),
                unchecked_only=True,
            )
        elif isinstance(spec, CleanJob):
            heard_takes.reroll_until_clean(
                engine, spec.path, recognizer, spec.tries, None, cancel, progress, lexicon, voices
            )
        else:
            heard_takes.best_of(
                engine, spec.path, recognizer, spec.takes, None, cancel, progress, lexicon, voices
            )
    finally:
        recognizer.unload()
        if encoder is not None:
            encoder.unload()


def _compare(
    engine: "Engine", spec: VoiceJob, cancel: CancelToken, progress: TakesDone
) -> "VoiceRun":
    """The voice check of every chosen take not compared with today's reference yet, the
    speaker encoder loaded for the job and let go after it."""
    from chattts_studio.core.services.project_check import check_voices

    encoder = speaker_for(engine)
    try:
        run = check_voices(
            spec.path,
            encoder,
            cancel=cancel,
            progress=lambda done, asked: progress(done, asked, 0.0),
            unchecked_only=True,
            clips=_library_clips(),
        )
    finally:
        encoder.unload()
    return run


def _library_clips() -> dict[str, tuple[str, Path]]:
    """The speaker library's recordings and previews, a voice's reference before its typical
    take (as `project check --voice` finds them)."""
    from chattts_studio.core.services.project_check import library_clips
    from chattts_studio.core.voices.speakers import SpeakerLibrary

    return library_clips(SpeakerLibrary())


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


def speaker_for(engine: "Engine") -> "SpeakerEncoder":
    """The voice check's encoder, as recognizer_for chooses the recogniser: the official
    speaker model when it is downloaded; with random TTS weights loaded, the demo one (random
    too: its similarities judge noise); else the sentence that says how to get the official
    one."""
    from chattts_studio.core.speaker import models

    loaded = engine.loaded
    random_tts = loaded is not None and loaded.info.random_weights
    name = models.DEMO if compares_with_demo(random_tts) else models.OFFICIAL
    return models.encoder(name, threads=2)


def compares_with_demo(random_tts: bool) -> bool:
    """Whether a voice check on a model with (or without) random weights uses the demo
    speaker model: random TTS weights and no official speaker model downloaded."""
    from chattts_studio.core.speaker import models

    return random_tts and not models.official_present()


def new_project_spec(engine: "Engine", spec: NewProjectJob, settings: TakeSettings) -> "NewProject":
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
