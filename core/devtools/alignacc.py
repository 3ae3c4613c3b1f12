"""How well the aligner times words on speech with known word times (from espeak-ng), and what it
costs. Method and figures: docs/alignment.md.

    python -m chattts_studio.core.devtools.alignacc [--voices en-us,en-us+f2] [--json]
"""

import argparse
import ctypes
import json
import time
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

import numpy as np
from scipy.signal import resample_poly

from chattts_studio.core import SAMPLE_RATE
from chattts_studio.core.align.aligner import AlignmentError, align
from chattts_studio.core.align.sphinx import EnglishAligner
from chattts_studio.core.align.words import Word, text_words
from chattts_studio.core.devtools.voiceeer import CHINESE, ENGLISH

ENGLISH_VOICES = ("en-us", "en-us+f2", "en-us+m1", "en+f4", "en+m3", "en-gb-x-rp")
CHINESE_VOICES = ("cmn", "cmn+f4")
ESPEAK_RATE = 22_050
TRIM_LEVEL = 0.01  # a word's audio starts and ends where it first and last passes this
GAPS = (0.0, 0.25)  # seconds of silence between joined words, drawn uniformly

_WORD_EVENT, _LIST_END = 1, 0
_SYNCHRONOUS, _POS_CHARACTER, _CHARS_UTF8 = 2, 1, 1


class _Event(ctypes.Structure):
    _fields_ = [
        ("type", ctypes.c_int),
        ("unique_identifier", ctypes.c_uint),
        ("text_position", ctypes.c_int),
        ("length", ctypes.c_int),
        ("audio_position", ctypes.c_int),
        ("sample", ctypes.c_int),
        ("user_data", ctypes.c_void_p),
        ("id", ctypes.c_char * 8),
    ]


_Callback = ctypes.CFUNCTYPE(
    ctypes.c_int, ctypes.POINTER(ctypes.c_short), ctypes.c_int, ctypes.POINTER(_Event)
)


class Espeak:
    """libespeak-ng in this process: audio and each word's first sample in one pass."""

    def __init__(self) -> None:
        self.lib = ctypes.CDLL("libespeak-ng.so.1")
        self.rate = int(self.lib.espeak_Initialize(_SYNCHRONOUS, 0, None, 0))
        self.chunks: list[np.ndarray] = []
        self.events: list[tuple[int, int]] = []  # (character position, first sample)
        self.callback = _Callback(self._heard)  # kept: the library holds the pointer
        self.lib.espeak_SetSynthCallback(self.callback)

    def _heard(self, wav: Any, count: int, events: Any) -> int:
        if count > 0:
            self.chunks.append(np.ctypeslib.as_array(wav, shape=(count,)).copy())
        i = 0
        while events[i].type != _LIST_END:
            event = events[i]
            if event.type == _WORD_EVENT:
                self.events.append((event.text_position, event.sample))
            i += 1
        return 0

    def say(self, voice: str, text: str) -> tuple[np.ndarray, list[int]]:
        """float32 audio at self.rate and the first sample of each word espeak-ng saw."""
        self.chunks, self.events = [], []
        if self.lib.espeak_SetVoiceByName(voice.encode()) != 0:
            raise ValueError(f"espeak-ng has no voice {voice}")
        data = text.encode()
        self.lib.espeak_Synth(data, len(data) + 1, 0, _POS_CHARACTER, 0, _CHARS_UTF8, None, None)
        self.lib.espeak_Synchronize()
        audio = np.concatenate(self.chunks).astype(np.float32) / 32768
        # Positions count from 1: after a text with a word espeak-ng spells out, the next
        # text ends with a stray word event at position 0, which is no word of it.
        return audio, [sample for position, sample in self.events if position > 0]


@cache
def espeak() -> Espeak:
    return Espeak()


