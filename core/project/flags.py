"""Automatic flags on a take: cheap, model-free signs that ChatTTS made a bad take of a segment
(dropped words, repeats or babble to the step cap, a long silence, clipping, odd loudness), each
saying why in one translatable sentence. Takes are measured once (`measure`), then judged against
the project's norms (`norms`, `flags_for`). See docs/projects.md.
"""

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from chattts_studio.core import SAMPLE_RATE
from chattts_studio.core.audio.loudness import LoudnessMeter
from chattts_studio.core.messages import QT_TRANSLATE_NOOP, Sentence

SILENCE_LIMIT = 1.2  # seconds of silence inside a take that flag it (pauses are far shorter)
SILENCE_FRAME = 0.02  # seconds per frame when looking for silence
SILENCE_DB = 40.0  # a frame this far below the take's loudest frame is silence
CLIP_LEVEL = 0.999  # |sample| at or above this is clipped
MIN_CLIPPED = 3  # a single clipped sample is inaudible; a few in a row are not
MIN_TAKES = 5  # fewer takes than this give no trustworthy project range
RATE_MADS = 3.0  # how many (normal-scaled) MADs from the median a rate must be
MAD_SCALE = 1.4826  # makes a MAD comparable to a standard deviation for normal data
RATE_RELATIVE = 0.25  # and how far from the median, relatively: a tight project flags no hairs
MAD_FLOOR = 0.05  # the MAD used is at least this share of the median (a MAD of 0 otherwise)
LOUDNESS_DB = 6.0  # dB from the project's median loudness that flag a take

# ChatTTS control tokens such as [uv_break], [laugh], [break_3]: shape speech, are not spoken
# (core/text/prepare.py's pattern).
_TOKEN = re.compile(r"\[[^\[\]\s]{0,32}\]")
# Characters that are one spoken syllable each: CJK ideographs (with extension A and the
# compatibility block), kana and hangul.
_CJK = re.compile(
    "[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"  # ideographs
    "\u3040-\u309f\u30a0-\u30ff\u31f0-\u31ff"  # hiragana, katakana
    "\u1100-\u11ff\u3130-\u318f\uac00-\ud7af]"  # hangul
)


@dataclass(frozen=True)
class Measures:
    """What one take's audio and text measure, kept in the project's JSON so flags can be
    worked out again (against a changed project) without reading the audio."""

    seconds: float  # the take's length
    spoken: int  # spoken characters of its text (CJK characters, or letters and digits)
    language: str  # "zh" when most spoken characters are CJK, else "en": rates differ a lot
    loudness_db: float | None  # integrated LUFS; None when too short or silent to measure
    longest_silence: float  # seconds: the longest silence inside (leading/trailing not counted)
    clipped: int  # samples at or above CLIP_LEVEL
    finite: bool  # no NaN or infinity anywhere


@dataclass(frozen=True)
class Flag:
    """One reason to look at a take again: its kind (one of KINDS) and the sentence saying why."""

    kind: str
    sentence: Sentence


# Every kind, in the order a take's flags come (the most serious first): flags_for gives all
# but the last two, which reading.take_flags adds from the take's checks: "asr" (speech
# recognition) and "voice" (the voice check, core/speaker).
KINDS = ("nonfinite", "cap", "short", "long", "silence", "clipping", "loudness", "asr", "voice")
# Each kind as a person reads it, one word or two (the window's badge, `project list`'s
# brackets): the kinds stay the JSON's keys, these are what both front ends show.
FLAG_NAMES = {
    "nonfinite": QT_TRANSLATE_NOOP("core", "invalid"),
    "cap": QT_TRANSLATE_NOOP("core", "cut off"),
    "short": QT_TRANSLATE_NOOP("core", "fast"),
    "long": QT_TRANSLATE_NOOP("core", "slow"),
    "silence": QT_TRANSLATE_NOOP("core", "silence"),
    "clipping": QT_TRANSLATE_NOOP("core", "clipped"),
    "loudness": QT_TRANSLATE_NOOP("core", "level"),
    "asr": QT_TRANSLATE_NOOP("core", "ASR"),
    "voice": QT_TRANSLATE_NOOP("core", "voice"),
}


@dataclass(frozen=True)
class Rate:
    """A language's usual seconds per spoken character in a project: median and MAD."""

    median: float
    mad: float


@dataclass(frozen=True)
class Norms:
    """A project's robust ranges. A language missing from `rates` (too few takes), or a None
    loudness, means no flags of that kind: a range from a handful of takes is noise."""

    rates: Mapping[str, Rate] = field(default_factory=dict)
    loudness_db: float | None = None


