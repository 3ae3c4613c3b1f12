"""A take's transcript scored against its segment's text: what the speech recognition check says,
and which words it names.

As the field does (Seed-TTS's evaluation), Chinese is scored by character error rate and English
by word error rate, after folding punctuation, case and traditional forms; both sides are also
read as the model read them (control tokens removed, numbers read out, NFKC). Each CJK character
is a token, as is each run of letters and digits; one alignment (jiwer) runs over them all and
its runs name what is `missing`, `extra` and `changed`. Pure functions."""

import re
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from chattts_studio.core.messages import QT_TRANSLATE_NOOP, Sentence
from chattts_studio.core.text.numbers import NUMBER_READERS

NumberReaders = Mapping[str, Callable[[str], str]]
# ChatTTS control tokens (core/text/prepare.py's pattern): they shape speech, are not spoken.
_CONTROL = re.compile(r"\[[^\[\]\s]{0,32}\]")
_CJK_CLASS = (
    "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"  # ideographs
    "\u3040-\u309f\u30a0-\u30ff\u31f0-\u31ff"  # hiragana, katakana
    "\u1100-\u11ff\u3130-\u318f\uac00-\ud7af"  # hangul
)
_CJK = re.compile(f"[{_CJK_CLASS}]")
# A CJK character, or a word: letters and digits of any other script, apostrophes inside.
_TOKEN = re.compile(f"[{_CJK_CLASS}]|[^\\W_{_CJK_CLASS}]+(?:['’][^\\W_{_CJK_CLASS}]+)*")


def tokens(text: str, readers: NumberReaders = NUMBER_READERS) -> list[str]:
    """The text as it is spoken, folded for comparison, in tokens (see the module's note)."""
    import zhconv

    text = unicodedata.normalize("NFKC", _CONTROL.sub(" ", text))
    reader = readers.get("zh" if _CJK.search(text) else "en")
    if reader is not None:
        text = reader(text)
    text = zhconv.convert(text, "zh-cn").casefold().replace("’", "'")
    return _TOKEN.findall(text)


def is_cjk(token: str) -> bool:
    return bool(_CJK.fullmatch(token))


def joined(run: Sequence[str]) -> str:
    """Tokens as a reader writes them: CJK characters side by side, words spaced."""
    out = ""
    for token in run:
        if out and not (is_cjk(token) and is_cjk(out[-1])):
            out += " "
        out += token
    return out


# The name a check records when the demo recogniser (core/asr/demo_model.py: random weights)
# heard the take: its transcript and rates are noise, which everything showing them says.
DEMO_RECOGNIZER = "sensevoice-demo"


