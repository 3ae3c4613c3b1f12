"""Voice blends: "alloy*0.7+seed:42*0.3" (or Kokoro's "alloy(7)+seed:42(3)") is a speaker whose
embedding is the weighted mean of its parts', the weights normalised to sum to 1.

The caller resolves each part (a library speaker, an OpenAI voice, seed:N, an embedding string); a
cloned voice has no embedding to blend. Parts naming the same voice merge first, so a voice blended
with itself is that voice bit for bit. A whole string that is a library name is that speaker. torch
is imported only to mix: the window parses blends on its UI thread."""

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

import numpy as np

from chattts_studio.core.errors import SpeakerError
from chattts_studio.core.messages import QT_TRANSLATE_NOOP, Sentence
from chattts_studio.core.seeds import MAX_SEED
from chattts_studio.core.voices.voice import OPENAI_VOICES, Voice

if TYPE_CHECKING:
    import torch

MAX_PARTS = 8
EMBEDDING_LEAST = 100  # characters: shorter is a name (a model's embedding string is longer)
SHOWN = 40  # characters of a part said back in a sentence (an embedding is 150)
_WEIGHT = r"(?:\d{1,6}(?:\.\d{0,6})?|\.\d{1,6})"  # bounded: never a 10,000-digit number
_WEIGHT_ONLY = re.compile(_WEIGHT)
_PAREN = re.compile(rf"^(.*\S)\(\s*({_WEIGHT})\s*\)$")
_SEED = re.compile(r"^(?:seed:\s*)?(\d{1,12})$", re.IGNORECASE)


@dataclass(frozen=True)
class BlendPart:
    source: str  # what names the voice: resolved by the caller
    weight: float  # normalised: the parts' weights sum to 1


class SpeakerSource(Protocol):
    """What resolves a part: the loaded model (Engine) or a stand-in."""

    def sample_speaker(self, seed: int) -> str: ...

    def check_speaker(self, embedding: str) -> str: ...

    def speaker_dim(self) -> int: ...


def looks_like_blend(spec: str) -> bool:
    """Whether `spec` is written as a blend (a '+' between parts, or one weighted part).
    A library name may contain '+' too: callers try the whole string as a voice first."""
    text = spec.strip()
    return "+" in text or _starred(text) is not None or bool(_PAREN.match(text))


def _starred(piece: str) -> tuple[str, float] | None:
    """ "name*0.5" as (name, 0.5), split at the last '*' (no regex over the name: a pattern
    around it backtracks quadratically on a long run of spaces, and names may be long)."""
    head, star, tail = piece.rpartition("*")
    if star and head.strip() and _WEIGHT_ONLY.fullmatch(tail.strip()):
        return head.strip(), float(tail)
    return None


def _part(piece: str) -> tuple[str, float]:
    starred = _starred(piece)
    if starred is not None:
        return starred
    match = _PAREN.match(piece)
    if match:
        return match.group(1).strip(), float(match.group(2))
    if "*" in piece:
        raise SpeakerError(
            Sentence(
                QT_TRANSLATE_NOOP(
                    "core",
                    "The weight of '{part}' in the voice blend is not a number: write it as "
                    "voice*0.5.",
                ),
                part=piece[:SHOWN],
            )
        )
    return piece, 1.0


def parse_blend(spec: str) -> list[BlendPart]:
    """The blend's parts, identical sources merged, weights normalised; SpeakerError with one
    sentence for a malformed blend."""
    pieces = [p.strip() for p in spec.split("+")]
    if len(pieces) > MAX_PARTS:
        raise SpeakerError(
            Sentence(
                QT_TRANSLATE_NOOP("core", "A voice blend has at most {count} parts."),
                count=MAX_PARTS,
            )
        )
    weights: dict[str, float] = {}
    for piece in pieces:
        if not piece:
            raise SpeakerError(
                QT_TRANSLATE_NOOP(
                    "core",
                    "A voice blend has an empty part: write it as voice*weight+voice*weight.",
                )
            )
        source, weight = _part(piece)
        if not math.isfinite(weight) or weight <= 0:
            raise SpeakerError(
                Sentence(
                    QT_TRANSLATE_NOOP(
                        "core", "The weight of '{part}' in the voice blend must be above 0."
                    ),
                    part=source[:SHOWN],
                )
            )
        weights[source] = weights.get(source, 0.0) + weight
    total = sum(weights.values())
    return [BlendPart(source, weight / total) for source, weight in weights.items()]


def format_blend(parts: list[tuple[str, float]]) -> str:
    """The spec of (source, weight) parts as parse_blend reads it back: "A*0.7+seed:42*0.3"."""
    return "+".join(f"{source}*{round(weight, 6):g}" for source, weight in parts)


def seed_of(source: str) -> int | None:
    """The voice seed a part names ("42", "seed:42", or an OpenAI voice name such as "alloy",
    each a fixed seed), or None when it names no seed."""
    named = OPENAI_VOICES.get(source.strip().lower())
    if named is not None:
        return named
    match = _SEED.match(source.strip())
    if match is None:
        return None
    seed = int(match.group(1))
    if seed > MAX_SEED:
        raise SpeakerError(
            Sentence(
                QT_TRANSLATE_NOOP("core", "A voice seed must be at most {most}."), most=MAX_SEED
            )
        )
    return seed


