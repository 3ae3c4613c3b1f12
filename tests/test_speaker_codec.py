"""Speaker and sample strings made with a small LZMA dictionary are ChatTTS's own strings, byte
for byte, and a result that would not decode to its input is never returned."""

import lzma

import numpy as np
import pytest
import torch
from ChatTTS.model.speaker import Speaker

from core import speaker_codec
from core.engine import Engine


def test_speaker_strings_equal_chattts_own(engine: Engine) -> None:
    assert engine.model is not None
    speaker = engine.model._chat.speaker
    std, mean = speaker.std.float().cpu(), speaker.mean.float().cpu()
    generator = torch.Generator().manual_seed(5)
    for scale in (0.01, 0.3, 1.0, 3.0, 50.0):  # from near-constant bytes to the fp16 edge
        for _ in range(16):
            embedding = torch.randn(speaker.dim, generator=generator) * std * scale + mean
            assert speaker_codec.encode_speaker(embedding) == Speaker._encode(embedding)
    # The engine's seeds go through it: the same string stock encodes for the same draw.
    drawn = torch.randn(speaker.dim, generator=torch.Generator().manual_seed(7)) * std + mean
    assert engine.sample_speaker(7) == Speaker._encode(drawn)
    decoded = Speaker._decode(engine.sample_speaker(7))
    assert np.array_equal(decoded, drawn.to(torch.float16).numpy())


@pytest.mark.parametrize("frames", [1, 40, 600, 3000])  # 8 B to 24 KB: dictionaries of 4-32 KiB
def test_sample_strings_equal_chattts_own(frames: int) -> None:
    generator = torch.Generator().manual_seed(frames)
    for repeat in range(3):
        codes = torch.randint(0, 626, (4, frames), generator=generator, dtype=torch.int32)
        if repeat == 1:  # speech's codes repeat: long matches
            codes = codes[:, : max(1, frames // 8)].repeat(1, 8)[:, :frames]
        text = speaker_codec.encode_prompt(codes)
        assert text == Speaker.encode_prompt(codes)
        assert torch.equal(Speaker.decode_prompt(text).to(torch.int32), codes)


def test_a_result_that_does_not_decode_to_its_input_is_never_returned(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Should the small encoder's result ever not decode to its input with ChatTTS's filter,
    the 64 MiB encoder's bytes are returned instead."""
    data = np.random.default_rng(1).standard_normal(768).astype(np.float16).tobytes()
    # A stand-in for a broken encoder: a delta filter in front, which ChatTTS's decoder (LZMA2
    # alone) does not undo.
    monkeypatch.setattr(
        speaker_codec,
        "_filters",
        lambda size: [
            {"id": lzma.FILTER_DELTA, "dist": 1},
            {**speaker_codec.CHATTTS_FILTERS[0], "dict_size": 4096},
        ],
    )
    stock = lzma.compress(data, format=lzma.FORMAT_RAW, filters=speaker_codec.CHATTTS_FILTERS)
    divergent = lzma.compress(data, format=lzma.FORMAT_RAW, filters=speaker_codec._filters(0))
    assert divergent != stock
    assert speaker_codec.compress(data) == stock
