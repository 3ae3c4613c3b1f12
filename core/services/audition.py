"""Auditions: one sentence read by several new speakers at once (one row each in one batched
pass), by a voice cloned from a recording before it is kept, or by a voice blend."""

import random
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

import numpy as np

from chattts_studio.core.engine.cancel import CancelToken
from chattts_studio.core.engine.request import SynthesisRequest

if TYPE_CHECKING:
    from chattts_studio.core.engine.engine import Engine
    from chattts_studio.core.voices.voice import Voice

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
    from chattts_studio.core.services.keep_voice import VoiceSource, voice_from

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
