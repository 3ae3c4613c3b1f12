"""Checking a project's takes (`project check`): each take's audio heard by a recogniser, scored
against the text the model read, or its voice compared with its voice's reference (`--voice`),
and the check kept with the take.

The project is opened once, under its lock, and project.json is written every SAVE_EVERY checks and
at the end, so a cancel or a kill loses at most the checks since the last write, never a take."""

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from chattts_studio.core import SAMPLE_RATE
from chattts_studio.core.align.aligner import align
from chattts_studio.core.align.recognised import TimedRecognizer
from chattts_studio.core.align.sphinx import EnglishAligner
from chattts_studio.core.align.words import Alignment
from chattts_studio.core.asr.recognizer import Recognizer, hear
from chattts_studio.core.asr.score import AsrCheck
from chattts_studio.core.engine.cancel import CancelToken
from chattts_studio.core.errors import StudioError
from chattts_studio.core.messages import QT_TRANSLATE_NOOP, Sentence, said
from chattts_studio.core.project import take_files, writer
from chattts_studio.core.project.codec import voices_judged
from chattts_studio.core.project.edits import parse_numbers
from chattts_studio.core.project.flags import spoken_count
from chattts_studio.core.project.model import Project, Segment, Take
from chattts_studio.core.project.store import ProjectError
from chattts_studio.core.speaker.check import (
    REFERENCE_PREVIEW,
    REFERENCE_RECORDING,
    REFERENCE_TAKE,
    REFERENCE_TYPICAL,
    VoiceCheck,
)
from chattts_studio.core.speaker.compare import embed_file
from chattts_studio.core.speaker.encoder import (
    THRESHOLD,
    SpeakerEncoder,
    VoiceCheckError,
    similarity,
)

if TYPE_CHECKING:
    from chattts_studio.core.voices.speakers import SpeakerLibrary

SAVE_EVERY = 20
TYPICAL_POOL = 3  # chosen takes that make a typical take; fewer: every current take counts
Progress = Callable[[int, int], None]  # (checked, to check)


def check_project(
    path: Path,
    recognizer: Recognizer,
    spec: str = "",
    all_takes: bool = False,
    cancel: CancelToken | None = None,
    progress: Progress | None = None,
    unchecked_only: bool = False,
) -> list[tuple[int, int, AsrCheck]]:
    """Check the chosen take of each segment in `spec` ("3,7-9"; empty: every segment), or
    every take with `all_takes`, leaving out takes checked already with `unchecked_only`;
    (segment number, take id, check) for each take checked."""
    done: list[tuple[int, int, AsrCheck]] = []
    timer = WordTimer(recognizer)
    with writer.opened(path) as handle:
        project = handle.project
        numbers = parse_numbers(spec, len(project.segments)) if spec else None
        numbers = numbers or list(range(1, len(project.segments) + 1))
        work = [
            (n, take)
            for n in numbers
            for take in project.at(n).takes
            if (all_takes or take.id == project.at(n).chosen)
            and not (unchecked_only and take.asr is not None)
        ]
        try:
            for n, take in work:
                if cancel is not None:
                    cancel.check()
                audio = take_files.take_audio(handle.folder, take)
                language = spoken_count(take.spoken_text)[1]
                got = hear(recognizer, take.spoken_text, audio, SAMPLE_RATE, language)
                words = timer.words(audio, take.spoken_text, language)
                segment = project.at(n)
                segment.takes[segment.takes.index(take)] = replace(take, asr=got, words=words)
                done.append((n, take.id, got))
                if len(done) % SAVE_EVERY == 0:
                    handle.save()
                if progress is not None:
                    progress(len(done), len(work))
        finally:
            if done:
                handle.save()
    return done


