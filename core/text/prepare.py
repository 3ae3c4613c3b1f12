"""Text preparation: cleaning, control tokens, number reading, segmenting and length estimates."""

import functools
import math
import re
import unicodedata
from dataclasses import dataclass
from typing import Protocol

from chattts_studio.core import STEPS_PER_SECOND
from chattts_studio.core.errors import BadTextError
from chattts_studio.core.messages import QT_TRANSLATE_NOOP, Sentence


class Replacements(Protocol):
    """A pronunciation dictionary (lexicon.Lexicon): where its words occur in a text."""

    def matches(self, text: str) -> list[tuple[int, int, str]]:
        """Non-overlapping (start, end, replacement), in text order."""
        ...


# (kind, what the model reads, what the user wrote): the two differ only for a dictionary word.
Atom = tuple[str, str, str]

# Tokens a user may write inside the text (ChatTTS's tokenizer specials that shape speech).
INLINE_TOKENS = frozenset(
    ["uv_break", "v_break", "lbreak", "llbreak", "laugh"]
    + [f"break_{i}" for i in range(8)]
    + [f"laugh_{i}" for i in range(3)]
    + [f"oral_{i}" for i in range(10)]
    + [f"speed_{i}" for i in range(10)]
)
# Tokens that frame ChatTTS's prompt; in user text they would corrupt it.
RESERVED_TOKENS = frozenset(
    "Sasr Pasr Easr Stts Ptts Etts Sbreak Pbreak Ebreak undefine spk_emb empty_spk music "
    "pure".split()
)

_TOKEN_RE = re.compile(r"\[([^\[\]\s]{0,32})\]")
# A URL or an e-mail address: one atom, never cut (its last character is not punctuation).
_URL = (
    r"(?:[A-Za-z][A-Za-z0-9+.\-]*://|www\.)[!-Z^-~]*[A-Za-z0-9/#=_\-]"
    r"|[A-Za-z0-9._%+\-]+@[A-Za-z0-9\-]+(?:\.[A-Za-z0-9\-]+)+"
)
_ATOM_RE = re.compile(
    r"(?P<token>\[[^\[\]\s]{1,32}\])"
    rf"|(?P<url>{_URL})"
    r"|(?P<word>[A-Za-z0-9]+(?:['’.,:/\-][A-Za-z0-9]+)*)"
    r"|(?P<newline>\n)"
    r"|(?P<space>[ \t\u3000]+)"
    r"|(?P<other>.)",
    re.DOTALL,
)
_SENTENCE_END = frozenset("。！？!?…\n.")
_CLAUSE_END = frozenset("，、,；;：:—–")
# Words whose full stop ends no sentence.
_ABBREVIATIONS = frozenset("mr mrs ms dr prof st jr sr vs e.g i.e fig mt".split())
_CLOSERS = frozenset("”’」』）)】》\"'")
_CJK = re.compile(r"[\u4e00-\u9fff]")
_LATIN = re.compile(r"[A-Za-z]")
_DIGIT = re.compile(r"[0-9]")
_SPEAKABLE = re.compile(r"[\u4e00-\u9fffA-Za-z0-9]")

# Typical reading speeds; they bound the GPT steps of a segment and estimate audio length.
SECONDS_PER_CJK = 0.24
SECONDS_PER_LATIN_LETTER = 0.07
SECONDS_PER_DIGIT = 0.3
SECONDS_PER_PAUSE_TOKEN = {
    "uv_break": 0.15,
    "v_break": 0.15,
    "lbreak": 0.4,
    "llbreak": 0.6,
    "laugh": 0.6,
}
# Head-room over the estimate, so real weights finish naturally (EOS) before the cap.
STEP_CAP_MARGIN = 1.3
MIN_STEP_CAP = 16
# ChatTTS's own max_new_token default: 43.7 s of audio. Its GPT has 4096 positions, and long
# single segments drift; a sentence past the plan limit below is split instead (about 140
# Chinese characters reach this cap).
MAX_STEP_CAP = 2048
# A segment is planned to need at most this many steps (with the margin), whatever the segment
# size, so that ChatTTS's refine pass (which adds pauses and fillers) still fits under the cap:
# a segment is split further rather than ever cut short.
PLAN_STEP_LIMIT = int(MAX_STEP_CAP * 0.85)
# The model's limit for one segment in seconds of estimated speech (about 28.5 s): what a
# sentence may take and stay whole; half a step of slack keeps sums of floats under the cap.
MAX_SEGMENT_SECONDS = (PLAN_STEP_LIMIT - 0.5) / (STEPS_PER_SECOND * STEP_CAP_MARGIN)
# That limit in Chinese characters (118; about 400 English letters): the segment size counts
# Chinese characters' worth of speech, so the window's segment slider ends here.
MAX_CJK_SEGMENT = int(MAX_SEGMENT_SECONDS / SECONDS_PER_CJK)


