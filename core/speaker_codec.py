"""ChatTTS's speaker and sample strings, made without its 35-45 ms stall.

ChatTTS encodes a speaker embedding (768 fp16 values, 1.5 KiB) and a voice sample's codes as
raw LZMA2 at preset 9e, in base16384. Setting up that encoder allocates and clears the tables
of a 64 MiB dictionary: 35-45 ms here, and CPython's lzma does it holding the GIL, so the
window's UI thread stalled that long whenever the worker drew a speaker (every synthesis with
a seed, every seed change in the speaker panel; found by sampling the threads during the
stall test). The same filter with a dictionary just larger than the data gives the same bytes
(the dictionary size is not written in a raw stream, and every match distance fits either
way): tests compare with ChatTTS's own encoders byte for byte, and each result is
decompressed with ChatTTS's filter and checked against the input before it is returned (the
64 MiB encoder's result instead, should it ever not decode to its input).
"""

import lzma

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


def encode_prompt(codes: torch.Tensor) -> str:
    """ChatTTS's `Speaker.encode_prompt`: a sample's codes [num_vq, frames] as its string."""
    array = codes.cpu().numpy().astype("<u2")
    if array.ndim != 2:
        raise ValueError("a sample's codes must be a 2-D tensor")
    shape = np.array(array.shape, dtype="<u2").tobytes()
    return str(b14.encode_to_string(shape + compress(array.tobytes())))
