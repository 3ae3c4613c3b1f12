"""A speech request's body: its schema (for /openapi.json) and each field checked by hand, so a
wrong one is a 400 in OpenAI's shape naming the field. Unknown fields are ignored, as OpenAI's
clients send newer ones.
"""

import json
import math
from dataclasses import dataclass, field
from typing import Any

from chattts_studio.core.engine.request import SEGMENT_SIZE_RANGE, RefineSettings, Sampling
from chattts_studio.core.serve.audio import CONTENT_TYPES
from chattts_studio.core.serve.errors import ApiError
from chattts_studio.core.voices.voice import OPENAI_VOICES

MODEL_IDS = ("chattts", "tts-1", "tts-1-hd", "gpt-4o-mini-tts")
SEED_LIMIT = 2**31  # seeds are 0 .. 2**31 - 1
SEED_DIGITS = len(str(SEED_LIMIT - 1))
SPEED_RANGE = (0.25, 4.0)


# Per-request control, in SynthesisRequest.validate's ranges: what the window and
# `synth` accept, the API accepts.
TEMPERATURE_RANGE = (0.01, 2.0)
TOP_P_RANGE = (0.01, 1.0)
TOP_K_RANGE = (1, 100)
LEVEL_RANGES = {"oral": (0, 9), "laugh": (0, 2), "break": (0, 7)}  # refine's [oral_N] ...
LEVEL_DEFAULTS = {"oral": 2, "laugh": 0, "break": 6}  # SynthesisRequest's
STREAM_FORMATS = ("audio", "sse")
CAPTION_KINDS = ("srt", "vtt", "json")
MAX_INSTRUCTIONS = 4096  # OpenAI's own limit


@dataclass(frozen=True)
class SpeechFields:
    model: str
    text: str
    voice: str
    fmt: str
    speed: float
    seed: int | None  # None: the voice's own seed, else 0
    speed_given: bool = False  # the body set speed (instructions' speed words then yield)
    temperature: float | None = None  # None: the batcher's own
    top_p: float | None = None
    top_k: int | None = None
    refine_text: bool = False
    levels: dict[str, int] = field(default_factory=dict)  # refine levels the body set
    segment_size: int | None = None
    stream_format: str = "audio"
    captions: str | None = None
    instructions: str | None = None


def speed_token(speed: float) -> int:
    """OpenAI's speed (0.25-4, 1 normal) as ChatTTS's [speed_N] (0-9, 5 normal)."""
    return max(0, min(9, round(5 + 2 * math.log2(speed))))


def parse_body(raw: bytes) -> Any:
    try:
        return json.loads(raw)
    except (ValueError, UnicodeDecodeError, RecursionError):  # nesting deeper than Python's
        raise ApiError(400, "The request body is not valid JSON.") from None


def _number(body: dict[str, Any], name: str, low: float, high: float) -> float | None:
    value = body.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not low <= value <= high:
        raise ApiError(400, f"The {name} must be a number from {low} to {high}.", name)
    return float(value)


def _whole(body: dict[str, Any], name: str, low: int, high: int) -> int | None:
    value = body.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ApiError(400, f"The {name} must be a whole number from {low} to {high}.", name)
    return value


def _choice(body: dict[str, Any], name: str, choices: tuple[str, ...]) -> str | None:
    value = body.get(name)
    if value is not None and (not isinstance(value, str) or value not in choices):
        raise ApiError(400, f"The {name} must be one of {', '.join(choices)}.", name)
    return value


def read_fields(
    body: Any,
    models: tuple[str, ...],
    max_input: int,
    max_voice: int,
    captions: str | None = None,
) -> SpeechFields:
    """The request's fields, each checked for its type and range (cheap: nothing decoded).
    `captions`: the route's own default (captioned_speech: json)."""
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
        # Longer than a blend of the most embeddings a blend holds: refused before decoding.
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
    seed = _whole(body, "seed", 0, SEED_LIMIT - 1)
    instructions = body.get("instructions")
    if instructions is not None and (
        not isinstance(instructions, str) or len(instructions) > MAX_INSTRUCTIONS
    ):
        raise ApiError(
            400,
            f"The instructions must be a string of at most {MAX_INSTRUCTIONS} characters.",
            "instructions",
        )
    refine = body.get("refine_text")
    if refine is not None and not isinstance(refine, bool):
        raise ApiError(400, "The refine_text must be true or false.", "refine_text")
    levels: dict[str, int] = {}
    for name, (level_low, level_high) in LEVEL_RANGES.items():
        level = _whole(body, name, level_low, level_high)
        if level is not None:
            levels[name] = level
    if levels and not refine:
        # A level alone would change nothing: refine-text is what reads it.
        name = next(iter(levels))
        raise ApiError(
            400, f"The {name} level is used by refine-text: send refine_text: true with it.", name
        )
    return SpeechFields(
        model,
        text,
        voice.strip(),
        fmt,
        float(speed),
        seed,
        speed_given=body.get("speed") is not None,
        temperature=_number(body, "temperature", *TEMPERATURE_RANGE),
        top_p=_number(body, "top_p", *TOP_P_RANGE),
        top_k=_whole(body, "top_k", *TOP_K_RANGE),
        refine_text=bool(refine),
        levels=levels,
        segment_size=_whole(body, "segment_size", *SEGMENT_SIZE_RANGE),
        stream_format=_choice(body, "stream_format", STREAM_FORMATS) or "audio",
        captions=_choice(body, "captions", CAPTION_KINDS) or captions,
        instructions=instructions,
    )