@dataclass(frozen=True)
class Segment:
    """A piece of the text synthesized as one unit, in text order."""

    index: int
    text: str  # what the model reads (pronunciation dictionary applied), before normalising
    est_seconds: float
    step_cap: int
    source: str = ""  # the user's words when the dictionary changed them; "" when the same

    @property
    def shown(self) -> str:
        """The segment as the user wrote it (results and subtitles show this)."""
        return self.source or self.text

    @property
    def expected_steps(self) -> int:
        """The steps a typical speaker needs for the text (no margin): progress is based on it."""
        return max(1, round(self.est_seconds * STEPS_PER_SECOND))


def segment(index: int, text: str, source: str = "") -> Segment:
    return Segment(
        index, text, estimate_seconds(text), step_cap(text), "" if source == text else source
    )


def clean(text: str) -> str:
    """Normalise Unicode and drop control characters (NUL and friends), keeping newlines."""
    text = unicodedata.normalize("NFC", text).replace("\r\n", "\n").replace("\r", "\n")
    return "".join(c for c in text if c in "\n\t" or unicodedata.category(c)[0] != "C")


def check_tokens(text: str) -> None:
    """Raise BadTextError for unknown, reserved or malformed control tokens."""
    for match in _TOKEN_RE.finditer(text):
        name = match.group(1)
        if name in RESERVED_TOKENS:
            raise BadTextError(
                Sentence(
                    QT_TRANSLATE_NOOP(
                        "core",
                        "The control token [{name}] is reserved by ChatTTS and cannot be used "
                        "in the text.",
                    ),
                    name=name,
                )
            )
        if name not in INLINE_TOKENS:
            raise BadTextError(
                Sentence(
                    QT_TRANSLATE_NOOP(
                        "core",
                        "Unknown control token [{name}]; use one of [uv_break], "
                        "[v_break], [lbreak], [laugh], [break_0-7], [oral_0-9], "
                        "[laugh_0-2], [speed_0-9].",
                    ),
                    name=name,
                )
            )
    stray = _TOKEN_RE.sub("", text)
    if "[" in stray or "]" in stray:
        raise BadTextError(
            QT_TRANSLATE_NOOP(
                "core",
                "The text has a '[' or ']' that is not part of a control token such as [uv_break].",
            )
        )


def is_speakable(text: str) -> bool:
    """True when ChatTTS can say something: Chinese characters, Latin letters or digits."""
    return bool(_SPEAKABLE.search(_TOKEN_RE.sub("", text)))


def estimate_seconds(text: str) -> float:
    """Audio length a typical speaker needs for text (what the step cap is based on)."""
    seconds = 0.0
    for match in _TOKEN_RE.finditer(text):
        seconds += SECONDS_PER_PAUSE_TOKEN.get(match.group(1), 0.0)
    plain = _TOKEN_RE.sub("", text)
    seconds += len(_CJK.findall(plain)) * SECONDS_PER_CJK
    seconds += len(_LATIN.findall(plain)) * SECONDS_PER_LATIN_LETTER
    seconds += len(_DIGIT.findall(plain)) * SECONDS_PER_DIGIT
    return seconds


def needed_steps(text: str) -> int:
    """GPT steps for the text's expected speech length plus head-room, before any clamping."""
    return max(MIN_STEP_CAP, math.ceil(estimate_seconds(text) * STEPS_PER_SECOND * STEP_CAP_MARGIN))