class WordTimer:
    """A checked take's words in time (core/align), kept with its check: English by forced
    alignment, Chinese by the recogniser's token times when it gives them (else estimated).
    None where they cannot be had: no aligner installed, or audio the aligner refuses (the
    take's own check says what was heard)."""

    def __init__(self, recognizer: Recognizer) -> None:
        self.recognizer = recognizer if isinstance(recognizer, TimedRecognizer) else None
        self.english: EnglishAligner | None = None
        try:
            EnglishAligner.check()
            self.english = EnglishAligner()
        except StudioError:
            pass

    def words(self, audio: np.ndarray, text: str, language: str) -> Alignment | None:
        if self.english is None and language == "en":
            return None
        try:
            return align(audio, SAMPLE_RATE, text, language, self.recognizer, self.english)
        except StudioError:
            return None


@dataclass(frozen=True)
class Reference:
    """A voice's reference as the check found it: its kind (core/speaker/check.py's
    REFERENCES), what exactly it was, and its embedding."""

    kind: str
    id: str
    embedding: np.ndarray


@dataclass
class VoiceRun:
    """What a voice check did: (segment number, take id, check) for each take checked, and
    (segment number, take id, sentence) for each it could not judge (too short, silent, no
    reference): said, never a reason to stop."""

    checked: list[tuple[int, int, VoiceCheck]] = field(default_factory=list)
    skipped: list[tuple[int, int, str]] = field(default_factory=list)


def library_clips(library: "SpeakerLibrary | None") -> dict[str, tuple[str, Path]]:
    """Each speaker library voice's reference clip by voice key: the cloned voice's recording,
    else its preview (a voice with neither has none)."""
    clips: dict[str, tuple[str, Path]] = {}
    for entry in library.entries if library is not None else []:
        for kind, relative in (
            (REFERENCE_RECORDING, entry.recording),
            (REFERENCE_PREVIEW, entry.preview),
        ):
            path = library.file(relative) if relative and library is not None else None
            if path is not None and path.is_file():
                clips.setdefault(entry.voice.key(), (kind, path))
                break
    return clips


def check_voices(
    path: Path,
    encoder: SpeakerEncoder,
    spec: str = "",
    all_takes: bool = False,
    cancel: CancelToken | None = None,
    progress: Progress | None = None,
    unchecked_only: bool = False,
    threshold: float = THRESHOLD,
    clips: dict[str, tuple[str, Path]] | None = None,
) -> VoiceRun:
    """The voice check of the chosen take of each segment in `spec` (every take with
    `all_takes`; with `unchecked_only`, only takes not checked against today's reference at
    this threshold): each take's similarity to its voice's reference, which is the take the
    user marked, else the speaker library's recording or preview (`clips`), else the voice's
    typical take (the one most like its others; two current takes at least)."""
    run = VoiceRun()
    with writer.opened(path) as handle:
        project = handle.project
        numbers = parse_numbers(spec, len(project.segments)) if spec else None
        numbers = numbers or list(range(1, len(project.segments) + 1))
        finder = _References(project, handle.folder, encoder, clips or {})
        work = [
            (n, take)
            for n in numbers
            for take in project.at(n).takes
            if all_takes or take.id == project.at(n).chosen
        ]
        try:
            for count, (n, take) in enumerate(work, 1):
                if cancel is not None:
                    cancel.check()
                segment = project.at(n)
                try:
                    reference = finder.reference(segment.voice.key())
                    old = take.voice_check
                    if not (
                        unchecked_only
                        and old is not None
                        and old.reference_id == reference.id
                        and old.threshold == threshold
                    ):
                        got = _checked(finder, segment.id, take, reference, threshold, encoder)
                        segment.takes[segment.takes.index(take)] = replace(take, voice_check=got)
                        run.checked.append((n, take.id, got))
                        if len(run.checked) % SAVE_EVERY == 0:
                            handle.save()
                except (VoiceCheckError, ProjectError) as exc:  # said; the others go on
                    run.skipped.append((n, take.id, said(exc)))
                if progress is not None:
                    progress(count, len(work))
        finally:
            if run.checked:
                handle.save()
        # Each verdict as the project keeps it: judged among its voice's takes (a new take
        # moves its neighbours' spread), so the report says what `project list` shows.
        now = voices_judged(project.segments)
        run.checked = [(n, t, now.get((project.at(n).id, t), c)) for n, t, c in run.checked]
    return run