# -- measuring -------------------------------------------------------------------------------
def spoken_count(text: str) -> tuple[int, str]:
    """The text's spoken characters and its language ("zh" or "en")."""
    plain = _TOKEN.sub("", text)
    cjk = len(_CJK.findall(plain))
    # Letters and digits of any other script (é counts as e would); punctuation and spaces do
    # not take time the way characters do.
    other = sum(1 for ch in _CJK.sub("", plain) if ch.isalnum())
    return cjk + other, ("zh" if cjk > other else "en")


def _longest_inner_silence(audio: np.ndarray) -> float:
    """Seconds of the longest run of silent frames between the first and last sounding ones."""
    size = max(1, round(SILENCE_FRAME * SAMPLE_RATE))
    count = len(audio) // size
    if count == 0:
        return 0.0
    frames = audio[: count * size].astype(np.float64).reshape(count, size)
    rms = np.sqrt(np.mean(np.square(frames), axis=1))
    loudest = float(rms.max())
    if loudest <= 0.0:
        return 0.0  # all zero: nothing sounds, so nothing is inside
    silent = (rms == 0.0) | (rms < loudest * 10.0 ** (-SILENCE_DB / 20.0))
    sounding = np.flatnonzero(~silent)
    inner = silent[sounding[0] : sounding[-1] + 1]
    # Run lengths of True in `inner`: the distance between each run's edges.
    edges = np.flatnonzero(np.diff(np.concatenate(([0], inner.astype(np.int8), [0]))))
    if not edges.size:
        return 0.0
    longest = int(np.max(edges[1::2] - edges[0::2]))
    return longest * size / SAMPLE_RATE


def measure(audio: np.ndarray, text: str) -> Measures:
    """A take's measures. Never raises for odd audio: empty audio measures zeros, and invalid
    numbers are measured as silence (and reported by `finite`)."""
    data = np.asarray(audio, dtype=np.float32).reshape(-1)
    valid = np.isfinite(data)
    finite = bool(valid.all())
    if not finite:
        # Zeros keep the timing; the nonfinite flag already tells the user what is wrong.
        data = np.where(valid, data, np.float32(0.0))
    spoken, language = spoken_count(text)
    meter = LoudnessMeter(SAMPLE_RATE)
    meter.add(data)
    loudness = meter.integrated()
    return Measures(
        seconds=len(data) / SAMPLE_RATE,
        spoken=spoken,
        language=language,
        loudness_db=loudness if loudness is not None and math.isfinite(loudness) else None,
        longest_silence=_longest_inner_silence(data),
        clipped=int(np.count_nonzero(np.abs(data) >= CLIP_LEVEL)),
        finite=finite,
    )


# -- JSON ------------------------------------------------------------------------------------
def to_json(m: Measures) -> dict[str, Any]:
    return asdict(m)


def _number(data: Mapping[str, Any], key: str) -> float:
    value = data[key]
    # bool is an int to Python, but true is no length.
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ValueError(f"measures: {key} is not a finite number ({value!r})")
    return float(value)


def _count(data: Mapping[str, Any], key: str) -> int:
    value = data[key]
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"measures: {key} is not a count ({value!r})")
    return value


def from_json(d: Any) -> Measures:
    """Measures from to_json's dict; ValueError when it is malformed. Keys it does not know
    are ignored, so a project written by a newer version that measures more still loads."""
    if not isinstance(d, Mapping):
        raise ValueError(f"measures: not an object ({type(d).__name__})")
    missing = [k for k in Measures.__dataclass_fields__ if k not in d]
    if missing:
        raise ValueError(f"measures: missing {', '.join(missing)}")
    seconds = _number(d, "seconds")
    silence = _number(d, "longest_silence")
    if seconds < 0 or silence < 0:
        raise ValueError("measures: a negative length")
    language, finite = d["language"], d["finite"]
    if not isinstance(language, str) or not language:
        raise ValueError(f"measures: language is not a name ({language!r})")
    if not isinstance(finite, bool):
        raise ValueError(f"measures: finite is not true or false ({finite!r})")
    return Measures(
        seconds=seconds,
        spoken=_count(d, "spoken"),
        language=language,
        loudness_db=None if d["loudness_db"] is None else _number(d, "loudness_db"),
        longest_silence=silence,
        clipped=_count(d, "clipped"),
        finite=finite,
    )