def sampling_for(
    fields: SpeechFields, base: Sampling, levels: dict[str, int]
) -> tuple[Sampling | None, RefineSettings | None]:
    """The request's own sampling (None: the batcher's, `base`) and its refine-text settings,
    made as the engine makes them from a SynthesisRequest: its top-P/top-K, the three levels."""
    top_p = base.top_p if fields.top_p is None else fields.top_p
    top_k = base.top_k if fields.top_k is None else fields.top_k
    sampling = None
    if (fields.temperature, fields.top_p, fields.top_k) != (None, None, None):
        temperature = base.temperature if fields.temperature is None else fields.temperature
        sampling = Sampling(temperature, top_p, top_k, base.repetition_penalty)
    refine = None
    if fields.refine_text:
        prompt = f"[oral_{levels['oral']}][laugh_{levels['laugh']}][break_{levels['break']}]"
        refine = RefineSettings(prompt, top_p, top_k)
    return sampling, refine


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
                        "description": "A speaker library name, a speaker embedding string "
                        "or a blend of voices.",
                    },
                ],
                "description": "An OpenAI voice name, seed:N (N below 2147483648), a speaker "
                "library name, a speaker embedding string, or a blend of up to 8 of them "
                "(alloy*0.7+seed:42*0.3; weights normalised).",
            },
            "response_format": {"type": "string", "enum": list(CONTENT_TYPES), "default": "mp3"},
            "speed": {
                "type": "number",
                "minimum": SPEED_RANGE[0],
                "maximum": SPEED_RANGE[1],
                "default": 1.0,
            },
            # Optional fields a client may also send as null (OpenAI's own clients omit them;
            # they send ours through extra_body).
            "seed": {"type": ["integer", "null"], "minimum": 0, "maximum": SEED_LIMIT - 1},
            "instructions": {
                "type": ["string", "null"],
                "maxLength": MAX_INSTRUCTIONS,
                "description": "Speed words, laughing and pauses are mapped to ChatTTS's own "
                "controls; the rest is ignored. The X-Instructions header says which.",
            },
            "stream_format": {"enum": [*STREAM_FORMATS, None], "default": "audio"},
            "temperature": _range("number", TEMPERATURE_RANGE, "Sampling temperature."),
            "top_p": _range("number", TOP_P_RANGE, "Top-P of sampling (and of refine-text)."),
            "top_k": _range("integer", TOP_K_RANGE, "Top-K of sampling (and of refine-text)."),
            "refine_text": {
                "type": ["boolean", "null"],
                "default": False,
                "description": "Run ChatTTS's refine-text pass (adds pauses, fillers, laughs) "
                "first.",
            },
            **{
                name: _range(
                    "integer",
                    LEVEL_RANGES[name],
                    f"refine-text's [{name}_N] level (default {LEVEL_DEFAULTS[name]}); only "
                    "with refine_text: true.",
                )
                for name in LEVEL_RANGES
            },
            "segment_size": _range(
                "integer", SEGMENT_SIZE_RANGE, "Characters per segment (default 50)."
            ),
            "captions": {
                "enum": [*CAPTION_KINDS, None],
                "description": "Answer with JSON: the audio (base64) and its captions.",
            },
        },
    }


def _range(kind: str, bounds: tuple[float, float], description: str) -> dict[str, Any]:
    """An optional field's schema: a number in `bounds`, or null for the default."""
    return {
        "type": [kind, "null"],
        "minimum": bounds[0],
        "maximum": bounds[1],
        "description": description,
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
