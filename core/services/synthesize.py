"""Synthesis: a request (or a dialogue script) planned once, then its segments made in order,
handed to the caller as each is finished; or, for the command line, written to an audio file
(and subtitles) as they come, so memory stays flat however long the text."""

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from chattts_studio.core import SAMPLE_RATE
from chattts_studio.core.engine.cancel import CancelToken
from chattts_studio.core.engine.request import (
    AudioChunk,
    JobPlan,
    JobSummary,
    SegmentRestarted,
    SegmentResult,
    SynthesisRequest,
    join_audio,
)
from chattts_studio.core.services.report import Partial, Report
from chattts_studio.core.voices.voice import Voice

if TYPE_CHECKING:
    from chattts_studio.core.align.timeline import WordTimeline
    from chattts_studio.core.engine.engine import Engine, Listener
    from chattts_studio.core.engine.loading import LoadedModel
    from chattts_studio.core.results.result_store import ResultStore
    from chattts_studio.core.text.dialogue import Turn

NO_AUDIO = np.zeros(0, dtype=np.float32)
SegmentSink = Callable[[SegmentResult], None]


def plan_synthesis(
    engine: "Engine",
    request: SynthesisRequest,
    voices: Mapping[str, Voice] | None = None,
    turns: "list[Turn] | None" = None,
) -> JobPlan:
    """The job's one plan: with `voices`, a dialogue script (`turns`, else the request's text
    read as `Name: text` lines), every line in its speaker's voice; else the request's text
    in one voice, its automatic batch settled for the device."""
    if voices is None:
        return engine.plan(request)
    from chattts_studio.core.engine.script_plan import plan_dialogue
    from chattts_studio.core.text.dialogue import parse_script

    script = turns if turns is not None else parse_script(request.text)
    return plan_dialogue(engine, script, dict(voices), request)


@dataclass
class SynthesisRun:
    """One plan's segments made in text order. `results` keeps each segment's figures, not
    its audio (the caller's sink keeps that), so a long job holds no audio here; `results` and
    `summary` stay readable after a cancel or a failure: what was finished is the user's."""

    engine: "Engine"
    plan: JobPlan
    results: list[SegmentResult] = field(default_factory=list)
    summary: JobSummary | None = None

    def run(
        self,
        cancel: CancelToken | None = None,
        on_segment: SegmentSink | None = None,
        listen: "Listener | None" = None,
    ) -> JobSummary | None:
        """Make every segment, each passed to `on_segment` (audio included) as it is finished;
        `listen` gets playable audio as soon as it exists. Raises Cancelled (or the failure)
        with `summary` set to the figures of what ran."""
        before = self.engine.last_summary
        try:
            for result in self.engine.synthesize(self.plan, listen, cancel):
                self.results.append(replace(result, audio=NO_AUDIO))
                if on_segment is not None:
                    on_segment(result)
                del result
        except BaseException:
            if self.engine.last_summary is not before:
                self.summary = self.engine.last_summary
            raise
        self.summary = self.engine.last_summary
        return self.summary


@dataclass(frozen=True)
class FileWritten:
    path: Path
    frames: int  # samples written, pauses included
    summary: JobSummary | None
    subtitles: Path | None = None

    @property
    def seconds(self) -> float:
        return self.frames / SAMPLE_RATE


