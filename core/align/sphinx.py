"""English word times by forced alignment: PocketSphinx, with the CMU English model from its wheel,
finds where each word of the known text is spoken; doubtful words are marked estimated. See
docs/alignment.md.
"""

import difflib
import importlib
import os
import re
from collections.abc import Sequence
from typing import Any

import numpy as np

from chattts_studio.core.align.estimate import frame_levels
from chattts_studio.core.asr.recognizer import MODEL_RATE, at_model_rate
from chattts_studio.core.errors import ModelError
from chattts_studio.core.messages import QT_TRANSLATE_NOOP
from chattts_studio.core.text.numbers import english_numbers

FRAME_SECONDS = 0.01
FRAMES_PER_PHONE = 3  # the HMM's states: the least a phone can take
SQUEEZED = 1.25  # a word this close to its least is one the audio does not hold
MIN_AGREEMENT = 0.2
MIN_COVERED = 0.75
LOUD_BELOW_PEAK_DB = 12.0  # a frame this close to the loudest is a vowel, not a pause
UNKNOWN = "[SPEECH]"  # the model's spoken-noise word, for a word missing from the dictionary
_SILENCES = frozenset({"<s>", "</s>", "<sil>", "[NOISE]"})
_WIDE = {"beam": 1e-200, "wbeam": 1e-200, "pbeam": 1e-200, "maxhmmpf": -1}
_ALTERNATE = re.compile(r"\(\d+\)$")  # the dictionary's second pronunciation: "the(2)"
_NOT_SPOKEN = re.compile(r"[^a-z0-9']+")


