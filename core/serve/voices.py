"""The voices the speech API accepts, resolved to what the batcher reads: a library speaker
(by its whole name first: a name may hold a '+'), an OpenAI voice name (a fixed seed's
speaker), seed:N, a speaker embedding string, or a blend of up to MAX_PARTS of those
("alloy*0.7+seed:42*0.3", weights normalised; core/voices/blend.py). A cloned library voice
speaks through its recording's codes, not an embedding: it is usable alone, never in a blend.
Every refusal is an ApiError naming the voice field."""

from typing import Any

from chattts_studio.core.engine.engine import Engine
from chattts_studio.core.engine.request import SpeakerLike
from chattts_studio.core.errors import NotAnEmbedding, StudioError
from chattts_studio.core.serve.errors import ApiError
from chattts_studio.core.serve.request import voice_seed
from chattts_studio.core.voices.blend import blend_speakers, looks_like_blend
from chattts_studio.core.voices.speaker_file import MAX_NAME
from chattts_studio.core.voices.voice import OPENAI_VOICES


class ApiVoices:
    """Blocking (the library file, decoding): called off the event loop."""

    def __init__(self, engine: Engine, hidden_size: int, max_part: int) -> None:
        # max_part: the longest single voice (name or embedding string) this model has.
        self.engine, self.hidden_size, self.max_part = engine, hidden_size, max_part

    def voice(self, name: str) -> tuple[SpeakerLike, int | None]:
        """(speaker, seed it came from or None): an embedding string, or for a cloned library
        voice the Voice as synthesis reads it."""
        from chattts_studio.core.voices.speakers import SpeakerLibrary

        library = SpeakerLibrary.open_or_locked()
        entry = library.get(name)  # the whole string first: a library name may hold a '+'
        if entry is not None:
            # Checked before the request is queued, as synth checks a library voice (a
            # cloned voice's transcript normalised the same way, so the prompt and with it
            # the audio are the ones synth would make): a damaged entry is a 400 on `voice`,
            # not a failure after queueing.
            try:
                if entry.cloned:
                    return self.engine.check_voice(entry.voice), entry.seed
                return self.engine.check_speaker(entry.embedding), entry.seed
            except StudioError as exc:
                raise ApiError(400, f"The voice '{name}' cannot be used: {exc}", "voice") from None
        if name.lower() not in OPENAI_VOICES and looks_like_blend(name):
            return self.blend(name, library)
        return self.embedding_voice(name)

    def embedding_voice(self, name: str) -> tuple[str, int | None]:
        """An OpenAI name, seed:N or an embedding string: (its embedding, its seed or None)."""
        seed = voice_seed(name)
        if seed is not None:
            return self.engine.sample_speaker(seed), seed
        if len(name) > self.max_part:  # only a blend may be longer; this is none
            raise ApiError(
                400,
                f"The voice has {len(name)} characters; no voice of this model is longer than "
                f"{self.max_part}.",
                "voice",
            )
        try:
            # Bounded: the string is no longer than an embedding, and decoding stops past the
            # model's hidden size.
            return self.engine.check_speaker(name), None
        except StudioError as exc:
            if len(name) <= MAX_NAME and isinstance(exc, NotAnEmbedding):
                # Short enough to be a name, and no embedding: most likely a mistyped name.
                raise ApiError(
                    400,
                    f"Unknown voice '{name[:60]}': use a library speaker's name, seed:N, "
                    "or a speaker embedding.",
                    "voice",
                ) from None
            raise ApiError(400, str(exc), "voice") from None

    def blend(self, spec: str, library: Any) -> tuple[str, int | None]:
        """A blend's embedding, and the seed of its first part (None when it has none): so a
        blend of a voice with itself is that voice, its seed included."""
        seeds: list[int | None] = []

        def part(source: str) -> str:
            entry = library.get(source)
            if entry is not None:
                if entry.cloned:
                    raise ApiError(
                        400,
                        f"The voice '{source[:60]}' is cloned from a recording and has no "
                        "embedding to blend: blend library embeddings, OpenAI names, seed:N "
                        "or embedding strings.",
                        "voice",
                    )
                seeds.append(entry.seed)
                return str(entry.embedding)
            embedding, seed = self.embedding_voice(source)
            seeds.append(seed)
            return embedding

        try:
            return blend_speakers(spec, part, self.hidden_size), seeds[0] if seeds else None
        except StudioError as exc:
            raise ApiError(400, str(exc), "voice") from None