def _checked(
    finder: "_References",
    segment_id: int,
    take: Take,
    reference: Reference,
    threshold: float,
    encoder: SpeakerEncoder,
) -> VoiceCheck:
    score = similarity(reference.embedding, finder.embedding(segment_id, take))
    return VoiceCheck(
        similarity=min(1.0, max(-1.0, score)),
        threshold=threshold,
        reference=reference.kind,
        reference_id=reference.id,
        model=encoder.model_file.name,
        demo=encoder.demo,
    )


class _References:
    """Each voice's reference in one project, found once, and each take's embedding, made
    once (a typical take is found from the same embeddings the check then uses)."""

    def __init__(
        self,
        project: Project,
        folder: Path,
        encoder: SpeakerEncoder,
        clips: dict[str, tuple[str, Path]],
    ) -> None:
        self.project, self.folder, self.encoder, self.clips = project, folder, encoder, clips
        self._found: dict[str, Reference | VoiceCheckError] = {}
        self._embeddings: dict[tuple[int, int], np.ndarray] = {}

    def embedding(self, segment_id: int, take: Take) -> np.ndarray:
        key = (segment_id, take.id)
        if key not in self._embeddings:
            number = self.project.number_of(segment_id)
            what = Sentence(
                QT_TRANSLATE_NOOP("core", "Take {take} of segment {number}"),
                take=str(take.id),
                number=str(number),
            )
            audio = take_files.take_audio(self.folder, take)
            self._embeddings[key] = self.encoder.embed(audio, SAMPLE_RATE, what)
        return self._embeddings[key]

    def reference(self, voice: str) -> Reference:
        if voice not in self._found:
            try:
                self._found[voice] = self._find(voice)
            except VoiceCheckError as exc:
                self._found[voice] = exc
        found = self._found[voice]
        if isinstance(found, VoiceCheckError):
            raise found
        return found

    def _find(self, voice: str) -> Reference:
        segments = [s for s in self.project.segments if s.voice.key() == voice]
        for segment in segments:
            marked = segment.take(segment.reference) if segment.reference is not None else None
            if marked is not None:
                embedding = self.embedding(segment.id, marked)
                return Reference(REFERENCE_TAKE, f"{segment.id}/{marked.id}", embedding)
        if voice in self.clips:
            kind, clip = self.clips[voice]
            return Reference(kind, clip.name, embed_file(self.encoder, clip))
        return self._typical(segments)

    def _typical(self, segments: list[Segment]) -> Reference:
        chosen = [(s.id, s.chosen_take) for s in segments if s.chosen_take is not None]
        pool = [(i, t) for i, t in chosen if t is not None]
        if len(pool) < TYPICAL_POOL:
            pool = [(s.id, t) for s in segments for t in s.takes if s.current(t)]
        usable = []
        for segment_id, take in pool:
            try:
                usable.append((segment_id, take, self.embedding(segment_id, take)))
            except (VoiceCheckError, ProjectError):
                continue  # a clip too short to judge, or unreadable, is no candidate
        if len(usable) < 2:
            raise VoiceCheckError(
                QT_TRANSLATE_NOOP(
                    "core",
                    "Its voice has no reference: mark a take as its reference, or make two "
                    "takes or more of this voice.",
                )
            )
        vectors = np.stack([e for _, _, e in usable])
        likeness = (vectors @ vectors.T).sum(axis=1)
        segment_id, take, embedding = usable[int(np.argmax(likeness))]
        return Reference(REFERENCE_TYPICAL, f"{segment_id}/{take.id}", embedding)
