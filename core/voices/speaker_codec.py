"""ChatTTS's speaker and sample strings, made without its GIL-holding encoder set-up stall.

ChatTTS encodes them as raw LZMA2 (preset 9e) in base16384; setting up that encoder clears a 64 MiB
dictionary with the GIL held, which stalled the UI thread at every speaker draw. A dictionary just
larger than the data gives the same bytes (tested against ChatTTS's encoders), and each result is
checked by decoding it with ChatTTS's filter. Decoding is bounded to what the caller can use and
accepts exactly one stream, so a client's string cannot expand unbounded. Figures:
docs/performance.md, "The UI thread"."""

import lzma
import math

import numpy as np
import pybase16384 as b14
import torch

CHATTTS_FILTERS = [{"id": lzma.FILTER_LZMA2, "preset": 9 | lzma.PRESET_EXTREME}]
SMALLEST_DICT = 4096  # liblzma's minimum


def _filters(size: int) -> list[dict[str, int]]:
    """ChatTTS's filter with a dictionary of at least `size` bytes: every distance fits."""
    dict_size = max(SMALLEST_DICT, 1 << max(0, size - 1).bit_length())
    return [{**CHATTTS_FILTERS[0], "dict_size": dict_size}]


def compress(data: bytes) -> bytes:
    """`data` as ChatTTS compresses it (raw LZMA2, preset 9e), in well under a millisecond."""
    packed = lzma.compress(data, format=lzma.FORMAT_RAW, filters=_filters(len(data)))
    if lzma.decompress(packed, format=lzma.FORMAT_RAW, filters=CHATTTS_FILTERS) != data:
        packed = lzma.compress(data, format=lzma.FORMAT_RAW, filters=CHATTTS_FILTERS)
    return packed


def encode_speaker(embedding: torch.Tensor) -> str:
    """ChatTTS's `Speaker._encode`: a speaker embedding as its speaker string."""
    data = embedding.to(dtype=torch.float16, device="cpu").numpy().tobytes()
    return str(b14.encode_to_string(compress(data)))


def encode_prompt(codes: torch.Tensor | np.ndarray) -> str:
    """ChatTTS's `Speaker.encode_prompt`: a sample's codes [num_vq, frames] as its string."""
    host = codes.cpu().numpy() if isinstance(codes, torch.Tensor) else np.asarray(codes)
    array = host.astype("<u2")
    if array.ndim != 2:
        raise ValueError("a sample's codes must be a 2-D tensor")
    shape = np.array(array.shape, dtype="<u2").tobytes()
    return str(b14.encode_to_string(shape + compress(array.tobytes())))


class TooLarge(ValueError):
    """The string holds more values than its caller allows."""


def _worst_case_packed(size: int) -> int:
    """The most bytes raw LZMA2 makes of `size` bytes: incompressible data is stored in
    chunks of at most 64 KiB with a 3-byte header each, then one end byte."""
    return size + 3 * math.ceil(size / 65536) + 1


def string_limit(size: int) -> int:
    """The most characters a string of `size` bytes, LZMA'd and base16384'd, can have: 14
    bits a character, plus base16384's closing character for a partial group."""
    return math.ceil(_worst_case_packed(size) * 8 / 14) + 1


def speaker_string_limit(values: int) -> int:
    """The longest speaker string an embedding of `values` fp16 values can be."""
    return string_limit(2 * values)


def decompress(packed: bytes, max_length: int) -> bytes:
    """ChatTTS's raw LZMA2 `packed`, never expanded past `max_length` bytes: TooLarge when it
    holds more, ValueError when it is not exactly one whole stream."""
    decoder = lzma.LZMADecompressor(lzma.FORMAT_RAW, filters=CHATTTS_FILTERS)
    try:
        data = decoder.decompress(packed, max_length=max_length + 1)
    except lzma.LZMAError as exc:
        raise ValueError(f"not LZMA2 data: {exc}") from None
    if len(data) > max_length:
        raise TooLarge(f"more than {max_length} bytes")
    if not decoder.eof or decoder.unused_data:
        # Cut short, or more streams after it (ChatTTS's decoder would expand those too).
        raise ValueError("not exactly one LZMA2 stream")
    return data


def decode_speaker(text: str, values: int) -> np.ndarray:
    """A speaker string's fp16 values, at most `values` of them (TooLarge past that); ValueError
    when the string is not a speaker string. Nothing is decoded when the string is longer than
    `values` values can make."""
    if len(text) > speaker_string_limit(values):
        raise TooLarge(f"longer than a speaker string of {values} values")
    data = decompress(b14.decode_from_string(text), 2 * values)
    if len(data) % 2:
        raise ValueError("an odd number of bytes")
    return np.frombuffer(data, dtype=np.float16).copy()


def decode_prompt(text: str, max_values: int) -> np.ndarray:
    """A sample string's codes [num_vq, frames] (uint16), at most `max_values` of them
    (TooLarge past that); ValueError when the string is not a sample string."""
    if len(text) > string_limit(4 + 2 * max_values):
        raise TooLarge(f"longer than a sample string of {max_values} codes")
    data = b14.decode_from_string(text)
    if len(data) < 4:
        raise ValueError("no shape")
    rows, frames = (int(n) for n in np.frombuffer(data[:4], dtype="<u2"))
    if rows * frames > max_values:
        raise TooLarge(f"{rows} x {frames} codes")
    try:
        codes = decompress(data[4:], 2 * rows * frames)
    except TooLarge:
        raise ValueError("more codes than its shape says") from None
    if len(codes) != 2 * rows * frames:
        raise ValueError("fewer codes than its shape says")
    return np.frombuffer(codes, dtype="<u2").reshape(rows, frames).copy()
