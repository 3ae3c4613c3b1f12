"""Books in, chapters out: plain text, Markdown and EPUB, split into titled chapters.

`.txt` splits at heading lines (第一章, Chapter 1, Part 2, Prologue, 序章, ...), else at three blank
lines in a row; Markdown at the highest `#` level that occurs at least twice; EPUB by its table of
contents in spine order (its zip checked first: epub_zip.py). A heading stays at the start of its
chapter, so it is read out; brackets that are not a control token become parentheses. The rules in
full: docs/audiobooks.md, "Chapters"."""

import html
import re
import warnings
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path, PurePosixPath

from chattts_studio.core.errors import StudioError
from chattts_studio.core.messages import QT_TRANSLATE_NOOP, Sentence, cannot_read
from chattts_studio.core.text.prepare import INLINE_TOKENS, clean

TITLE_MAX = 60
_CN_NUM = "0-9０-９零〇一二三四五六七八九十百千万两"
_EN_NUM_WORDS = (
    "one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|"
    "fifteen|sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|seventy|"
    "eighty|ninety|hundred"
)
_HEADING = re.compile(
    rf"^(?:第[{_CN_NUM}]+[章回节卷部篇集](?:[\s:：.、·—-].*)?"
    rf"|(?:chapter|part|book)\s+(?:\d+|(?-i:[IVXLCDM]+)|(?:{_EN_NUM_WORDS})(?:[\s-](?:{_EN_NUM_WORDS}))*)"
    # then nothing, a separator, or words that do not start in lower case (not prose)
    r"(?:[:.\-—–].*|\s+(?-i:[^a-z\s]).*)?"
    r"|(?:prologue|epilogue|preface|foreword|introduction|afterword)[\s:.]*"
    r"|(?:序章|序言|楔子|引子|前言|尾声|后记)(?:[\s:：].*)?)$",
    re.IGNORECASE,
)
_BRACKETED = re.compile(r"\[([^\[\]]*)\]")


@dataclass(frozen=True)
class Chapter:
    title: str
    text: str


@dataclass(frozen=True)
class Book:
    title: str
    chapters: tuple[Chapter, ...]


def read_book(path: Path) -> Book:
    """The book's chapters after its kind (the file's extension); StudioError when it cannot
    be read or holds no text."""
    path = Path(path)
    suffix = path.suffix.lower()
    if not path.is_file():
        raise StudioError(
            Sentence(
                QT_TRANSLATE_NOOP("core", "The book {path} does not exist or is not a file."),
                path=str(path),
            )
        )
    if suffix == ".epub":
        book = read_epub(path)
    else:
        try:
            text = path.read_text(encoding="utf-8-sig")
        except (OSError, UnicodeDecodeError) as exc:
            raise StudioError(cannot_read(path, exc)) from None
        if suffix in (".md", ".markdown"):
            book = markdown_chapters(text, path.stem)
        else:
            book = text_chapters(text, path.stem)
    if not book.chapters:
        raise StudioError(
            Sentence(
                QT_TRANSLATE_NOOP("core", "The book {path} has no text to read."), path=str(path)
            )
        )
    return book


def speakable(text: str) -> str:
    """Cleaned text with brackets that are not control tokens turned into parentheses."""
    kept: list[str] = []

    def hold(match: re.Match[str]) -> str:
        if match.group(1) not in INLINE_TOKENS:
            return match.group()
        kept.append(match.group())
        return f"\0{len(kept) - 1}\0"  # clean() dropped every NUL: the marker is unique

    text = _BRACKETED.sub(hold, clean(text)).replace("[", "(").replace("]", ")")
    return re.sub("\0(\\d+)\0", lambda m: kept[int(m.group(1))], text).strip()


def _chapter(title: str, text: str) -> Chapter:
    return Chapter(" ".join(title.split())[:TITLE_MAX] or "Untitled", speakable(text))


def is_heading(line: str) -> bool:
    line = line.strip()
    return 0 < len(line) <= TITLE_MAX and bool(_HEADING.match(line))


