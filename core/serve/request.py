"""A speech request's body: its schema (for /openapi.json and the clients made from it) and
each field's type and range checked by hand, so a wrong one is a 400 in OpenAI's shape that
names the field. Fields a client sends that the API does not know are ignored, as OpenAI's
clients send newer ones."""

import json
from dataclasses import dataclass
from typing import Any

from chattts_studio.core.serve.audio import CONTENT_TYPES
from chattts_studio.core.serve.errors import ApiError

MODEL_IDS = ("chattts", "tts-1", "tts-1-hd", "gpt-4o-mini-tts")
# OpenAI's voice names, so clients that only know them work: each is a fixed seed's speaker.
OPENAI_VOICES = {
    name: 1000 + i
    for i, name in enumerate(
        "alloy ash ballad coral echo fable onyx nova sage shimmer verse marin cedar".split()
    )
}
SEED_LIMIT = 2**31  # seeds are 0 .. 2**31 - 1
SEED_DIGITS = len(str(SEED_LIMIT - 1))
SPEED_RANGE = (0.25, 4.0)


@dataclass(frozen=True)
class SpeechFields:
    model: str
    text: str
    voice: str
    fmt: str
    speed: float
    seed: int | None  # None: the voice's own seed, else 0


def parse_body(raw: bytes) -> Any:
    try:
        return json.loads(raw)
    except (ValueError, UnicodeDecodeError, RecursionError):  # nesting deeper than Python's
        raise ApiError(400, "The request body is not valid JSON.") from None


def read_fields(body: Any, models: tuple[str, ...], max_input: int, max_voice: int) -> SpeechFields:
    """The request's fields, each checked for its type and range (cheap: nothing decoded)."""
    if not isinstance(body, dict):
        raise ApiError(400, "The request body must be a JSON object.")
    model = body.get("model")
    if not isinstance(model, str) or model not in models:
        raise ApiError(
            404 if isinstance(model, str) else 400,
            f"The model must be one of {', '.join(models)}.",
            "model",
            "model_not_found",
        )
    text = body.get("input")
    if not isinstance(text, str) or not text.strip():
        raise ApiError(400, "The input must be a non-empty string.", "input")
    if len(text) > max_input:
        raise ApiError(
            413,
            f"The input has {len(text)} characters; the limit is {max_input}.",
            "input",
            "input_too_long",
        )
    voice = body.get("voice")
    if not isinstance(voice, str) or not voice.strip():
        raise ApiError(400, "The voice must be a non-empty string.", "voice")
    if len(voice) > max_voice:
        # Longer than any speaker embedding this model can have: refused before decoding.
        raise ApiError(
            400,
            f"The voice has {len(voice)} characters; no voice of this model is longer than "
            f"{max_voice}.",
            "voice",
        )
    fmt = body.get("response_format", "mp3")
    if not isinstance(fmt, str) or fmt not in CONTENT_TYPES:
        raise ApiError(
            400,
            f"The response_format must be one of {', '.join(CONTENT_TYPES)}.",
            "response_format",
        )
    speed = body.get("speed", 1.0)
    low, high = SPEED_RANGE
    if isinstance(speed, bool) or not isinstance(speed, int | float) or not low <= speed <= high:
        raise ApiError(400, f"The speed must be a number from {low} to {high}.", "speed")
    seed = body.get("seed")
    if seed is not None and (
        isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < SEED_LIMIT
    ):
        raise ApiError(400, f"The seed must be a whole number from 0 to {SEED_LIMIT - 1}.", "seed")
    for name in ("instructions", "stream_format"):  # OpenAI's; read as text, not used
        if body.get(name) is not None and not isinstance(body[name], str):
            raise ApiError(400, f"The {name} must be a string.", name)
    if body.get("stream_format") not in (None, "audio"):
        raise ApiError(
            400, "The stream_format must be audio; events are not sent.", "stream_format"
        )
    return SpeechFields(model, text, voice.strip(), fmt, float(speed), seed)


def voice_seed(voice: str) -> int | None:
    """The seed a voice names (an OpenAI name, or seed:N in ASCII digits), or None."""
    named = OPENAI_VOICES.get(voice.lower())
    if named is not None:
        return named
    if not voice.startswith("seed:"):
        return None
    digits = voice[5:]
    # isdigit() takes "²" and other digits int() refuses; ASCII only, and no more digits
    # than the largest seed has, so int() never meets a 100,000-digit number.
    if not (digits.isascii() and digits.isdecimal()) or len(digits) > SEED_DIGITS:
        raise ApiError(400, f"A voice seed:N needs N as digits 0-9 below {SEED_LIMIT}.", "voice")
    seed = int(digits)
    if seed >= SEED_LIMIT:
        raise ApiError(400, f"A voice seed must be below {SEED_LIMIT}.", "voice")
    return seed


def speech_schema(models: tuple[str, ...], max_input: int, max_voice: int) -> dict[str, Any]:
    """The request body's JSON schema, as /openapi.json shows it."""
    return {
        "type": "object",
        "required": ["model", "input", "voice"],
        "properties": {
            "model": {"type": "string", "enum": list(models)},
            "input": {"type": "string", "minLength": 1, "maxLength": max_input},
            "voice": {
                "anyOf": [
                    {"type": "string", "enum": list(OPENAI_VOICES)},
                    {"type": "string", "pattern": f"^seed:[0-9]{{1,{SEED_DIGITS}}}$"},
                    {
                        "type": "string",
                        "minLength": 1,
                        "maxLength": max_voice,
                        "description": "A speaker library name or a speaker embedding string.",
                    },
                ],
                "description": "An OpenAI voice name, seed:N (N below 2147483648), a speaker "
                "library name or a speaker embedding string.",
            },
            "response_format": {"type": "string", "enum": list(CONTENT_TYPES), "default": "mp3"},
            "speed": {
                "type": "number",
                "minimum": SPEED_RANGE[0],
                "maximum": SPEED_RANGE[1],
                "default": 1.0,
            },
            # Optional fields a client may also send as null (OpenAI's own clients omit them).
            "seed": {"type": ["integer", "null"], "minimum": 0, "maximum": SEED_LIMIT - 1},
            "instructions": {"type": ["string", "null"], "description": "Accepted and not used."},
            "stream_format": {"enum": ["audio", None], "default": "audio"},
        },
    }


ERROR_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["error"],
    "properties": {
        "error": {
            "type": "object",
            "required": ["message", "type", "param", "code"],
            "properties": {
                "message": {"type": "string"},
                "type": {"type": "string"},
                "param": {"type": ["string", "null"]},
                "code": {"type": ["string", "null"]},
            },
        }
    },
}