def synthesize_to_file(
    engine: "Engine",
    plan: JobPlan,
    output: Path,
    *,
    float32: bool = False,
    tags: dict[str, str] | None = None,
    subtitles: Path | None = None,
    cancel: CancelToken | None = None,
    on_segment: SegmentSink | None = None,
    word_timing: "WordTimeline | None" = None,
) -> FileWritten:
    """The plan's audio into `output` (its format from the suffix), each segment written as it
    is finished with the plan's pauses before it; subtitles, one cue a sentence (a dialogue's
    cues name their speaker), when `subtitles` is given; with `word_timing`, each segment is
    aligned as it is finished and the subtitles are word-level instead (core/align/cues.py,
    their format from the suffix). Raises Cancelled with nothing kept."""
    from chattts_studio.core.audio.stream_writer import AudioStreamWriter, pause_samples
    from chattts_studio.core.audio.subtitles import cues_for, write_subtitles

    # Only each segment's text, place and speaker are kept, for the subtitles.
    timeline: list[tuple[str, int, int]] = []
    speakers: list[str] = []
    run = SynthesisRun(engine, plan)
    with AudioStreamWriter(output, float32, 0.0, tags=tags) as writer:

        def write(result: SegmentResult) -> None:
            writer.write_silence(pause_samples(plan.pause_before(result.index)))
            first, end = writer.add_segment(result.audio)
            timeline.append((result.text, first, end))
            if word_timing is not None:
                word_timing.add(result.audio, result.text, first)
            speakers.append(result.speaker)
            if on_segment is not None:
                on_segment(result)

        run.run(cancel, write)
    if subtitles is not None and word_timing is not None:
        from chattts_studio.core.align.cues import format_of, write_words

        word_timing.frames = writer.frames
        write_words(subtitles, word_timing.alignment(), format_of(subtitles))
    elif subtitles is not None:
        write_subtitles(subtitles, cues_for(timeline, speakers=speakers if plan.parts else None))
    return FileWritten(output, writer.frames, run.summary, subtitles)


@dataclass(frozen=True)
class SynthesisJob:
    request: SynthesisRequest
    speaker_seed: int | None = None  # the speaker of this seed when request.speaker is None
    speaker_label: str = ""
    # A dialogue script (the request's text, `Name: text` lines) and each name's voice.
    voices: "dict[str, Voice] | None" = field(default=None, compare=False)


@dataclass(frozen=True)
class SynthesisOutcome:
    job: SynthesisJob
    results: list[SegmentResult]
    summary: JobSummary | None
    speaker: str  # the embedding that was used
    loaded: "LoadedModel | None" = None
    # Where the window keeps its audio (on disk); the results then carry views of it.
    store: "ResultStore | None" = field(default=None, compare=False, repr=False)

    @cached_property
    def audio(self) -> np.ndarray:
        """The whole result: a read-only view of the store's file when it has one, else joined
        once (a long one is tens of MB to copy)."""
        if self.store is not None:
            return self.store.samples()
        return join_audio(self.results, self.job.request.pause_seconds)


def synthesize(
    engine: "Engine", spec: SynthesisJob, cancel: CancelToken, report: Report
) -> SynthesisOutcome:
    """The spec's text made segment by segment. Reported as they come: the plan (its pauses
    place the audio as it streams), each SegmentResult, each AudioChunk of playable audio and
    each SegmentRestarted, and a Partial outcome of what is finished (figures only: the
    caller keeps the audio it was reported)."""
    request = spec.request
    if request.speaker is None and spec.speaker_seed is not None and engine.model:
        request = replace(request, speaker=engine.sample_speaker(spec.speaker_seed))
    plan = plan_synthesis(engine, request, spec.voices)  # the automatic batch settled
    report(plan)
    final = replace(spec, request=replace(plan.request, batch_size=plan.batch_size))
    run = SynthesisRun(engine, plan)
    report(Partial(SynthesisOutcome(final, run.results, None, plan.speaker, engine.loaded)))

    def listen(event: AudioChunk | SegmentRestarted) -> None:
        report(event)

    try:
        run.run(cancel, report, listen)
    except Exception:
        # Cancelled or failed: what it made keeps its figures (steps run, wall time).
        if run.summary is not None:
            outcome = SynthesisOutcome(final, run.results, run.summary, plan.speaker, engine.loaded)
            report(Partial(outcome))
        raise
    outcome = SynthesisOutcome(final, run.results, run.summary, plan.speaker, engine.loaded)
    report(Partial(outcome))  # all of it, also as what a late cancel hands over
    return outcome