def text_chapters(text: str, title: str) -> Book:
    lines = clean(text).split("\n")
    starts = [i for i, line in enumerate(lines) if is_heading(line)]
    chapters: list[Chapter] = []
    if starts:
        front = "\n".join(lines[: starts[0]])
        if front.strip():
            chapters.append(_chapter(title, front))
        later: list[str] = [lines[i].strip() for i in starts]
        for n, start in enumerate(starts):
            end = starts[n + 1] if n + 1 < len(starts) else len(lines)
            body = "\n".join(lines[start + 1 : end])
            if not body.strip() and later[n] in later[n + 1 :]:
                continue  # a line of a table of contents: the chapter comes later
            chapters.append(_chapter(lines[start].strip(), "\n".join(lines[start:end])))
    else:
        blocks = [b for b in re.split(r"\n(?:[ \t\u3000]*\n){3,}", "\n".join(lines)) if b.strip()]
        if len(blocks) > 1:
            for block in blocks:
                first = next(line for line in block.split("\n") if line.strip())
                chapters.append(_chapter(first.strip(), block))
        elif blocks:
            chapters.append(_chapter(title, blocks[0]))
    return Book(title, tuple(c for c in chapters if c.text))


_MD_HEADING = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*?)[ \t]*#*[ \t]*$")
_MD_FENCE = re.compile(r"^ {0,3}(```|~~~)")


def _markdown_inline(line: str) -> str:
    line = re.sub(r"!\[[^\]]*\]\([^)]*\)", "", line)  # images
    line = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", line)  # links: their text
    line = re.sub(r"\[([^\]]*)\]\[[^\]]*\]", r"\1", line)  # reference links
    line = re.sub(r"<[^>]+>", "", line)  # inline HTML
    line = re.sub(r"`([^`]*)`", r"\1", line)
    line = re.sub(r"(\*\*|__|\*|_|~~)(?=\S)(.+?)(?<=\S)\1", r"\2", line)
    line = re.sub(r"^ {0,3}(?:>\s?)+", "", line)  # quotes
    line = re.sub(r"^\s*(?:[-*+]|\d+[.)])\s+", "", line)  # list markers
    if re.fullmatch(r"\s*(?:[-*_]\s*){3,}", line) or re.fullmatch(r"\s*\|?[\s:|-]+\|?\s*", line):
        return ""  # rules and table separators
    return html.unescape(line.replace("|", " "))


def markdown_chapters(text: str, title: str) -> Book:
    """Markdown split at its chapter headings (see the module's rules)."""
    lines: list[tuple[int, str]] = []  # (heading level or 0, text)
    fenced = False
    for raw in clean(text).split("\n"):
        if _MD_FENCE.match(raw):
            fenced = not fenced
            continue
        if fenced:
            continue
        match = _MD_HEADING.match(raw)
        if match:
            lines.append((len(match.group(1)), _markdown_inline(match.group(2))))
        else:
            lines.append((0, _markdown_inline(raw)))
    levels = [level for level, _ in lines if level]
    split_at = next((lv for lv in range(1, 7) if levels.count(lv) >= 2), min(levels or [0]))
    book_title = title
    if split_at > 1 and levels.count(1) == 1:
        book_title = next(t for lv, t in lines if lv == 1) or title
    chapters: list[Chapter] = []
    current_title, body = book_title, list[str]()
    for level, line in lines:
        if split_at and level == split_at:
            if "\n".join(body).strip():
                chapters.append(_chapter(current_title, "\n".join(body)))
            current_title, body = line, []
        body.append(line)
    if "\n".join(body).strip():
        chapters.append(_chapter(current_title, "\n".join(body)))
    return Book(book_title, tuple(c for c in chapters if c.text))