def cloned_part(name: str) -> SpeakerError:
    return SpeakerError(
        Sentence(
            QT_TRANSLATE_NOOP(
                "core",
                "'{name}' is a cloned voice: it speaks through its recording, which a voice "
                "blend cannot mix; blend speakers with an embedding (seeds, kept seeds).",
            ),
            name=name[:SHOWN],
        )
    )


def unknown_part(name: str) -> SpeakerError:
    return SpeakerError(
        Sentence(
            QT_TRANSLATE_NOOP(
                "core",
                "'{name}' in the voice blend is not a library speaker, a voice seed ({example}) "
                "or a speaker embedding.",
            ),
            name=name[:SHOWN],
            example="seed:42",  # syntax, not words: never translated
        )
    )


def check_library_parts(spec: str, voices: Mapping[str, Voice]) -> list[BlendPart]:
    """The blend's parts, checked without a model: well formed, no cloned voice, every short
    part a library speaker or a seed (an embedding string is checked once a model is loaded)."""
    parts = parse_blend(spec)
    for part in parts:
        voice = voices.get(part.source)
        if voice is not None:
            if voice.cloned or not voice.embedding:
                raise cloned_part(part.source)
        elif seed_of(part.source) is None and len(part.source) < EMBEDDING_LEAST:
            raise unknown_part(part.source)
    return parts


def library_resolver(voices: Mapping[str, Voice], model: SpeakerSource) -> Callable[[str], str]:
    """How synth, manifests and the window resolve a part: a library speaker (by name) to its
    embedding, "42" / "seed:42" to that seed's speaker, anything else as an embedding string."""

    def resolve(source: str) -> str:
        voice = voices.get(source)
        if voice is not None:
            if voice.cloned or not voice.embedding:
                raise cloned_part(source)
            return model.check_speaker(voice.embedding)
        seed = seed_of(source)
        if seed is not None:
            return model.sample_speaker(seed)
        try:
            return model.check_speaker(source)
        except SpeakerError:
            if len(source) < EMBEDDING_LEAST:  # a name mistyped, not a damaged embedding
                raise unknown_part(source) from None
            raise

    return resolve


def mix_embeddings(parts: list[tuple[np.ndarray, float]]) -> "torch.Tensor":
    """The weighted sum (weights already normalised) of fp16 embeddings, in fp32."""
    import torch

    if len({len(values) for values, _ in parts}) != 1:
        raise SpeakerError(
            QT_TRANSLATE_NOOP("core", "The voices in a blend come from models of different sizes.")
        )
    mixed = np.zeros(len(parts[0][0]), dtype=np.float32)
    for values, weight in parts:
        mixed += values.astype(np.float32) * np.float32(weight)
    return torch.from_numpy(mixed)


def blend_speakers(spec: str, resolve: Callable[[str], str], values: int) -> str:
    """The speaker string of the blend `spec`. `resolve` turns a part's source into its
    embedding string (SpeakerError for an unknown or cloned voice); `values` is the model's
    hidden size (an embedding's length)."""
    from chattts_studio.core.voices.speaker_codec import decode_speaker, encode_speaker

    weights: dict[str, float] = {}  # parts naming one voice differently ("42", "seed:42")
    for part in parse_blend(spec):
        embedding = resolve(part.source)
        weights[embedding] = weights.get(embedding, 0.0) + part.weight
    if len(weights) == 1:  # one voice, however it was named
        return next(iter(weights))
    try:
        decoded = [(decode_speaker(s, values), w) for s, w in weights.items()]
    except ValueError:  # a resolver that checks nothing handed over a wrong string
        raise SpeakerError(
            QT_TRANSLATE_NOOP("core", "A part of the voice blend is not a speaker embedding.")
        ) from None
    return encode_speaker(mix_embeddings(decoded))


def blend_seed(spec: str, seeds: Mapping[str, int | None]) -> int | None:
    """The sampling seed a blend brings when none is given, as the API takes it: its first
    part's (a library speaker's kept seed, by name in `seeds`, or the seed the part names).
    So a blend of a voice with itself reads exactly as that voice does."""
    first = parse_blend(spec)[0].source
    return seeds[first] if first in seeds else seed_of(first)


def library_blend(spec: str, voices: Mapping[str, Voice], model: SpeakerSource) -> str:
    """The speaker string of `spec` as synth, manifests and the window read it: its parts
    library speakers (`voices`, by name), seeds or embedding strings (library_resolver)."""
    return blend_speakers(spec, library_resolver(voices, model), model.speaker_dim())


def blend_note(spec: str) -> str:
    """What a kept blend's library note says of it: its parts and their shares."""
    # Data in the library file, shared with the command line: English, as the CLI's notes.
    return "Blend of " + ", ".join(f"{p.source[:SHOWN]} {p.weight:.0%}" for p in parse_blend(spec))