def step_cap(text: str) -> int:
    """The most GPT steps a segment may take: its expected speech length plus head-room."""
    return min(MAX_STEP_CAP, needed_steps(text))


def _atoms(text: str, lexicon: Replacements | None = None) -> list[Atom]:
    """The text's atoms; a dictionary word becomes one atom (never split, its length that of
    its replacement) that reads as the replacement and shows as the word."""
    atoms: list[Atom] = []
    at = 0
    for start, end, replacement in lexicon.matches(text) if lexicon else []:
        atoms += _plain_atoms(text[at:start])
        atoms.append(("word", replacement, text[start:end]))
        at = end
    return atoms + _plain_atoms(text[at:])


def _plain_atoms(text: str) -> list[Atom]:
    atoms: list[Atom] = []
    for m in _ATOM_RE.finditer(text):
        kind = m.lastgroup or "other"
        atoms.append(("word" if kind == "url" else kind, m.group(), m.group()))
    return atoms


def _cost(atoms: list[Atom]) -> float:
    """Seconds of speech the atoms need (what the model reads), as estimate_seconds counts."""
    return sum(_atom_seconds(value) for _, value, _ in atoms)


@functools.lru_cache(maxsize=4096)
def _atom_seconds(value: str) -> float:
    return estimate_seconds(value)


def target_seconds(size: int) -> float:
    """The speech a segment grows toward for a segment size: `size` Chinese characters' worth
    (an English letter costs what it takes to say, about 0.3 of one), at most the model's limit."""
    return min(max(1, size) * SECONDS_PER_CJK, MAX_SEGMENT_SECONDS)


def _split_after(atoms: list[Atom], ends: frozenset[str]) -> list[list[Atom]]:
    """Cut after each atom in `ends` (and the closing quotes that follow it); a full stop after
    a common abbreviation ("Mr.", "e.g.") ends nothing."""
    pieces: list[list[Atom]] = []
    current: list[Atom] = []
    ended = False
    for atom in atoms:
        value = atom[1]
        if ended and value not in ends and value not in _CLOSERS:
            pieces.append(current)
            current, ended = [], False
        if value in ends and not (
            value == "." and current and current[-1][1].lower() in _ABBREVIATIONS
        ):
            ended = True
        current.append(atom)
    if current:
        pieces.append(current)
    return pieces


def _is_cjk(atom: Atom) -> bool:
    return atom[0] == "other" and bool(_CJK.match(atom[1]))


def _words(atoms: list[Atom]) -> list[list[Atom]]:
    """The places a clause may be cut: between words (at spaces, around Chinese characters),
    never inside a word, number, URL, control token or dictionary word; punctuation and a
    control token stay with what they follow."""
    words: list[list[Atom]] = []
    previous: Atom | None = None
    for atom in atoms:
        kind = atom[0]
        starts = (
            previous is None
            or kind in ("space", "newline")
            or previous[0] in ("space", "newline")
            or _is_cjk(atom)
            or (kind == "word" and previous[0] != "word")
        )
        if starts:
            words.append([atom])
        else:
            words[-1].append(atom)
        previous = atom
    return words


def _balanced(units: list[list[Atom]], most: float) -> list[list[Atom]]:
    """Units joined, in order, into as few pieces of at most `most` seconds as they allow, the
    longest piece as short as it can be (a unit longer than `most` is a piece of its own)."""
    costs = [_cost(u) for u in units]

    def pieces(bound: float) -> list[list[Atom]]:
        out: list[list[Atom]] = []
        current: list[Atom] = []
        spent = 0.0
        for unit, cost in zip(units, costs, strict=True):
            if current and spent + cost > bound:
                out.append(current)
                current, spent = [], 0.0
            current.extend(unit)
            spent += cost
        if current:
            out.append(current)
        return out

    fewest = len(pieces(most))
    low, high = sum(costs) / fewest - 0.01, most
    while high - low > 0.01:  # the smallest bound (to 10 ms) that needs no more pieces
        middle = (low + high) / 2
        low, high = (low, middle) if len(pieces(middle)) <= fewest else (middle, high)
    return pieces(high)