def at_app_rate(audio: np.ndarray, rate: int) -> np.ndarray:
    """espeak-ng's 22,050 Hz as the engine's 24 kHz (what the aligner is given in the app)."""
    return np.asarray(resample_poly(audio, SAMPLE_RATE // 150, rate // 150), dtype=np.float32)


@dataclass(frozen=True)
class Truth:
    audio: np.ndarray  # 24 kHz mono float32
    words: list[str]
    starts: list[float]
    ends: list[float] | None  # None: only the starts are known


def joined(voice: str, text: str, rng: np.random.Generator) -> Truth:
    """Each word of `text` spoken alone, trimmed, joined after a random gap of GAPS seconds."""
    words = text_words(text)
    parts, starts, ends = [], [], []
    at = 0
    for word in words:
        audio, _ = espeak().say(voice, word)
        loud = np.flatnonzero(np.abs(audio) > TRIM_LEVEL)
        audio = audio[loud[0] : loud[-1] + 1]
        gap = np.zeros(round(rng.uniform(*GAPS) * ESPEAK_RATE), np.float32)
        parts += [gap, audio]
        at += len(gap)
        starts.append(at / ESPEAK_RATE)
        at += len(audio)
        ends.append(at / ESPEAK_RATE)
    parts.append(np.zeros(ESPEAK_RATE // 4, np.float32))
    return Truth(at_app_rate(np.concatenate(parts), ESPEAK_RATE), words, starts, ends)


def sentence(voice: str, text: str) -> Truth | None:
    """`text` said whole, each word's start from espeak-ng's word events; None when espeak-ng
    saw other words than the aligner does (a number, an abbreviation)."""
    audio, firsts = espeak().say(voice, text)
    words = text_words(text)
    if len(firsts) != len(words):
        return None
    return Truth(at_app_rate(audio, ESPEAK_RATE), words, [s / ESPEAK_RATE for s in firsts], None)


@dataclass(frozen=True)
class Errors:
    """Absolute errors in seconds of the measured words, and the words left estimated."""

    start: list[float]
    end: list[float]
    estimated_start: list[float]  # the estimated words' start errors, apart
    estimated: int
    words: int
    refused: int  # takes the aligner refused (as another text)


def errors(got: Sequence[Word], truth: Truth) -> tuple[list[float], list[float], list[float]]:
    """Start and end errors of the measured words; start errors of the estimated ones."""
    starts, ends, guessed = [], [], []
    for i, word in enumerate(got):
        if word.estimated:
            guessed.append(abs(word.start - truth.starts[i]))
            continue
        starts.append(abs(word.start - truth.starts[i]))
        if truth.ends is not None:
            ends.append(abs(word.end - truth.ends[i]))
    return starts, ends, guessed


def measure(
    truths: Sequence[Truth], language: str, english: EnglishAligner | None = None
) -> tuple[Errors, dict[str, float]]:
    """Every truth aligned: the errors, and the aligner's seconds per audio second (the takes
    the narrow beam aligned, those that needed the wide one, all; the wide ones' share)."""
    starts: list[float] = []
    ends: list[float] = []
    guessed: list[float] = []
    words = refused = 0
    spent = {False: 0.0, True: 0.0}  # seconds aligning, by whether the wide beam was needed
    audio_seconds = {False: 0.0, True: 0.0}
    english = english or EnglishAligner()
    for truth in truths:
        began = time.perf_counter()
        try:
            got = align(truth.audio, SAMPLE_RATE, " ".join(truth.words), language, None, english)
        except AlignmentError:
            refused += 1
            continue
        wide = english.last_wide and language == "en"
        spent[wide] += time.perf_counter() - began
        audio_seconds[wide] += len(truth.audio) / SAMPLE_RATE
        s, e, g = errors(got.words, truth)
        starts += s
        ends += e
        guessed += g
        words += len(got.words)
    found = Errors(starts, ends, guessed, len(guessed), words, refused)
    cost = {
        "narrow": spent[False] / max(audio_seconds[False], 1e-9),
        "wide": spent[True] / max(audio_seconds[True], 1e-9),
        "all": sum(spent.values()) / max(sum(audio_seconds.values()), 1e-9),
        "wide_share": audio_seconds[True] / max(sum(audio_seconds.values()), 1e-9),
    }
    return found, cost


def summary(found: Errors) -> dict[str, Any]:
    def spread(values: list[float]) -> dict[str, float] | None:
        if not values:
            return None
        a = np.asarray(values) * 1000
        return {
            "median_ms": round(float(np.median(a)), 1),
            "p90_ms": round(float(np.percentile(a, 90)), 1),
            "max_ms": round(float(a.max()), 1),
        }

    return {
        "words": found.words,
        "estimated": found.estimated,
        "refused_takes": found.refused,
        "start": spread(found.start),
        "end": spread(found.end),
        "estimated_start": spread(found.estimated_start),
    }


def refusals(voices: Sequence[str], texts: Sequence[str]) -> dict[str, Any]:
    """Each voice saying each text, aligned with every text and with the first three words of
    every other text: how often the same text is kept and a different one refused."""
    english = EnglishAligner()
    kept = {True: 0, False: 0}
    tried = {True: 0, False: 0}
    for voice in voices:
        for i, said in enumerate(texts):
            audio = at_app_rate(espeak().say(voice, said)[0], ESPEAK_RATE)
            shorts = [" ".join(t.split()[:3]) for k, t in enumerate(texts) if k != i]
            for j, text in enumerate([*texts, *shorts]):
                same = i == j
                tried[same] += 1
                try:
                    align(audio, SAMPLE_RATE, text, "en", None, english)
                    kept[same] += 1
                except AlignmentError:
                    pass
    return {
        "same_text_refused": f"{tried[True] - kept[True]}/{tried[True]}",
        "other_text_kept": f"{kept[False]}/{tried[False]}",
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--voices", default=",".join(ENGLISH_VOICES))
    parser.add_argument("--chinese-voices", default=",".join(CHINESE_VOICES))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--only", default="", help="run only the parts whose name has this")
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    voices = args.voices.split(",")
    english = EnglishAligner()
    report: dict[str, Any] = {}
    runs = {
        "en joined": ([joined(v, t, rng) for v in voices for t in ENGLISH], "en"),
        "en sentence": ([s for v in voices for t in ENGLISH if (s := sentence(v, t))], "en"),
    }
    for voice in args.chinese_voices.split(","):
        runs[f"zh sentence {voice} (no recogniser)"] = (
            [s for t in CHINESE if (s := sentence(voice, t))],
            "zh",
        )
        runs[f"zh joined {voice} (no recogniser)"] = (
            [joined(voice, t, rng) for t in CHINESE],
            "zh",
        )
    for name, (truths, language) in runs.items():
        if args.only not in name:
            continue
        found, cost = measure(truths, language, english)
        cost = {key: round(value, 4) for key, value in cost.items()}
        report[name] = {**summary(found), "takes": len(truths), "seconds_per_audio_second": cost}
    if args.only in "refusals":
        report["refusals"] = refusals(voices, ENGLISH)
    if args.json:
        print(json.dumps(report, indent=1))
        return
    for name, row in report.items():
        print(f"{name}: {json.dumps(row)}")


if __name__ == "__main__":
    main()
