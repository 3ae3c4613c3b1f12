"""Who speaks and how, as synthesize and render_book take it: a library speaker or a seed's voice,
speed and sampling knobs, checked and turned into the SynthesisRequest the window and CLI make.
"""

from dataclasses import dataclass
from typing import Any

from mcp import types

from chattts_studio.core.engine.request import SynthesisRequest
from chattts_studio.core.errors import SpeakerError
from chattts_studio.core.mcp.arguments import Arguments
from chattts_studio.core.voices.voice import Voice

SEED_MOST = 2**31 - 1
DEFAULTS = SynthesisRequest(text="")
VOICE_ARGUMENTS = ("speaker", "seed", "speed", "temperature", "top_p", "top_k", "refine_text")


def writes_files(title: str, idempotent: bool) -> types.ToolAnnotations:
    """The hints of a tool that writes in the output folder and nowhere else (both tools)."""
    return types.ToolAnnotations(
        title=title,
        read_only_hint=False,
        destructive_hint=False,
        idempotent_hint=idempotent,
        open_world_hint=False,
    )


def voice_schema(refine_default: bool) -> dict[str, Any]:
    """The JSON Schema of the voice arguments (both tools take them)."""
    return {
        "speaker": {
            "type": "string",
            "description": "A voice from the speaker library, by its name (list_speakers "
            "lists them). Leave it out to use the voice of `seed`.",
        },
        "seed": {
            "type": "integer",
            "minimum": 0,
            "maximum": SEED_MOST,
            "default": DEFAULTS.seed,
            "description": "The voice, when no speaker is named: the same seed, the same "
            "voice. It also fixes the sampling, so the same call gives the same audio.",
        },
        "speed": {
            "type": "integer",
            "minimum": 0,
            "maximum": 9,
            "default": DEFAULTS.speed,
            "description": "How fast it speaks, ChatTTS's [speed_N]: 0 slowest, 5 normal, "
            "9 fastest.",
        },
        "temperature": {
            "type": "number",
            "minimum": 0.01,
            "maximum": 2.0,
            "default": DEFAULTS.temperature,
            "description": "Sampling temperature: lower is steadier, higher more varied.",
        },
        "top_p": {
            "type": "number",
            "minimum": 0.01,
            "maximum": 1.0,
            "default": DEFAULTS.top_p,
            "description": "Nucleus sampling: the share of probability the next code is "
            "drawn from.",
        },
        "top_k": {
            "type": "integer",
            "minimum": 1,
            "maximum": 100,
            "default": DEFAULTS.top_k,
            "description": "The next code is drawn from this many likeliest ones.",
        },
        "refine_text": {
            "type": "boolean",
            "default": refine_default,
            "description": "Let ChatTTS first rewrite the text with natural pauses and "
            "fillers (slower; the words may change slightly).",
        },
    }


@dataclass(frozen=True)
class VoiceAsk:
    """The voice arguments, checked (the speaker's name not yet looked up)."""

    speaker: str | None
    seed: int
    speed: int
    temperature: float
    top_p: float
    top_k: int
    refine_text: bool


def read_voice(args: Arguments, refine_default: bool) -> VoiceAsk:
    return VoiceAsk(
        speaker=args.name("speaker"),
        seed=args.whole("seed", 0, SEED_MOST, DEFAULTS.seed),
        speed=args.whole("speed", 0, 9, DEFAULTS.speed),
        temperature=args.number("temperature", 0.01, 2.0, DEFAULTS.temperature),
        top_p=args.number("top_p", 0.01, 1.0, DEFAULTS.top_p),
        top_k=args.whole("top_k", 1, 100, DEFAULTS.top_k),
        refine_text=args.flag("refine_text", refine_default),
    )


def library_voice(name: str) -> tuple[Voice, int | None]:
    """A library speaker's voice and the seed it came from; one sentence when the library has
    no speaker of that name (or cannot be read)."""
    from chattts_studio.core.voices.speakers import SpeakerLibrary

    library = SpeakerLibrary()
    entry = library.get(name)
    if entry is not None:
        return entry.voice, entry.seed
    if library.problem:
        raise SpeakerError(library.problem)
    count = len(library.entries)
    raise SpeakerError(
        f"The speaker library has no speaker named {name[:60]!r}; list_speakers lists the "
        f"{count} it has, or leave speaker out to use the voice of a seed."
    )


def request_for(text: str, ask: VoiceAsk) -> SynthesisRequest:
    """The request the window and `synth` would make: the library voice (its own seed, when
    it has one) or the voice of `seed`, and the pronunciation dictionary applied."""
    from chattts_studio.core.text.lexicon import LexiconStore

    voice, seed = (None, None) if ask.speaker is None else library_voice(ask.speaker)
    request = SynthesisRequest(
        text=text,
        seed=seed if seed is not None else ask.seed,
        temperature=ask.temperature,
        top_p=ask.top_p,
        top_k=ask.top_k,
        refine_text=ask.refine_text,
        speed=ask.speed,
        voice=voice,
        lexicon=LexiconStore().lexicon().entries,
    )
    request.validate()
    return request
