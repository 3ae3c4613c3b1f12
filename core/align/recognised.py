"""Word times from the recogniser's own tokens, for Chinese, where PocketSphinx has no model:
SenseVoice's CTC spikes are matched to the text's words in order, so a word gets a time only where
it was heard; the rest is estimated.
"""

import difflib
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np

from chattts_studio.core.align.words import is_cjk

MAX_WORD_SECONDS = 0.6
_PIECE_START = "▁"


@runtime_checkable
class TimedRecognizer(Protocol):
    name: str

    def timed(
        self, audio: np.ndarray, sample_rate: int, language: str
    ) -> list[tuple[str, float]]: ...


def folded(word: str) -> str:
    """A word as both sides are compared: simplified characters, no case, plain apostrophes."""
    import zhconv

    return str(zhconv.convert(word, "zh-cn")).casefold().replace("’", "'")


def heard_words(tokens: Sequence[tuple[str, float]]) -> list[tuple[str, float]]:
    """Tokens joined into words (a Chinese character is one; word pieces join until the next
    "▁"), each with its first token's time; special tokens such as <|zh|> dropped."""
    words: list[tuple[str, float]] = []
    joining = False
    for token, at in tokens:
        if token.startswith("<") and token.endswith(">"):
            continue
        piece = token.lstrip(_PIECE_START)
        if not piece:
            joining = False
            continue
        if is_cjk(piece[0]) or token.startswith(_PIECE_START) or not joining:
            words.append((piece, at))
            joining = not is_cjk(piece[0])
        else:
            words[-1] = (words[-1][0] + piece, words[-1][1])
    return words


def matched_times(
    words: Sequence[str], heard: Sequence[tuple[str, float]], speech_end: float
) -> list[tuple[float, float] | None]:
    """Each text word's (start, end) where the recogniser heard it, else None."""
    said = [folded(w) for w in words]
    got = [folded(h) for h, _ in heard]
    out: list[tuple[float, float] | None] = [None] * len(words)
    matcher = difflib.SequenceMatcher(a=said, b=got, autojunk=False)
    for block in matcher.get_matching_blocks():
        for k in range(block.size):
            i, j = block.a + k, block.b + k
            start = heard[j][1]
            following = heard[j + 1][1] if j + 1 < len(heard) else max(speech_end, start)
            out[i] = (start, min(following, start + MAX_WORD_SECONDS))
    return out


def recognised_times(
    recognizer: TimedRecognizer,
    audio: np.ndarray,
    rate: int,
    words: Sequence[str],
    language: str,
    speech_end: float,
) -> list[tuple[float, float] | None]:
    return matched_times(words, heard_words(recognizer.timed(audio, rate, language)), speech_end)
