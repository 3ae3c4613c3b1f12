"""Text preparation: cleaning, control tokens, number reading, segmenting and length estimates."""

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
_ATOM_RE = re.compile(
    r"(?P<token>\[[^\[\]\s]{1,32}\])"
    r"|(?P<word>[A-Za-z0-9]+(?:['’.,:/\-][A-Za-z0-9]+)*)"
    r"|(?P<newline>\n)"
    r"|(?P<space>[ \t\u3000]+)"
    r"|(?P<other>.)",
    re.DOTALL,
)
_SENTENCE_END = frozenset("。！？!?；;…\n.")
_CLAUSE_END = frozenset("，、,：:—–")
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
# single segments drift; split long text with the segment size instead (about 140 Chinese
# characters reach this cap).
MAX_STEP_CAP = 2048
# A segment is planned to need at most this many steps (with the margin), whatever the segment
# size, so that ChatTTS's refine pass (which adds pauses and fillers) still fits under the cap:
# a segment is split further rather than ever cut short.
PLAN_STEP_LIMIT = int(MAX_STEP_CAP * 0.85)
# The longest all-Chinese segment that fits that limit: the window's segment slider ends here.
MAX_CJK_SEGMENT = int(PLAN_STEP_LIMIT / (STEPS_PER_SECOND * STEP_CAP_MARGIN * SECONDS_PER_CJK))


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
    return [(m.lastgroup or "other", m.group(), m.group()) for m in _ATOM_RE.finditer(text)]


def _length(atoms: list[Atom]) -> int:
    return sum(1 if kind == "token" else len(value) for kind, value, _ in atoms)


def _split_after(atoms: list[Atom], ends: frozenset[str]) -> list[list[Atom]]:
    """Cut after each atom in `ends` (and the closing quotes that follow it)."""
    pieces: list[list[Atom]] = []
    current: list[Atom] = []
    ended = False
    for atom in atoms:
        value = atom[1]
        if ended and value not in ends and value not in _CLOSERS:
            pieces.append(current)
            current, ended = [], False
        current.append(atom)
        if value in ends:
            ended = True
    if current:
        pieces.append(current)
    return pieces


def _split_atoms(atoms: list[Atom], limit: int) -> list[list[Atom]]:
    """Last resort for a clause longer than limit: cut between atoms, preferring spaces."""
    pieces: list[list[Atom]] = []
    current: list[Atom] = []
    for atom in atoms:
        if current and _length([*current, atom]) > limit:
            cut = len(current)
            for i in range(len(current) - 1, 0, -1):
                if current[i][0] == "space":
                    cut = i
                    break
            else:
                # Punctuation must not start a piece alone: take the word before it along.
                if atom[0] == "other" and not is_speakable(atom[1]) and cut > 1:
                    cut -= 1
            pieces.append(current[:cut])
            current = current[cut:]
        current.append(atom)
    if current:
        pieces.append(current)
    return pieces


def _units(atoms: list[Atom], limit: int) -> list[list[Atom]]:
    units: list[list[Atom]] = []
    for sentence in _split_after(atoms, _SENTENCE_END):
        if _length(sentence) <= limit:
            units.append(sentence)
            continue
        for clause in _split_after(sentence, _CLAUSE_END):
            units.extend([clause] if _length(clause) <= limit else _split_atoms(clause, limit))
    return units


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


def split_segments(text: str, limit: int, lexicon: Replacements | None = None) -> list[Segment]:
    """Split text into segments of at most `limit` characters, at sentence, then clause, then
    word boundaries; never inside a word, a number, a control token or a dictionary word.
    Pieces with nothing to say (a lone "……") join their neighbour. With a `lexicon`, its
    replacements are made first: segments hold what the model reads, and the user's words in
    `source`."""
    text = clean(text)
    check_text(_render(_atoms(text, lexicon)) if lexicon else text)
    packed = [p for piece in _pack(_atoms(text, lexicon), limit) for p in _fit_cap(piece)]
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


def _pack(atoms: list[Atom], limit: int) -> list[list[Atom]]:
    """Sentences (or clauses, or words) joined into pieces of at most `limit` characters."""
    packed: list[list[Atom]] = []
    for unit in _units(atoms, limit):
        if packed and _length(packed[-1]) + _length(unit) <= limit:
            packed[-1].extend(unit)
        else:
            packed.append(list(unit))
    return packed


def _fit_cap(atoms: list[Atom]) -> list[list[Atom]]:
    """A piece whose speech would outlast the step cap, split at its next boundaries until
    every part fits (a lone word that cannot be split is left as it is)."""
    steps = needed_steps(_render(atoms))
    if steps <= PLAN_STEP_LIMIT:
        return [atoms]
    # Aim at the length that fits, in proportion; the check above runs again on each part.
    limit = max(1, _length(atoms) * PLAN_STEP_LIMIT // steps)
    parts = _pack(atoms, limit)
    if len(parts) == 1:
        return parts
    return [p for part in parts for p in _fit_cap(part)]
