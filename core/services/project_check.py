"""Checking a project's takes (`project check`): each take's audio heard by a recogniser, scored
against the text the model read, and the check kept with the take.

The project is opened once, under its lock, and project.json is written every SAVE_EVERY checks and
at the end, so a cancel or a kill loses at most the checks since the last write, never a take."""

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from chattts_studio.core import SAMPLE_RATE
from chattts_studio.core.asr.recognizer import Recognizer, hear
from chattts_studio.core.asr.score import AsrCheck
from chattts_studio.core.engine.cancel import CancelToken
from chattts_studio.core.project import take_files, writer
from chattts_studio.core.project.edits import parse_numbers
from chattts_studio.core.project.flags import spoken_count

SAVE_EVERY = 20
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
                segment = project.at(n)
                segment.takes[segment.takes.index(take)] = replace(take, asr=got)
                done.append((n, take.id, got))
                if len(done) % SAVE_EVERY == 0:
                    handle.save()
                if progress is not None:
                    progress(len(done), len(work))
        finally:
            if done:
                handle.save()
    return done
