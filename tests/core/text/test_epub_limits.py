"""An EPUB is a zip: its entries are checked before anything is unpacked, so a small file that
unpacks to gigabytes (a zip bomb) is one sentence at once, with no memory spent on it; a normal
book still reads."""

import struct
import tracemalloc
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from chattts_studio.core.errors import StudioError
from chattts_studio.core.text import epub_zip
from chattts_studio.core.text.chapters import read_book

BOMB_BYTES = 2 << 30  # 2 GiB of zeros, deflated to about 9 MB
PEAK_LIMIT = 32 << 20  # what refusing may allocate at most


def _book(path: Path) -> Path:
    """A two-chapter EPUB with a picture, as ebooklib writes one."""
    from ebooklib import epub

    book = epub.EpubBook()
    book.set_identifier("limits")
    book.set_title("Limits")
    book.set_language("en")
    pages = []
    for number in (1, 2):
        page = epub.EpubHtml(title=f"Chapter {number}", file_name=f"c{number}.xhtml", lang="en")
        page.content = f"<h1>Chapter {number}</h1><p>Words of chapter {number}.</p>"
        book.add_item(page)
        pages.append(page)
    picture = epub.EpubImage(uid="cover", file_name="cover.png", media_type="image/png")
    picture.content = b"\x89PNG placeholder"
    book.add_item(picture)
    book.toc = tuple(epub.Link(p.file_name, p.title, p.file_name) for p in pages)
    book.add_item(epub.EpubNcx())
    book.add_item(epub.EpubNav())
    book.spine = ["nav", *pages]
    epub.write_epub(str(path), book)
    return path


def _zeros(total: int) -> Iterator[bytes]:
    block = bytes(1 << 22)
    for start in range(0, total, len(block)):
        yield block[: min(len(block), total - start)]


def _with_cover(source: Path, target: Path, size: int, level: int = 1) -> Path:
    """A copy of `source` whose picture is `size` zero bytes, deflated as it streams (so the
    copy stays small and quick to write: zeros pack about 230:1 at level 1)."""
    packed = zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED, compresslevel=level)
    with zipfile.ZipFile(source) as old, packed as new:
        for info in old.infolist():
            if not info.filename.endswith("cover.png"):
                new.writestr(info, old.read(info))  # as it was (the mimetype stays stored)
                continue
            with new.open(info.filename, "w", force_zip64=size >= 1 << 31) as out:
                for block in _zeros(size):
                    out.write(block)
    return target


@pytest.fixture(scope="module")
def books(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("epub")
    normal = _book(root / "normal.epub")
    return {"normal": normal, "bomb": _with_cover(normal, root / "bomb.epub", BOMB_BYTES)}


def _peak_while(call: object) -> tuple[int, BaseException | None]:
    """Peak Python memory (bytes allocated) while `call()` runs, and what it raised."""
    tracemalloc.start()
    raised: BaseException | None = None
    try:
        call()  # type: ignore[operator]
    except Exception as exc:
        raised = exc
    finally:
        _current, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    return peak, raised


def test_a_zip_bomb_is_refused_at_once_with_nothing_unpacked(books: dict[str, Path]) -> None:
    bomb = books["bomb"]
    assert bomb.stat().st_size < 16 << 20  # small on disk, 2 GiB unpacked
    peak, raised = _peak_while(lambda: read_book(bomb))
    assert isinstance(raised, StudioError)
    said = str(raised)
    assert said.startswith(f"The EPUB {bomb} is not read: its file ") and "\n" not in said
    assert "cover.png" in said and "2048 MB" in said and "zip bomb" in said
    assert peak < PEAK_LIMIT, f"{peak >> 20} MB allocated while refusing"


def test_a_normal_book_still_reads(books: dict[str, Path]) -> None:
    book = read_book(books["normal"])
    assert book.title == "Limits"
    assert [c.title for c in book.chapters] == ["Chapter 1", "Chapter 2"]
    assert "Words of chapter 2." in book.chapters[1].text


@pytest.mark.parametrize(
    ("limit", "value", "words"),
    [
        ("EPUB_MAX_ENTRIES", 3, "files, more than 3"),
        ("EPUB_MAX_ENTRY", 100, "would unpack to 0 MB, more than 0 MB"),
        ("EPUB_MAX_TOTAL", 1000, "its files would unpack to 0 MB"),
    ],
)
def test_each_limit_refuses_a_book_over_it(
    books: dict[str, Path], monkeypatch: pytest.MonkeyPatch, limit: str, value: int, words: str
) -> None:
    """The limits are far above any real book: lowered here, the normal book crosses each."""
    monkeypatch.setattr(epub_zip, limit, value)
    with pytest.raises(StudioError, match=r"^The EPUB .* is not read: ") as refused:
        read_book(books["normal"])
    assert words in str(refused.value)


def _declare_size(path: Path, name: str, size: int) -> None:
    """Make the zip's central directory declare `size` unpacked bytes for `name` (a lie)."""
    data = bytearray(path.read_bytes())
    start = -1
    while (start := data.find(b"PK\x01\x02", start + 1)) >= 0:
        length = struct.unpack_from("<H", data, start + 28)[0]
        if data[start + 46 : start + 46 + length].decode() == name:
            struct.pack_into("<I", data, start + 24, size)
            path.write_bytes(bytes(data))
            return
    raise AssertionError(f"{name} is not in {path}")


def test_an_entry_that_lies_about_its_size_is_read_no_further(
    books: dict[str, Path], tmp_path: Path
) -> None:
    """Reads stop at the size checked: 64 MiB behind a declared 1,000 bytes is never unpacked,
    and the book is one sentence (its checksum does not match what was read)."""
    liar = _with_cover(books["normal"], tmp_path / "liar.epub", 64 << 20)
    name = next(n for n in zipfile.ZipFile(liar).namelist() if n.endswith("cover.png"))
    _declare_size(liar, name, 1000)
    peak, raised = _peak_while(lambda: read_book(liar))
    assert isinstance(raised, StudioError)
    assert str(raised).startswith(f"Cannot read the EPUB {liar}: ") and "\n" not in str(raised)
    assert peak < PEAK_LIMIT, f"{peak >> 20} MB allocated"
