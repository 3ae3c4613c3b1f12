"""A long render's voice guard with the spread rule: once enough segments are kept, a segment
as near as another voice of the language is made again although the fixed threshold passes it,
and what the render says names the rule. Embeddings stand in for audio (no model)."""

from pathlib import Path

import numpy as np
from test_spread import STEADY, voice

from chattts_studio.core.render.voice_guard import Judged, VoiceGuard, VoiceWatch, voice_note
from chattts_studio.core.speaker.encoder import THRESHOLD, SpeakerEncoder
from chattts_studio.core.speaker.spread import RULE_FIXED, RULE_SPREAD, SpreadRule


class VectorEncoder(SpeakerEncoder):
    """Its "audio" is the embedding itself."""

    def __init__(self) -> None:
        super().__init__(Path("vectors.onnx"))

    def embed(self, audio: np.ndarray, sample_rate: int, what: str = "") -> np.ndarray:
        return np.asarray(audio, dtype=np.float64) / np.linalg.norm(audio)


def _render(guard: VoiceGuard) -> list[Judged]:
    centre, *takes = voice([*STEADY, 0.80, 0.96])
    remade = takes.pop()  # what a remake of the near segment gives: the voice again
    watch = VoiceWatch(guard)
    watch.reference = centre
    return [watch.judge(take, lambda _try: remade) for take in [centre, *takes]]


def test_the_spread_remakes_a_near_segment_that_the_fixed_threshold_keeps() -> None:
    spread = _render(VoiceGuard(VectorEncoder(), spread=SpreadRule()))
    assert spread[-1].rule == RULE_SPREAD and spread[-1].limit > 0.80
    assert spread[-1].tries == 1 and round(spread[-1].similarity, 2) == 0.96
    assert "spread rule" in voice_note(0, 7, spread[-1])
    assert all(j.tries == 0 for j in spread[:-1])

    fixed = _render(VoiceGuard(VectorEncoder()))
    assert {j.rule for j in fixed} == {RULE_FIXED} and {j.limit for j in fixed} == {THRESHOLD}
    assert fixed[-1].tries == 0 and round(fixed[-1].similarity, 2) == 0.80


def test_the_spread_is_part_of_the_render_s_settings_only_when_on() -> None:
    assert "spread" not in VoiceGuard(VectorEncoder()).record()
    assert VoiceGuard(VectorEncoder(), spread=SpreadRule()).record()["spread"]["mads"] > 0