@dataclass(frozen=True)
class AsrCheck:
    """One take's check: its transcript, its error rates and what differs (JSON in projects),
    and which recogniser heard it ("" in checks made before that was recorded)."""

    transcript: str
    score: float  # errors / tokens of the text (the segment's CER, WER or, mixed, both's)
    cer: float | None  # over the text's CJK characters; None when it has none
    wer: float | None  # over its words; None when it has none
    missing: list[str] = field(default_factory=list)
    extra: list[str] = field(default_factory=list)
    changed: list[tuple[str, str]] = field(default_factory=list)  # (text, heard)
    recognizer: str = ""  # the Recognizer's name; DEMO_RECOGNIZER: not a real hearing

    @property
    def demo(self) -> bool:
        return self.recognizer == DEMO_RECOGNIZER

    def to_json(self) -> dict[str, Any]:
        return {
            "recognizer": self.recognizer,
            "transcript": self.transcript,
            "score": self.score,
            "cer": self.cer,
            "wer": self.wer,
            "missing": list(self.missing),
            "extra": list(self.extra),
            "changed": [list(pair) for pair in self.changed],
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "AsrCheck":
        """Raises ValueError (or KeyError, TypeError) for a record that is not one."""
        rate = lambda v: None if v is None else float(v)  # noqa: E731
        changed = [(str(a), str(b)) for a, b in data.get("changed", [])]
        return cls(
            str(data["transcript"]),
            float(data["score"]),
            rate(data.get("cer")),
            rate(data.get("wer")),
            [str(m) for m in data.get("missing", [])],
            [str(e) for e in data.get("extra", [])],
            changed,
            str(data.get("recognizer", "")),
        )


def percent(score: float) -> str:
    """An error rate as shown: "4%", and ">100%" when more was heard than the text says (the
    errors are counted against the text's length, so babble goes past 100%)."""
    return ">100%" if score > 1.0 else f"{score:.0%}"


def check(text: str, transcript: str, readers: NumberReaders = NUMBER_READERS) -> AsrCheck:
    """Score what was heard (`transcript`) against the segment's `text`."""
    said, heard = tokens(text, readers), tokens(transcript, readers)
    errors = {True: 0, False: 0}  # by script: CJK or not
    missing: list[str] = []
    extra: list[str] = []
    changed: list[tuple[str, str]] = []
    for kind, ref, hyp in _edits(said, heard):
        if kind == "delete":
            missing.append(joined(ref))
        elif kind == "insert":
            extra.append(joined(hyp))
        else:
            changed.append((joined(ref), joined(hyp)))
        # A substitution of n text tokens by m heard ones: n substitutions, and |m - n|
        # insertions or deletions (what a Levenshtein count gives the run).
        for token in ref:
            errors[is_cjk(token)] += 1
        for token in hyp[len(ref) :]:
            errors[is_cjk(token)] += 1
    cjk = sum(1 for t in said if is_cjk(t))
    words = len(said) - cjk
    total = errors[True] + errors[False]
    return AsrCheck(
        transcript,
        total / len(said) if said else float(bool(heard)),
        errors[True] / cjk if cjk else None,
        errors[False] / words if words else None,
        missing,
        extra,
        changed,
    )


def _edits(said: list[str], heard: list[str]) -> list[tuple[str, list[str], list[str]]]:
    """The alignment's non-matching runs: (kind, text tokens, heard tokens)."""
    if not said or not heard:
        if said:
            return [("delete", said, [])]
        return [("insert", [], heard)] if heard else []
    import jiwer

    # jiwer aligns words split on spaces: tokens hold none, so each is one word.
    out = jiwer.process_words(" ".join(said), " ".join(heard))
    runs = []
    for chunk in out.alignments[0]:
        if chunk.type == "equal":
            continue
        ref = said[chunk.ref_start_idx : chunk.ref_end_idx]
        hyp = heard[chunk.hyp_start_idx : chunk.hyp_end_idx]
        runs.append((chunk.type if chunk.type != "substitute" else "change", ref, hyp))
    return runs


@dataclass(frozen=True)
class AsrLimits:
    """When a check flags its take. Untested on real ChatTTS speech (not available where this
    was built): a user tunes them per recogniser and voice (docs say how). The defaults follow
    the tools that check this: tts-audiobook-tool allows about 1 error in 10 words; ChatTTS's
    failure on long text drops or repeats a run of words, which a run length catches in a
    long segment whose rate stays under the limit."""

    max_score: float = 0.10  # flag above this error rate
    # ... or a missing or extra run this long (CJK characters or words): a Chinese word is
    # mostly two characters, and recognisers' own slips are mostly one character or one word.
    run_tokens: int = 2


SHOWN_RUNS = 3  # runs a flag's sentence names (the JSON keeps them all)


def asr_flag(got: AsrCheck, limits: AsrLimits = AsrLimits()) -> Sentence | None:
    """The sentence the segment editor shows beside the take's other flags; None when the
    check passes under `limits`. Names the missing words first (the commonest failure)."""
    longest = max((len(tokens(run)) for run in [*got.missing, *got.extra]), default=0)
    if got.score <= limits.max_score and longest < limits.run_tokens:
        return None
    rate = f"{min(got.score, 1.0) * 100:.0f}"  # past 100% is babble: said as all of it
    if got.missing:
        return Sentence(
            QT_TRANSLATE_NOOP(
                "core", "Speech recognition did not hear {words} ({rate}% of the text differs)."
            ),
            words=_quoted(got.missing),
            rate=rate,
        )
    if got.extra:
        return Sentence(
            QT_TRANSLATE_NOOP(
                "core",
                "Speech recognition heard {words}, which the text does not say ({rate}% of the "
                "text differs).",
            ),
            words=_quoted(got.extra),
            rate=rate,
        )
    if got.changed:
        said, heard = got.changed[0]
        return Sentence(
            QT_TRANSLATE_NOOP(
                "core",
                "Speech recognition heard {heard} where the text says {said} ({rate}% of the "
                "text differs).",
            ),
            heard=_quoted([heard]),
            said=_quoted([said]),
            rate=rate,
        )
    return Sentence(
        QT_TRANSLATE_NOOP("core", "Speech recognition: {rate}% of the text differs."), rate=rate
    )


def _quoted(runs: Sequence[str]) -> str:
    shown = ", ".join(f"“{run}”" for run in runs[:SHOWN_RUNS])
    return shown + (", …" if len(runs) > SHOWN_RUNS else "")
