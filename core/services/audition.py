"""Auditions: one sentence read by several new speakers at once (one row each in one batched
pass), by a voice cloned from a recording before it is kept, or by a voice blend."""

import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from chattts_studio.core import SAMPLE_RATE
from chattts_studio.core.engine.cancel import CancelToken
from chattts_studio.core.engine.request import SynthesisRequest
from chattts_studio.core.messages import QT_TRANSLATE_NOOP, Sentence
from chattts_studio.core.services.keep_voice import VoiceSource, keep_new_voice, voice_from
from chattts_studio.core.services.report import Partial, Progress, Report
from chattts_studio.core.speaker.encoder import THRESHOLD
from chattts_studio.core.voices.speakers import SpeakerLibrary
from chattts_studio.core.voices.voice import Voice

if TYPE_CHECKING:
    from chattts_studio.core.engine.engine import Engine
    from chattts_studio.core.speaker.encoder import SpeakerEncoder
    from chattts_studio.core.speaker.stability import Stability

SEEDS = range(1, 100_000)  # the speakers an audition draws from


@dataclass(frozen=True)
class Audition:
    """One candidate speaker: the seed it came from, its embedding, the sentence it read."""

    seed: int
    embedding: str
    audio: np.ndarray = field(repr=False)


def audition_seeds(
    engine: "Engine",
    request: SynthesisRequest,
    count: int,
    cancel: CancelToken | None = None,
    seeds: list[int] | None = None,
) -> list[Audition]:
    """`count` speakers of random seeds (or of `seeds`) reading the request's text, all in one
    batched pass; the request's own speaker is not used."""
    chosen = seeds if seeds is not None else random.sample(SEEDS, count)
    embeddings = [engine.sample_speaker(seed) for seed in chosen]
    audio = engine.audition(replace(request, speaker=None), embeddings, cancel)
    return [
        Audition(seed, embedding, clip)
        for seed, embedding, clip in zip(chosen, embeddings, audio, strict=True)
    ]


def audition_recording(
    engine: "Engine",
    clip: np.ndarray,
    transcript: str,
    request: SynthesisRequest,
    cancel: CancelToken | None = None,
) -> np.ndarray:
    """The voice of a 24 kHz recording (with what is said in it) reading the request's text.
    Raises Cancelled between the cloning and the reading when `cancel` is set."""
    voice = voice_from(engine, VoiceSource(clip=clip, transcript=transcript), cancel)
    audio = engine.audition(replace(request, speaker=None), [voice], cancel)[0]
    if cancel is not None:
        cancel.check()
    return audio


def audition_blend(
    engine: "Engine",
    spec: str,
    voices: Mapping[str, "Voice"],
    request: SynthesisRequest,
    cancel: CancelToken | None = None,
) -> tuple[str, np.ndarray]:
    """The blend `spec` (its parts library speakers in `voices`, seeds or embeddings, as synth
    reads them) mixed into one embedding, and that voice reading the request's text."""
    from chattts_studio.core.voices.blend import library_blend

    embedding = library_blend(spec, voices, engine)
    audio = engine.audition(replace(request, speaker=None), [embedding], cancel)[0]
    return embedding, audio


def stability_of(
    engine: "Engine",
    request: SynthesisRequest,
    voices: list[Voice],
    encoder: "SpeakerEncoder",
    lines: tuple[str, ...] = (),
    cancel: CancelToken | None = None,
    threshold: float = THRESHOLD,
    progress: Callable[[int, int], object] | None = None,
) -> list["Stability | None"]:
    """Each speaker's stability: every speaker reads each of `lines` (the stability lines in
    the request text's language by default; one batched pass a line) and its clips'
    similarities are scored. None for a speaker with fewer than two clips long enough to
    judge. `progress` hears (lines read, lines) before the first line and after each."""
    from chattts_studio.core.project.flags import spoken_count
    from chattts_studio.core.speaker.encoder import VoiceCheckError
    from chattts_studio.core.speaker.stability import LINES, stability

    lines = lines or LINES[spoken_count(request.text)[1] if request.text else "en"]
    clips: list[list[np.ndarray]] = [[] for _ in voices]
    if progress is not None:
        progress(0, len(lines))
    for number, line in enumerate(lines, 1):
        read = engine.audition(replace(request, text=line, speaker=None), voices, cancel)
        for mine, audio in zip(clips, read, strict=True):
            mine.append(audio)
        if progress is not None:
            progress(number, len(lines))
    found: list[Stability | None] = []
    for mine in clips:
        vectors = []
        for audio in mine:
            try:
                vectors.append(encoder.embed(audio, SAMPLE_RATE))
            except VoiceCheckError:  # a clip too short to judge: the others still count
                continue
        found.append(stability(vectors, threshold) if len(vectors) >= 2 else None)
    return found


@dataclass(frozen=True)
class AuditionJob:
    text: str
    count: int
    base: SynthesisRequest
    # Set: the text is read by this voice blend ("Ann*0.7+seed:42*0.3"), not by `count` random
    # seeds; `library` holds the library voices its parts may name (no file read by the job).
    blend: str = ""
    library: "dict[str, Voice]" = field(default_factory=dict, compare=False, repr=False)
    # Set: each seed candidate also reads the stability lines and is scored (stability_of).
    stability: bool = False


