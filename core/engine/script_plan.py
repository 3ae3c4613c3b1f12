"""A dialogue script's plan: all its turns (core/text/dialogue.py) as one job, each segment with
its line's voice and speaker name, so rows of different speakers decode side by side."""

from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING

from chattts_studio.core.engine.request import JobPlan, Part, SynthesisRequest, auto_batch_size
from chattts_studio.core.errors import BadTextError
from chattts_studio.core.messages import QT_TRANSLATE_NOOP, Sentence, said
from chattts_studio.core.text.dialogue import ScriptError, Turn
from chattts_studio.core.text.lexicon import Lexicon
from chattts_studio.core.text.prepare import Segment, split_segments
from chattts_studio.core.voices.voice import Voice

if TYPE_CHECKING:
    from chattts_studio.core.engine.engine import Engine


def plan_dialogue(
    engine: "Engine", turns: list[Turn], voices: Mapping[str, Voice], request: SynthesisRequest
) -> JobPlan:
    """One job for the whole script: each turn split into segments (dictionary applied), every
    segment carrying its turn's voice and speaker name."""
    request.validate()
    lexicon = Lexicon(request.lexicon) if request.lexicon else None
    checked = {name: engine.check_voice(voice) for name, voice in voices.items()}
    segments: list[Segment] = []
    parts: list[Part] = []
    for number, turn in enumerate(turns):
        try:
            pieces = split_segments(turn.text, request.segment_size, lexicon, number == 0)
        except BadTextError as exc:
            raise ScriptError(
                Sentence(
                    QT_TRANSLATE_NOOP("core", "Line {line} ({name}): {problem}"),
                    line=turn.line,
                    name=turn.name,
                    problem=said(exc),
                )
            ) from None
        for piece in pieces:
            segments.append(replace(piece, index=len(segments)))
            parts.append(Part(checked[turn.name], turn.name, number))
    loaded = engine.loaded
    device = loaded.device.id if loaded else "cpu"
    batch = request.batch_size or auto_batch_size(device, len(segments))
    text = "\n".join(f"{t.name}: {t.text}" for t in turns)
    return JobPlan(replace(request, text=text), tuple(segments), batch, "", None, tuple(parts))
