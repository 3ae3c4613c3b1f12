"""Speaker and sample strings made with a small LZMA dictionary are ChatTTS's own strings, byte
for byte, and a result that would not decode to its input is never returned."""

import lzma

import numpy as np
import pybase16384 as b14
import pytest
import torch
from ChatTTS.model.speaker import Speaker

from chattts_studio.core.engine.engine import Engine
from chattts_studio.core.voices import speaker_codec


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


# -- decoding, bounded ----------------------------------------------------------------------
@pytest.fixture
def decompressions(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The max_length of every LZMA decompression from now on (-1: unbounded)."""
    calls: list[int] = []
    real = lzma.LZMADecompressor

    class Spy:
        def __init__(self, *args: object, **kwargs: object) -> None:
            self._real = real(*args, **kwargs)  # type: ignore[arg-type]

        def decompress(self, data: bytes, max_length: int = -1) -> bytes:
            calls.append(max_length)
            return self._real.decompress(data, max_length)

        def __getattr__(self, name: str) -> object:
            return getattr(self._real, name)

    monkeypatch.setattr(lzma, "LZMADecompressor", Spy)
    return calls


def _packed(data: bytes) -> bytes:
    return lzma.compress(data, format=lzma.FORMAT_RAW, filters=speaker_codec.CHATTTS_FILTERS)


def test_decoding_equals_chattts_own_and_stops_past_what_the_caller_can_use(
    engine: Engine, decompressions: list[int]
) -> None:
    assert engine.model is not None
    hidden = engine.model.hidden_size
    for seed in range(8):
        text = engine.sample_speaker(seed)
        assert len(text) <= speaker_codec.speaker_string_limit(hidden)
        ours = speaker_codec.decode_speaker(text, hidden)
        assert np.array_equal(ours, Speaker._decode(text)) and ours.size == hidden
    decompressions.clear()
    # 20 MB of zeros in ~3 KB: refused by its length alone, nothing decompressed.
    bomb = b14.encode_to_string(_packed(bytes(20_000_000)))
    with pytest.raises(speaker_codec.TooLarge):
        speaker_codec.decode_speaker(bomb, hidden)
    assert decompressions == []
    # Short enough to be an embedding, but 1,000 times one: decoding stops right after.
    small = b14.encode_to_string(_packed(bytes(128 * hidden)))
    assert len(small) <= speaker_codec.speaker_string_limit(hidden)
    with pytest.raises(speaker_codec.TooLarge):
        speaker_codec.decode_speaker(small, hidden)
    assert decompressions == [2 * hidden + 1]
    # One stream exactly: cut short, or followed by a second one (which ChatTTS's own
    # decoder would expand too), it is not a speaker string.
    whole = _packed(bytes(2 * hidden))
    for broken in (whole[:-3], whole + _packed(bytes(4))):
        with pytest.raises(ValueError, match="one LZMA2 stream"):
            speaker_codec.decode_speaker(b14.encode_to_string(broken), hidden)
    with pytest.raises(ValueError):
        speaker_codec.decode_speaker("not a speaker", hidden)


def test_a_sample_longer_than_any_clone_is_refused_before_it_is_expanded(
    engine: Engine, decompressions: list[int]
) -> None:
    from chattts_studio.core.engine.chattts.voice_checks import MAX_SAMPLE_FRAMES
    from chattts_studio.core.errors import SpeakerError

    model = engine.model
    assert model is not None
    longest = torch.randint(0, 600, (model.num_vq, MAX_SAMPLE_FRAMES), dtype=torch.int32)
    assert model.check_sample(speaker_codec.encode_prompt(longest)) == MAX_SAMPLE_FRAMES
    decompressions.clear()
    # Its shape says more frames than a 30 s clip makes: nothing decompressed.
    header = np.array([model.num_vq, MAX_SAMPLE_FRAMES + 1], dtype="<u2").tobytes()
    too_long = b14.encode_to_string(header + _packed(bytes(2 * model.num_vq)))
    with pytest.raises(SpeakerError, match="longer than the 30 seconds"):
        model.check_sample(too_long)
    assert decompressions == []
    # Its shape says one frame, its data is 20 MB of zeros: cut off after that frame.
    header = np.array([model.num_vq, 1], dtype="<u2").tobytes()
    lying = b14.encode_to_string(header + _packed(bytes(20_000_000)))
    with pytest.raises(SpeakerError, match="not a valid ChatTTS sample"):
        model.check_sample(lying)
    assert decompressions == [2 * model.num_vq + 1]
