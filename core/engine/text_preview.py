"""What the model will read, shown before any model is loaded: a text's segments with the
pronunciation dictionary applied and ChatTTS's normaliser run with Studio's number reading (the
window's dictionary panel and `lexicon preview`)."""

from dataclasses import dataclass
from typing import Any

from chattts_studio.core.text.lexicon import Lexicon


@dataclass(frozen=True)
class PreviewLine:
    shown: str  # the segment as written
    model_text: str  # what the model reads: dictionary applied, numbers read out


_NORMALIZER: list[Any] = []


def preview(text: str, lexicon: Lexicon | None, segment_size: int = 50) -> list[PreviewLine]:
    """What the model will read, segment by segment: the dictionary applied, then ChatTTS's
    normaliser with Studio's number reading (no model needed). Raises BadTextError."""
    from chattts_studio.core.engine.chattts.chat import text_normalizer
    from chattts_studio.core.text.numbers import NUMBER_READERS
    from chattts_studio.core.text.prepare import split_segments

    segments = split_segments(text, segment_size, lexicon, first_apart=True)
    if not _NORMALIZER:
        _NORMALIZER.append(text_normalizer(NUMBER_READERS))
    normalize = _NORMALIZER[0]
    return [PreviewLine(s.shown, normalize(s.text)) for s in segments]
