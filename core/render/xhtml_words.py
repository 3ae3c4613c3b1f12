"""The words of an EPUB's XHTML documents, each wrapped in a <span id> a media overlay can point at
and matched in order with the render's timed words. Only text a reader sees is touched; the markup
stays.
"""

import bisect
import re
import unicodedata
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from lxml import etree

from chattts_studio.core.align.words import text_words
from chattts_studio.core.errors import BadTextError

XHTML = "http://www.w3.org/1999/xhtml"
SKIPPED = frozenset({"head", "title", "script", "style", "textarea", "select", "option", "rt"})
RESYNC_WINDOW = 5000  # words skipped at most on one side to find the texts in step again
RESYNC_RUN = 3  # words that must agree in a row to be in step
RESYNC_CHANGED = 8  # words at most changed on both sides at once
_CONTROL = re.compile(r"\[[^\[\]\s]{0,32}\]")


def folded(word: str) -> str:
    """A word as both sides compare it: compatibility forms and case folded."""
    return unicodedata.normalize("NFKC", word).casefold()


def _words_in(text: str) -> list[tuple[int, int]]:
    """(start, end) of each spoken word in `text`, as core/align/words.py finds them."""
    try:
        found = text_words(text)
    except BadTextError:
        return []
    spans, at = [], 0
    masked = _CONTROL.sub(lambda m: " " * len(m.group()), text)
    for word in found:
        start = masked.find(word, at)
        if start < 0:
            break
        spans.append((start, start + len(word)))
        at = start + len(word)
    return spans


@dataclass
class MarkedDocument:
    """An XHTML document parsed, its words wrapped in spans with ids (in reading order)."""

    tree: etree._ElementTree
    ids: list[str]
    words: list[str]

    def to_bytes(self) -> bytes:
        return bytes(etree.tostring(self.tree, xml_declaration=True, encoding="utf-8"))


def _visible(element: etree._Element) -> bool:
    tag = element.tag
    if not isinstance(tag, str):
        return False  # a comment or processing instruction: its text is not shown
    namespace, _, local = tag.rpartition("}")
    return namespace.lstrip("{") == XHTML and local not in SKIPPED


def _wrap(text: str, prefix: str, counter: Iterator[int]) -> tuple[str, list[etree._Element]]:
    """`text` cut into what stays before the first word and a span per word (each span's tail
    holding what follows its word)."""
    spans = _words_in(text)
    if not spans:
        return text, []
    made = []
    for n, (start, end) in enumerate(spans):
        span = etree.Element(f"{{{XHTML}}}span", nsmap=None)
        span.set("id", f"{prefix}{next(counter)}")
        span.text = text[start:end]
        span.tail = text[end : spans[n + 1][0] if n + 1 < len(spans) else len(text)]
        made.append(span)
    return text[: spans[0][0]], made


def mark_words(data: bytes, prefix: str) -> MarkedDocument:
    """The document `data` with each word of its visible text in <span id="{prefix}N">.
    Raises etree.XMLSyntaxError for a document that is not well-formed XML."""
    # No entity expanded, nothing fetched, libxml2's size limits kept: the book is untrusted.
    parser = etree.XMLParser(
        resolve_entities=False, no_network=True, load_dtd=False, strip_cdata=False
    )
    root = etree.fromstring(data, parser)
    tree = root.getroottree()
    taken = {str(v) for v in root.xpath("//@id")}
    while any(i.startswith(prefix) for i in taken):
        prefix = "x" + prefix
    counter = iter(range(1, 1 << 62))
    body = root.find(f"{{{XHTML}}}body")
    if body is None:
        return MarkedDocument(tree, [], [])
    # Every element first, then the changes: the walk must not see the spans it adds.
    for element in list(_elements(body)):
        if element.text and _visible(element):
            before, spans = _wrap(element.text, prefix, counter)
            if spans:
                element.text = before
                for n, span in enumerate(spans):
                    element.insert(n, span)
        parent = element.getparent()
        if element is not body and element.tail and parent is not None and _visible(parent):
            before, spans = _wrap(element.tail, prefix, counter)
            if spans:
                element.tail = before
                at = parent.index(element)
                for n, span in enumerate(spans):
                    parent.insert(at + 1 + n, span)
    ids, words = [], []
    for span in body.iter(f"{{{XHTML}}}span"):
        name = span.get("id", "")
        if name.startswith(prefix) and name[len(prefix) :].isdigit():
            ids.append(name)
            words.append(span.text or "")
    return MarkedDocument(tree, ids, words)


