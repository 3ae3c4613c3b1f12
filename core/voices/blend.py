"""Voice blends: "alloy*0.7+seed:42*0.3" (or Kokoro's "alloy(7)+seed:42(3)") is a speaker
whose embedding is the weighted mean of its parts' embeddings, weights normalised to sum to 1.

A part is anything that names an embedding where the blend is used (a library speaker, an
OpenAI voice name, seed:N, an embedding string); the caller resolves it. A cloned voice has
no embedding to mix (it speaks through its sample's codes), so it cannot be blended. Parts
that name the same voice are merged first, so a blend of a voice with itself is that voice,
bit for bit (no fp16 round trip).
"""

import math
import re
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch

from chattts_studio.core.engine.chattts.speaker_codec import decode_speaker, encode_speaker
from chattts_studio.core.errors import SpeakerError

MAX_PARTS = 8
_WEIGHT = r"(?:\d{1,6}(?:\.\d{0,6})?|\.\d{1,6})"  # bounded: never a 10,000-digit number
_STAR = re.compile(rf"^(.+?)\s*\*\s*({_WEIGHT})$")
_PAREN = re.compile(rf"^(.+?)\s*\(\s*({_WEIGHT})\s*\)$")


@dataclass(frozen=True)
class BlendPart:
    source: str  # what names the voice: resolved by the caller
    weight: float  # normalised: the parts' weights sum to 1


def looks_like_blend(spec: str) -> bool:
    """Whether `spec` is written as a blend (a '+' between parts, or one weighted part).
    A library name may contain '+' too: callers try the whole string as a voice first."""
    return "+" in spec or bool(_STAR.match(spec.strip()) or _PAREN.match(spec.strip()))


def parse_blend(spec: str) -> list[BlendPart]:
    """The blend's parts, identical sources merged, weights normalised; SpeakerError with one
    sentence for a malformed blend."""
    pieces = [p.strip() for p in spec.split("+")]
    if len(pieces) > MAX_PARTS:
        raise SpeakerError(f"A voice blend has at most {MAX_PARTS} parts.")
    weights: dict[str, float] = {}
    for piece in pieces:
        if not piece:
            raise SpeakerError(
                "A voice blend has an empty part: write it as voice*weight+voice*weight."
            )
        match = _STAR.match(piece) or _PAREN.match(piece)
        source, weight = (match.group(1).strip(), float(match.group(2))) if match else (piece, 1.0)
        if not math.isfinite(weight) or weight <= 0:
            raise SpeakerError(f"The weight of '{source[:40]}' in the blend must be above 0.")
        weights[source] = weights.get(source, 0.0) + weight
    total = sum(weights.values())
    return [BlendPart(source, weight / total) for source, weight in weights.items()]


def mix_embeddings(parts: list[tuple[np.ndarray, float]]) -> torch.Tensor:
    """The weighted sum (weights already normalised) of fp16 embeddings, in fp32."""
    if len({len(values) for values, _ in parts}) != 1:
        raise SpeakerError("The voices in a blend come from models of different sizes.")
    mixed = np.zeros(len(parts[0][0]), dtype=np.float32)
    for values, weight in parts:
        mixed += values.astype(np.float32) * np.float32(weight)
    return torch.from_numpy(mixed)


def blend_speakers(spec: str, resolve: Callable[[str], str], values: int) -> str:
    """The speaker string of the blend `spec`. `resolve` turns a part's source into its
    embedding string (SpeakerError for an unknown or cloned voice); `values` is the model's
    hidden size (an embedding's length)."""
    parts = parse_blend(spec)
    strings = [(resolve(part.source), part.weight) for part in parts]
    if len({s for s, _ in strings}) == 1:  # one voice, however it was named
        return strings[0][0]
    decoded = [(decode_speaker(s, values), w) for s, w in strings]
    return encode_speaker(mix_embeddings(decoded))
