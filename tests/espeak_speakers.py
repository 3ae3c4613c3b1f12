"""Speakers that are espeak-ng voices, for the voice check's tests of auditions and stability:
an engine's `audition` whose every speaker reads the request's text in the espeak-ng voices
given for it, one after another from pass to pass (a steady speaker has one voice, a wandering
one several). Real speech, so the real CAM++ encoder can tell them apart."""

import collections
from collections.abc import Callable, Mapping, Sequence

import numpy as np
from scipy.signal import resample_poly

from chattts_studio.core.devtools.voiceeer import speak
from chattts_studio.core.voices.voice import Voice


class EspeakVoices:
    """Called as Engine.audition(request, speakers, cancel): one 24 kHz clip per speaker.
    `speaks` maps a speaker's embedding to its espeak-ng voices, or lists them in the order the
    speakers first come. `texts` keeps each pass's text; `during(pass number)` runs in a pass."""

    def __init__(
        self,
        speaks: Mapping[str, list[str]] | Sequence[list[str]],
        during: Callable[[int], object] | None = None,
    ) -> None:
        self.given = speaks
        self.speaks: dict[str, list[str]] = dict(speaks) if isinstance(speaks, Mapping) else {}
        self.turns: collections.Counter[str] = collections.Counter()
        self.texts: list[str] = []
        self.during = during

    def __call__(self, request, speakers, cancel=None) -> list[np.ndarray]:  # type: ignore[no-untyped-def]
        keys = [s.embedding if isinstance(s, Voice) else s for s in speakers]
        if not self.speaks:
            self.speaks = dict(zip(keys, self.given, strict=True))  # type: ignore[arg-type]
        self.texts.append(request.text)
        if self.during is not None:
            self.during(len(self.texts))
        clips = []
        for key in keys:
            names = self.speaks[key]
            audio, _rate = speak(names[self.turns[key] % len(names)], request.text)
            self.turns[key] += 1
            clips.append(resample_poly(audio, 160, 147).astype(np.float32))  # 22,050 to 24 kHz
        return clips

    def order(self, embeddings: Sequence[str]) -> list[int]:
        """Each speaker's place among the speakers as they first came."""
        return [list(self.speaks).index(e) for e in embeddings]