def _elements(body: etree._Element) -> Iterator[etree._Element]:
    """The body and everything in it that is shown, in document order; a skipped element's
    inside is left out (its tail is still the parent's text)."""
    yield body
    for child in body:
        if isinstance(child.tag, str) and not _visible(child):
            yield child  # for its tail only (_visible(child) is False, so its text is kept)
            continue
        if isinstance(child.tag, str):
            yield from _elements(child)
        else:
            yield child


def strip_unused(document: MarkedDocument, used: set[str]) -> None:
    """Unwrap the spans no overlay points at: their words back into the text as they were."""
    keep_ids, keep_words = [], []
    for name, word in zip(document.ids, document.words, strict=True):
        if name in used:
            keep_ids.append(name)
            keep_words.append(word)
    for span in list(document.tree.getroot().iter(f"{{{XHTML}}}span")):
        name = span.get("id", "")
        if name in document.ids and name not in used:
            _unwrap(span)
    document.ids, document.words = keep_ids, keep_words


def _unwrap(span: etree._Element) -> None:
    parent = span.getparent()
    if parent is None:
        return
    text = (span.text or "") + (span.tail or "")
    before = span.getprevious()
    if before is not None:
        before.tail = (before.tail or "") + text
    else:
        parent.text = (parent.text or "") + text
    parent.remove(span)


def pair_words(left: Sequence[str], right: Sequence[str]) -> list[tuple[int, int]]:
    """(i, j) for each word left[i] matched with right[j], in order: equal words are taken in
    step; where they differ, the nearest place ahead where RESYNC_RUN words agree again (found
    through an index of each side's runs, so a long stretch that differs costs no scan)."""
    a = [folded(w) for w in left]
    b = [folded(w) for w in right]
    runs_a, runs_b = _Runs(a), _Runs(b)
    pairs: list[tuple[int, int]] = []
    i = j = 0
    while i < len(a) and j < len(b):
        if a[i] == b[j]:
            pairs.append((i, j))
            i, j = i + 1, j + 1
            continue
        skip = _resync(a, b, i, j, runs_a, runs_b)
        if skip is None:
            i, j = i + 1, j + 1
        else:
            i, j = i + skip[0], j + skip[1]
    return pairs


class _Runs:
    """Where each run of RESYNC_RUN words starts in a list of words."""

    def __init__(self, words: list[str]) -> None:
        self.starts: dict[tuple[str, ...], list[int]] = {}
        for n in range(len(words) - RESYNC_RUN + 1):
            self.starts.setdefault(tuple(words[n : n + RESYNC_RUN]), []).append(n)

    def after(self, run: tuple[str, ...], at: int) -> int | None:
        """How far after `at` the run next starts, within RESYNC_WINDOW; None if not."""
        starts = self.starts.get(run, [])
        k = bisect.bisect_right(starts, at)
        if k < len(starts) and starts[k] - at <= RESYNC_WINDOW:
            return starts[k] - at
        return None


def _resync(
    a: list[str], b: list[str], i: int, j: int, runs_a: _Runs, runs_b: _Runs
) -> tuple[int, int] | None:
    """The nearest skips (di, dj) after which RESYNC_RUN words agree: a few words changed on
    both sides, or words only one side has."""
    if len(a) - i <= RESYNC_RUN or len(b) - j <= RESYNC_RUN:  # the end: a word at a time
        for k in range(1, RESYNC_RUN + 1):
            for di, dj in ((k, k), (0, k), (k, 0)):
                if i + di < len(a) and j + dj < len(b) and a[i + di] == b[j + dj]:
                    return di, dj
        return None
    found: list[tuple[int, int]] = []
    for k in range(1, RESYNC_CHANGED + 1):
        if a[i + k : i + k + RESYNC_RUN] == b[j + k : j + k + RESYNC_RUN]:
            found.append((k, k))
            break
    only_b = runs_b.after(tuple(a[i : i + RESYNC_RUN]), j)
    if only_b is not None:
        found.append((0, only_b))
    only_a = runs_a.after(tuple(b[j : j + RESYNC_RUN]), i)
    if only_a is not None:
        found.append((only_a, 0))
    return min(found, key=max) if found else None
