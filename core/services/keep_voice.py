"""Keeping a voice: from the speaker of a seed, an embedding string, or a recording with its
transcript (cloned), into the speaker library as a name, with its preview clip (and the
recording itself when asked) written beside it (core/voices/keep.py)."""

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from chattts_studio.core.engine.cancel import CancelToken
from chattts_studio.core.voices.keep import keep_voice
from chattts_studio.core.voices.speaker_file import SpeakerEntry, SpeakerNameTaken, clean_name
from chattts_studio.core.voices.speakers import SpeakerLibrary
from chattts_studio.core.voices.voice import Voice

if TYPE_CHECKING:
    from chattts_studio.core.engine.engine import Engine


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