# -- the project's ranges --------------------------------------------------------------------
def norms(measures: Sequence[Measures]) -> Norms:
    """The project's ranges from its takes' measures (bad takes included: medians shrug
    them off)."""
    per_language: dict[str, list[float]] = {}
    for m in measures:
        if m.spoken > 0 and m.seconds > 0:
            per_language.setdefault(m.language, []).append(m.seconds / m.spoken)
    rates: dict[str, Rate] = {}
    for language, values in per_language.items():
        if len(values) >= MIN_TAKES:
            median = float(np.median(values))
            mad = float(np.median(np.abs(np.asarray(values) - median)))
            rates[language] = Rate(median, mad)
    levels = [m.loudness_db for m in measures if m.loudness_db is not None]
    loudness = float(np.median(levels)) if len(levels) >= MIN_TAKES else None
    return Norms(rates=rates, loudness_db=loudness)


# -- flags -----------------------------------------------------------------------------------
def _rate_flag(m: Measures, norm: Rate | None) -> Flag | None:
    if norm is None or m.spoken <= 0 or norm.median <= 0:
        return None
    rate = m.seconds / m.spoken
    off = abs(rate - norm.median)
    mad = max(norm.mad, MAD_FLOOR * norm.median)
    if off <= RATE_MADS * MAD_SCALE * mad or off / norm.median <= RATE_RELATIVE:
        return None
    params = {"seconds": f"{m.seconds:.1f}", "count": str(m.spoken), "usual": f"{norm.median:.2f}"}
    if rate < norm.median:
        return Flag(
            "short",
            Sentence(
                QT_TRANSLATE_NOOP(
                    "core",
                    "The take lasts {seconds} s for {count} spoken characters, much faster than "
                    "this project's usual {usual} s per character: words may be missing.",
                ),
                **params,
            ),
        )
    return Flag(
        "long",
        Sentence(
            QT_TRANSLATE_NOOP(
                "core",
                "The take lasts {seconds} s for {count} spoken characters, much slower than "
                "this project's usual {usual} s per character: it may babble or repeat.",
            ),
            **params,
        ),
    )


def flags_for(
    m: Measures, norms: Norms, *, steps: int, cap: int, ended_by_eos: bool, random_weights: bool
) -> list[Flag]:
    """The take's flags in KINDS order; none when it looks fine. Never raises."""
    flags: list[Flag] = []
    if not m.finite:
        flags.append(
            Flag(
                "nonfinite",
                Sentence(
                    QT_TRANSLATE_NOOP(
                        "core",
                        "The audio holds invalid numbers (NaN or infinity), so it cannot be "
                        "trusted: make the take again.",
                    )
                ),
            )
        )
    # Random-weight demo models never say end of speech: they are held to the cap on purpose.
    if steps >= cap and not ended_by_eos and not random_weights:
        flags.append(
            Flag(
                "cap",
                Sentence(
                    QT_TRANSLATE_NOOP(
                        "core",
                        "The take ran to its limit of {cap} steps without an end of speech: "
                        "it may be cut off or babble.",
                    ),
                    cap=str(cap),
                ),
            )
        )
    rate = _rate_flag(m, norms.rates.get(m.language))
    if rate is not None:
        flags.append(rate)
    if m.longest_silence > SILENCE_LIMIT:
        flags.append(
            Flag(
                "silence",
                Sentence(
                    QT_TRANSLATE_NOOP(
                        "core",
                        "The take falls silent for {seconds} s in the middle: the speech may "
                        "have stalled.",
                    ),
                    seconds=f"{m.longest_silence:.1f}",
                ),
            )
        )
    if m.clipped >= MIN_CLIPPED:
        flags.append(
            Flag(
                "clipping",
                Sentence(
                    QT_TRANSLATE_NOOP(
                        "core", "{count} samples of the take are clipped: it may sound distorted."
                    ),
                    count=str(m.clipped),
                ),
            )
        )
    if norms.loudness_db is not None and m.loudness_db is not None:
        difference = m.loudness_db - norms.loudness_db
        if difference > LOUDNESS_DB:
            flags.append(
                Flag(
                    "loudness",
                    Sentence(
                        QT_TRANSLATE_NOOP(
                            "core", "The take is {db} dB louder than the project's usual level."
                        ),
                        db=f"{difference:.1f}",
                    ),
                )
            )
        elif difference < -LOUDNESS_DB:
            flags.append(
                Flag(
                    "loudness",
                    Sentence(
                        QT_TRANSLATE_NOOP(
                            "core", "The take is {db} dB quieter than the project's usual level."
                        ),
                        db=f"{-difference:.1f}",
                    ),
                )
            )
    return flags