class EnglishAligner:
    """PocketSphinx's two aligning decoders (narrow and wide beams), each made on first use and
    kept: a model takes 0.1-0.2 s to load, more than aligning a sentence."""

    method = "pocketsphinx forced alignment"

    def __init__(self) -> None:
        self._decoders: dict[bool, Any] = {}
        self.last_wide = False  # whether the last take needed the wide beam (its cost: docs)
        self.last_unknown = 0  # the last take's words the dictionary lacks

    def times(
        self, audio: np.ndarray, rate: int, words: Sequence[str]
    ) -> list[tuple[float, float] | None] | None:
        """Each word's (start, end) in seconds, None for a word whose time is not measured;
        None when no alignment of the text to the audio exists (it says something else)."""
        samples = at_model_rate(audio, rate)
        pcm = np.clip(samples * 32767, -32768, 32767).astype("<i2").tobytes()
        spoken = [self._spoken(w) for w in words]
        self.last_unknown = sum(tokens == [UNKNOWN] for tokens in spoken)
        if self.last_unknown == len(words):
            return [None] * len(words)  # nothing the dictionary knows: nothing to measure
        flat = [token for tokens in spoken for token in tokens]
        segments = self._run(pcm, flat, wide=False)
        wide = self.last_wide = segments is None
        if wide:
            segments = self._run(pcm, flat, wide=True)
        if segments is None:
            return None
        placed = _placed(segments, flat)
        if covered(samples, segments) < MIN_COVERED:
            return None
        if wide and self.agreement(pcm, flat, placed) < MIN_AGREEMENT:
            return None
        out: list[tuple[float, float] | None] = []
        at = 0
        for tokens in spoken:
            mine = placed[at : at + len(tokens)]
            at += len(tokens)
            trusted = all(p is not None for p in mine) and UNKNOWN not in tokens
            frames = sum(p[1] - p[0] for p in mine if p is not None)
            least = sum(self._phones(t) for t in tokens) * FRAMES_PER_PHONE
            if not trusted or frames <= SQUEEZED * least:
                out.append(None)
                continue
            first, last = mine[0], mine[-1]
            assert first is not None and last is not None
            out.append((first[0] * FRAME_SECONDS, last[1] * FRAME_SECONDS))
        return out

    def agreement(
        self, pcm: bytes, flat: Sequence[str], placed: Sequence[tuple[int, int] | None]
    ) -> float:
        """How far the phones a free phone recogniser hears agree with the aligned words': per
        placed word, the share of its phones found in order among those heard in its span."""
        heard = self._free_phones(pcm)
        shares = []
        for token, where in zip(flat, placed, strict=True):
            if where is None or token == UNKNOWN:
                continue
            expected = str(self._decoder(wide=False).lookup_word(token)).split()
            inside = [p for p, first, end in heard if first < where[1] and end > where[0]]
            match = difflib.SequenceMatcher(a=expected, b=inside, autojunk=False)
            shares.append(sum(b.size for b in match.get_matching_blocks()) / len(expected))
        return sum(shares) / len(shares) if shares else 0.0

    def _free_phones(self, pcm: bytes) -> list[tuple[str, int, int]]:
        """The phones a free phone loop hears. Made afresh for each take: one kept from take to
        take heard a take differently after others (it changed 2 of 720 verdicts)."""
        from pocketsphinx import Decoder, get_model_path

        phones = os.path.join(get_model_path(), "en-us", "en-us-phone.lm.bin")
        decoder = Decoder(samprate=MODEL_RATE, loglevel="FATAL", allphone=phones, lw=2.0)
        decoder.start_utt()
        decoder.process_raw(pcm, full_utt=True)
        decoder.end_utt()
        return [(s.word, s.start_frame, s.end_frame + 1) for s in decoder.seg() or []]

    def _spoken(self, word: str) -> list[str]:
        """The dictionary words `word` is read as: one, several for a number, or UNKNOWN."""
        read = english_numbers(word) if any(c.isdigit() for c in word) else word
        tokens = _NOT_SPOKEN.sub(" ", read.casefold().replace("’", "'")).split()
        decoder = self._decoder(wide=False)
        if not tokens or any(decoder.lookup_word(t) is None for t in tokens):
            return [UNKNOWN]
        return tokens

    def _phones(self, token: str) -> int:
        phones = self._decoder(wide=False).lookup_word(token)
        return len(phones.split()) if phones else 1

    @staticmethod
    def check() -> None:
        """One sentence (ModelError) when PocketSphinx is not installed."""
        try:
            importlib.import_module("pocketsphinx")
        except ImportError:
            raise ModelError(
                QT_TRANSLATE_NOOP(
                    "core",
                    "English alignment needs PocketSphinx, which is not installed: "
                    "install the speech recognition extra (pip install "
                    "'chattts-studio[asr]').",
                )
            ) from None

    def _decoder(self, wide: bool) -> Any:
        made = self._decoders.get(wide)
        if made is None:
            self.check()
            from pocketsphinx import Decoder

            options = _WIDE if wide else {}
            made = Decoder(samprate=MODEL_RATE, loglevel="FATAL", bestpath=False, **options)
            self._decoders[wide] = made
        return made

    def _run(self, pcm: bytes, flat: list[str], wide: bool) -> list[tuple[str, int, int]] | None:
        """The aligned segments (word, first frame, end frame), or None when the search found
        no path (PocketSphinx says so by a RuntimeError at times: that decoder is remade)."""
        decoder = self._decoder(wide)
        try:
            decoder.set_align_text(" ".join(flat))
            decoder.start_utt()
            decoder.process_raw(pcm, full_utt=True)
            decoder.end_utt()
        except RuntimeError:
            del self._decoders[wide]
            return None
        segments = decoder.seg()
        if segments is None or decoder.hyp() is None:
            return None
        return [(s.word, s.start_frame, s.end_frame + 1) for s in segments]


def covered(samples: np.ndarray, segments: Sequence[tuple[str, int, int]]) -> float:
    """The share of the loud 10 ms frames that the alignment gives to words, not to silence."""
    levels = frame_levels(samples, MODEL_RATE)
    loud = levels > levels.max() - LOUD_BELOW_PEAK_DB
    spoken = np.zeros(len(levels), dtype=bool)
    for name, first, end in segments:
        if name not in _SILENCES:
            spoken[first:end] = True
    return float((loud & spoken).sum() / max(1, loud.sum()))


def _placed(
    segments: Sequence[tuple[str, int, int]], flat: Sequence[str]
) -> list[tuple[int, int] | None]:
    """Each token of `flat` matched, in order, to the segment that says it ((first frame, end
    frame)); silences and fillers the search put between them are skipped."""
    placed: list[tuple[int, int] | None] = [None] * len(flat)
    at = 0
    for name, first, end in segments:
        if at >= len(flat):
            break
        if _ALTERNATE.sub("", name) == flat[at]:
            placed[at] = (first, end)
            at += 1
        elif name not in _SILENCES and name != UNKNOWN:
            at += 1  # a token the search said otherwise: left unplaced
    return placed