class _HtmlText(HTMLParser):
    """Visible text of an XHTML document: block elements end lines; scripts, styles and the
    head are skipped; the first h1-h3 is kept as a title."""

    BLOCKS = frozenset(
        "p div br li h1 h2 h3 h4 h5 h6 tr blockquote section article header footer dt dd "
        "pre hr figcaption caption".split()
    )
    SKIP = frozenset({"script", "style", "head", "title"})

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.skipping = 0
        self.heading: list[str] | None = None
        self.first_heading = ""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in self.SKIP:
            self.skipping += 1
        elif tag in self.BLOCKS:
            self.parts.append("\n")
        if tag in ("h1", "h2", "h3") and not self.first_heading:
            self.heading = []

    def handle_endtag(self, tag: str) -> None:
        if tag in self.SKIP:
            self.skipping = max(0, self.skipping - 1)
        elif tag in self.BLOCKS:
            self.parts.append("\n")
        if tag in ("h1", "h2", "h3") and self.heading is not None:
            self.first_heading = " ".join("".join(self.heading).split())
            self.heading = None

    def handle_data(self, data: str) -> None:
        if self.skipping:
            return
        self.parts.append(data)
        if self.heading is not None:
            self.heading.append(data)

    def text(self) -> str:
        joined = "".join(self.parts)
        lines = (" ".join(line.split()) for line in joined.split("\n"))
        return "\n".join(line for line in lines if line)


def html_text(markup: bytes | str) -> tuple[str, str]:
    """(visible text, first heading) of an XHTML document."""
    if isinstance(markup, bytes):
        markup = markup.decode("utf-8", errors="replace")
    parser = _HtmlText()
    parser.feed(markup)
    parser.close()
    return parser.text(), parser.first_heading


def _href(href: str) -> str:
    return str(PurePosixPath(href.split("#", 1)[0])).lstrip("./")


def _toc_titles(toc: object) -> dict[str, str]:
    """{document href: its title in the table of contents}, all levels; where a part and its
    first chapter start in one document, the chapter's title."""
    titles: dict[str, str] = {}

    def walk(entries: object) -> None:
        for entry in entries if isinstance(entries, list | tuple) else [entries]:
            if isinstance(entry, tuple) and len(entry) == 2 and isinstance(entry[1], list | tuple):
                section, children = entry
                walk(children)  # first: a chapter's own title wins over its part's
                href = getattr(section, "href", None)
                if href:
                    titles.setdefault(_href(href), getattr(section, "title", "") or "")
            elif isinstance(entry, list | tuple):
                walk(entry)
            else:
                href = getattr(entry, "href", None)
                if href:
                    titles.setdefault(_href(href), getattr(entry, "title", "") or "")

    walk(toc)
    return titles


def read_epub(path: Path) -> Book:
    import ebooklib
    from ebooklib import epub

    from chattts_studio.core.text.epub_zip import open_epub

    try:
        with open(path, "rb") as handle, warnings.catch_warnings():
            warnings.simplefilter("ignore")
            book = open_epub(path, handle)
    except StudioError:
        raise
    except OSError as exc:
        raise StudioError(cannot_read(path, exc)) from None
    except Exception as exc:  # a zip that is not an EPUB, a broken container, ...
        raise StudioError(
            Sentence(
                QT_TRANSLATE_NOOP("core", "Cannot read the EPUB {path}: {reason}."),
                path=str(path),
                reason=str(exc).splitlines()[0],
            )
        ) from None
    titles = _toc_titles(book.toc)
    # Contents links are relative to the navigation file, item names to the package file:
    # the same folder in nearly every book; the file name alone when they differ.
    basenames = {PurePosixPath(k).name: t for k, t in titles.items()}
    meta = book.get_metadata("DC", "title")
    book_title = (meta[0][0] if meta else "") or path.stem
    chapters: list[tuple[str, list[str]]] = []
    for idref, *_ in book.spine:
        item = book.get_item_with_id(idref)
        if item is None or item.get_type() != ebooklib.ITEM_DOCUMENT:
            continue
        if isinstance(item, epub.EpubNav):
            continue
        text, heading = html_text(item.get_content())
        name = _href(item.get_name())
        title = titles.get(name) or basenames.get(PurePosixPath(name).name)
        if title is not None or not titles or not chapters:
            if not text.strip() and title is None:
                continue  # an empty page (a cover image) before any chapter
            chapters.append((title or heading or book_title, [text]))
        else:
            chapters[-1][1].append(text)
    found = (_chapter(title, "\n".join(texts)) for title, texts in chapters)
    return Book(book_title, tuple(c for c in found if c.text))
