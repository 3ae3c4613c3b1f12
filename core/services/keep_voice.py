"""Keeping a voice: from the speaker of a seed, an embedding string, or a recording with its
transcript (cloned), into the speaker library as a name, with its preview clip (and the
recording itself when asked) written beside it: FLAC beside the library file, named after the
voice (never the speaker's name)."""

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from chattts_studio.core import SAMPLE_RATE
from chattts_studio.core.atomic import os_error_sentence, write_with
from chattts_studio.core.engine.cancel import CancelToken
from chattts_studio.core.engine.request import SynthesisRequest
from chattts_studio.core.errors import SpeakerError
from chattts_studio.core.messages import QT_TRANSLATE_NOOP, Sentence
from chattts_studio.core.voices.speaker_file import SpeakerEntry, SpeakerNameTaken, clean_name
from chattts_studio.core.voices.speakers import SpeakerLibrary
from chattts_studio.core.voices.voice import Voice

if TYPE_CHECKING:
    from chattts_studio.core.engine.engine import Engine

PREVIEW_TEXT = "你好，很高兴认识你。Hello, nice to meet you."
PREVIEW_FOLDER = "speaker-previews"
RECORDING_FOLDER = "speaker-recordings"


@dataclass(frozen=True)
class VoiceSource:
    """Where a voice comes from, one of: the speaker of `seed`, an `embedding` string, or a
    24 kHz recording `clip` (checked: chattts_studio.core.voices.clone) with its transcript."""

    seed: int | None = None
    embedding: str | None = None
    clip: np.ndarray | None = field(default=None, repr=False)
    transcript: str = ""


def check_name_free(library: SpeakerLibrary, name: str, replace: bool = False) -> None:
    """SpeakerNameTaken unless `name` is free (or may be replaced): asked before any work."""
    if not replace and library.get(clean_name(name)) is not None:
        raise SpeakerNameTaken(clean_name(name))


def voice_from(engine: "Engine", source: VoiceSource, cancel: CancelToken | None = None) -> Voice:
    """The source's voice (a recording is cloned: seconds on a CPU); Cancelled after it when
    `cancel` was set meanwhile."""
    if source.clip is not None:
        voice = engine.clone_voice(source.clip, source.transcript)
    elif source.seed is not None:
        voice = Voice(embedding=engine.sample_speaker(source.seed))
    else:
        voice = Voice(embedding=engine.check_speaker(source.embedding or ""))
    if cancel is not None:
        cancel.check()
    return voice


def make_preview(
    engine: "Engine", voice: Voice, seed: int = 0, cancel: CancelToken | None = None
) -> np.ndarray:
    """The voice reading PREVIEW_TEXT (no refine pass: the preview is the voice, not fillers)."""
    request = SynthesisRequest(text=PREVIEW_TEXT, voice=voice, seed=seed, refine_text=False)
    plan = engine.plan(request)
    return plan.join(list(engine.synthesize(plan, None, cancel)))


def write_clip(library: SpeakerLibrary, folder: str, voice: Voice, audio: np.ndarray) -> str:
    """`audio` as FLAC in the library's `folder`, written atomically; its name relative to the
    library's folder (what the entry stores)."""
    import soundfile as sf

    relative = f"{folder}/{voice.key()}.flac"
    target = library.path.parent / relative
    data = np.clip(np.asarray(audio, dtype=np.float32), -1.0, 1.0)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        write_with(target, lambda tmp: sf.write(str(tmp), data, SAMPLE_RATE, format="FLAC"))
    except (OSError, ValueError, RuntimeError) as exc:
        raise SpeakerError(os_error_sentence("save", target, exc)) from None
    return relative


def keep_voice(
    library: SpeakerLibrary,
    engine: "Engine",
    name: str,
    voice: Voice,
    *,
    seed: int | None = None,
    note: str = "",
    replace: bool = False,
    preview: bool = True,
    recording: np.ndarray | None = None,
    cancel: CancelToken | None = None,
) -> SpeakerEntry:
    """Add `voice` to the library as `name` with its preview clip (and `recording`, a 24 kHz
    clip, when given). The name is checked before any work; if the entry cannot be saved, the
    files written for it are removed again: a failure adds nothing. `cancel` stops it (raising
    Cancelled, with nothing added) up to the moment the entry is added, not after."""
    if library.locked:
        raise SpeakerError(
            Sentence(
                QT_TRANSLATE_NOOP("core", "The speaker library cannot be changed: {problem}"),
                problem=library.problem,
            )
        )
    if not replace and library.get(clean_name(name)) is not None:
        raise SpeakerNameTaken(clean_name(name))
    engine.check_voice(voice)
    written: list[Path] = []
    try:
        files = {"preview": "", "recording": ""}
        if preview:
            files["preview"] = write_clip(
                library, PREVIEW_FOLDER, voice, make_preview(engine, voice, cancel=cancel)
            )
            written.append(library.path.parent / files["preview"])
        if recording is not None:
            files["recording"] = write_clip(library, RECORDING_FOLDER, voice, recording)
            written.append(library.path.parent / files["recording"])
        if cancel is not None:
            cancel.check()  # the last moment a cancel undoes the keep
        return library.add(
            name,
            voice.embedding,
            seed,
            note,
            replace,
            sample=voice.sample,
            transcript=voice.transcript,
            **files,
        )
    except BaseException:
        used = {f for e in library.entries for f in (e.preview, e.recording) if f}
        for path in written:
            if path.relative_to(library.path.parent).as_posix() not in used:
                path.unlink(missing_ok=True)
        raise


def keep_new_voice(
    library: SpeakerLibrary,
    engine: "Engine",
    name: str,
    source: VoiceSource,
    *,
    note: str = "",
    replace: bool = False,
    preview: bool = True,
    keep_recording: bool = False,
    cancel: CancelToken | None = None,
) -> SpeakerEntry:
    """The source's voice kept as `name` (the name checked first), with its preview clip
    unless `preview` is False and the recording when `keep_recording`; a cancel up to the
    moment the entry is added leaves the library and its folder as they were."""
    check_name_free(library, name, replace)
    voice = voice_from(engine, source, cancel)
    return keep_voice(
        library,
        engine,
        name,
        voice,
        seed=source.seed,
        note=note,
        replace=replace,
        preview=preview,
        recording=source.clip if keep_recording else None,
        cancel=cancel,
    )