@dataclass(frozen=True)
class Candidate:
    seed: int | None  # None: a blend's voice
    embedding: str
    audio: np.ndarray = field(repr=False)
    rated: bool = False  # its stability was measured (the job asked for it and was not stopped)
    stability: "Stability | None" = None  # None when rated: too little audio to judge
    stability_demo: bool = False  # scored by the demo speaker model: its scores judge noise


@dataclass(frozen=True)
class SeedSpeaker:
    seed: int
    embedding: str


def audition(
    engine: "Engine", spec: AuditionJob, cancel: CancelToken, report: Report
) -> list[Candidate]:
    """Every candidate reads the sentence in one batched pass (one row per speaker); a blend's
    one voice is the only candidate. With `spec.stability` each seed candidate is then rated;
    the unrated candidates are the Partial a cancel or failure while rating hands over."""
    request = replace(spec.base, text=spec.text)
    if spec.blend:
        embedding, audio = audition_blend(engine, spec.blend, spec.library, request, cancel)
        return [Candidate(None, embedding, audio)]
    if not spec.stability:
        report(Progress("audition", 0.0))
        heard = audition_seeds(engine, request, spec.count, cancel)
        report(Progress("audition", 1.0))
        return [Candidate(c.seed, c.embedding, c.audio) for c in heard]
    from chattts_studio.core.services import project_job

    encoder = project_job.speaker_for(engine)  # a missing speaker model says so before any work
    try:
        report(Progress("audition", 0.0))
        heard = audition_seeds(engine, request, spec.count, cancel)
        candidates = [Candidate(c.seed, c.embedding, c.audio) for c in heard]
        report(Partial(candidates))
        return _rated(engine, request, candidates, encoder, cancel, report)
    finally:
        encoder.unload()


def _rated(
    engine: "Engine",
    request: SynthesisRequest,
    candidates: list[Candidate],
    encoder: "SpeakerEncoder",
    cancel: CancelToken,
    report: Report,
) -> list[Candidate]:
    """The candidates with their stability (stability_of); progress counts the audition, each
    line and the scoring as one step each, and a cancel is heard between lines."""

    def line_read(done: int, lines: int) -> None:
        cancel.check()
        report(Progress("stability", (1 + done) / (lines + 2), _rating(done, lines)))

    voices = [Voice(c.embedding) for c in candidates]
    found = stability_of(engine, request, voices, encoder, cancel=cancel, progress=line_read)
    cancel.check()
    report(Progress("stability", 1.0))
    return [
        replace(c, rated=True, stability=got, stability_demo=encoder.demo)
        for c, got in zip(candidates, found, strict=True)
    ]


def _rating(done: int, lines: int) -> Sentence:
    return Sentence(
        QT_TRANSLATE_NOOP("core", "Rating stability: {done} of {lines} lines read."),
        done=done,
        lines=lines,
    )


def seed_speaker(seed: int) -> "Callable[[Engine, CancelToken, Report], SeedSpeaker]":
    """The job that draws the speaker of `seed`."""
    return lambda engine, _cancel, _report: SeedSpeaker(seed, engine.sample_speaker(seed))


@dataclass(frozen=True)
class VoiceJob:
    """A voice from a recording: a file (read by the job) or a microphone take at `rate`,
    with its transcript; auditioned on `base.text`, or kept in the library as `name`."""

    transcript: str
    base: SynthesisRequest
    source: Path | None = None
    take: np.ndarray | None = field(default=None, repr=False)
    rate: int = 0
    name: str = ""  # set: keep the voice under this name (else audition it)
    replace: bool = False
    library: Path | None = None  # the speaker library file the window shows


@dataclass(frozen=True)
class VoiceOutcome:
    spec: VoiceJob
    audio: np.ndarray | None = field(default=None, repr=False)  # the audition
    kept: str = ""  # the name it was kept under


def clone_voice(
    engine: "Engine", spec: VoiceJob, cancel: CancelToken, _report: Report
) -> VoiceOutcome:
    """Clone a voice from a recording, then audition it or keep it (with its preview). Once
    kept, a cancel comes too late: the outcome says it is kept."""
    from chattts_studio.core.voices.clone import check_clip, read_clip

    if spec.source is not None:
        clip = read_clip(spec.source)
    else:
        take = spec.take if spec.take is not None else np.zeros(0, np.float32)
        clip = check_clip(take, spec.rate or 1)
    if spec.name:
        source = VoiceSource(clip=clip, transcript=spec.transcript)
        library = SpeakerLibrary(spec.library)
        entry = keep_new_voice(
            library, engine, spec.name, source, replace=spec.replace, cancel=cancel
        )
        return VoiceOutcome(spec, None, entry.name)
    base = replace(spec.base, speaker=None)
    return VoiceOutcome(spec, audition_recording(engine, clip, spec.transcript, base, cancel))