def _split_long(sentence: list[Atom]) -> list[list[Atom]]:
    """A sentence longer than the model's limit: cut at clause punctuation, then between words,
    into as few and as even pieces as fit."""
    units: list[list[Atom]] = []
    for clause in _split_after(sentence, _CLAUSE_END):
        if _cost(clause) <= MAX_SEGMENT_SECONDS:
            units.append(clause)
        else:
            units += _balanced(_words(clause), MAX_SEGMENT_SECONDS)
    return _balanced(units, MAX_SEGMENT_SECONDS)


def _pack(atoms: list[Atom], target: float, first_apart: bool = False) -> list[list[Atom]]:
    """Whole sentences joined up to `target` seconds of speech; a longer sentence within the
    model's limit is a piece of its own, and one past the limit is split (_split_long). With
    `first_apart` the first speakable sentence is a piece of its own."""
    packed: list[list[Atom]] = []
    current: list[Atom] = []
    spent = 0.0
    for sentence in _split_after(atoms, _SENTENCE_END):
        if first_apart and current and not packed and is_speakable(_render(current)):
            packed.append(current)
            current, spent = [], 0.0
        cost = _cost(sentence)
        if cost > MAX_SEGMENT_SECONDS:
            if current:
                packed.append(current)
            packed += _split_long(sentence)
            current, spent = [], 0.0
            continue
        # (A nanosecond of slack: the same text packs alike whatever order its floats sum in.)
        if current and spent + cost > target + 1e-9 and is_speakable(_render(sentence)):
            packed.append(current)
            current, spent = [], 0.0
        current.extend(sentence)
        spent += cost
    if current:
        packed.append(current)
    return packed


def _render(atoms: list[Atom], shown: bool = False) -> str:
    return re.sub(r"\s+", " ", "".join(a[2] if shown else a[1] for a in atoms)).strip()


def check_text(text: str) -> str:
    """The cleaned text, or BadTextError with one sentence on why it cannot be spoken."""
    text = clean(text)
    check_tokens(text)
    if not text.strip():
        raise BadTextError(QT_TRANSLATE_NOOP("core", "The text is empty."))
    if not is_speakable(text):
        raise BadTextError(
            QT_TRANSLATE_NOOP(
                "core",
                "The text has nothing ChatTTS can speak: it reads Chinese, English letters "
                "and numbers.",
            )
        )
    return text


def split_segments(
    text: str, limit: int, lexicon: Replacements | None = None, first_apart: bool = False
) -> list[Segment]:
    """Split text into segments that end at sentence ends: whole sentences are packed up to
    `limit` (the segment size, in Chinese characters' worth of speech: target_seconds), and a
    longer sentence stays whole while the model can say it in one segment (MAX_SEGMENT_SECONDS);
    past that it is cut at clauses, then between words, never inside a word, a number, a URL, a
    control token or a dictionary word. Pieces with nothing to say (a lone "……") join their
    neighbour. With a `lexicon`, its replacements are made first: segments hold what the model
    reads, and the user's words in `source`. `first_apart`: the first sentence is a segment of
    its own (a synthesis's first audio waits for its refine pass and first steps only)."""
    text = clean(text)
    check_text(_render(_atoms(text, lexicon)) if lexicon else text)
    packed = _pack(_atoms(text, lexicon), target_seconds(limit), first_apart)
    texts: list[tuple[str, str]] = []  # (model text, shown text)
    pending = ("", "")  # unspeakable pieces wait for the next speakable one
    for atoms in packed:
        piece, shown = _render(atoms), _render(atoms, shown=True)
        if not piece:
            continue
        if not is_speakable(piece):
            if texts:
                texts[-1] = (f"{texts[-1][0]}{piece}", f"{texts[-1][1]}{shown}")
            else:
                pending = (pending[0] + piece, pending[1] + shown)
            continue
        texts.append((f"{pending[0]}{piece}", f"{pending[1]}{shown}"))
        pending = ("", "")
    return [segment(i, t, shown) for i, (t, shown) in enumerate(texts)]
