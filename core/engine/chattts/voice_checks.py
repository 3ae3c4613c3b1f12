"""A cloned voice's sample and a speaker embedding checked for a model with bounded decoding: a
string longer than the model could use is refused before it is expanded. ChatModel's check methods
call these.
"""

import math

import numpy as np
import torch

from chattts_studio.core import SAMPLE_RATE
from chattts_studio.core.errors import NotAnEmbedding, SpeakerError
from chattts_studio.core.messages import QT_TRANSLATE_NOOP, Sentence
from chattts_studio.core.voices import speaker_codec
from chattts_studio.core.voices.clone import MAX_SECONDS

# The most code frames a cloned voice's sample can have: the DVAE makes one frame per 512
# samples (mel hop 256, two mel frames a code); a second's margin over the longest clip.
MAX_SAMPLE_FRAMES = math.ceil((MAX_SECONDS + 1) * SAMPLE_RATE / 512)
# Speaker strings are decoded up to this many values, so one made for a wider model is said
# with its width (ChatTTS's is 768, the demo's 64); anything longer stops there (8 KiB).
SPEAKER_VALUES_READ = 4096
NOT_AN_EMBEDDING = QT_TRANSLATE_NOOP(
    "core", "The speaker is not a valid ChatTTS speaker embedding."
)


def sample_codes(num_vq: int, sample: str) -> torch.Tensor:
    """A sample string's codes [num_vq, frames] (int32), decoded no further than the
    longest recording the app clones: a longer one is refused before it is expanded."""
    try:
        codes = speaker_codec.decode_prompt(sample, num_vq * MAX_SAMPLE_FRAMES)
    except speaker_codec.TooLarge:
        raise SpeakerError(
            Sentence(
                QT_TRANSLATE_NOOP(
                    "core",
                    "The voice sample is longer than the {seconds} seconds a cloned voice "
                    "may have; clone the voice again.",
                ),
                seconds=f"{MAX_SECONDS:g}",
            )
        ) from None
    except ValueError:
        raise SpeakerError(
            QT_TRANSLATE_NOOP("core", "The voice sample is not a valid ChatTTS sample string.")
        ) from None
    return torch.from_numpy(codes.astype(np.int32))


def check_sample(num_vq: int, num_codes: int, sample: str) -> int:
    """The sample's length in frames; SpeakerError when this model cannot read it."""
    codes = sample_codes(num_vq, sample)
    if codes.dim() != 2 or codes.shape[0] != num_vq or codes.shape[1] < 1:
        raise SpeakerError(
            QT_TRANSLATE_NOOP(
                "core", "The voice sample does not fit this model; clone the voice again."
            )
        )
    if int(codes.max()) >= num_codes - 1 or int(codes.min()) < 0:
        raise SpeakerError(
            QT_TRANSLATE_NOOP("core", "The voice sample has codes this model does not know.")
        )
    return int(codes.shape[1])


def check_speaker(hidden_size: int, embedding: str) -> str:
    """The embedding string, stripped, when it holds this model's hidden_size finite
    values; SpeakerError otherwise. Decoding is bounded: a string longer than one of
    SPEAKER_VALUES_READ values is refused before anything is decoded, and decoding stops
    past that many values."""
    text = embedding.strip()
    try:
        values = speaker_codec.decode_speaker(text, max(hidden_size, SPEAKER_VALUES_READ))
    except speaker_codec.TooLarge:
        read = max(hidden_size, SPEAKER_VALUES_READ)
        raise SpeakerError(_wrong_size(f"more than {read}", hidden_size)) from None
    except ValueError:
        raise NotAnEmbedding(NOT_AN_EMBEDDING) from None
    if values.size != hidden_size:
        raise SpeakerError(_wrong_size(str(values.size), hidden_size))
    if not np.isfinite(values).all():
        raise SpeakerError(
            QT_TRANSLATE_NOOP("core", "The speaker embedding holds values that are not numbers.")
        )
    return text


def _wrong_size(size: str, needed: int) -> Sentence:
    return Sentence(
        QT_TRANSLATE_NOOP(
            "core",
            "The speaker embedding has {size} values but this model needs {needed}; "
            "pick a speaker made with it.",
        ),
        size=size,
        needed=needed,
    )
