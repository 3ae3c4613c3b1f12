"""An EPUB is a zip, which can unpack to far more than its size: entries are checked against what a
book is worth before ebooklib reads them, each through a bounded read.
"""

import posixpath
import zipfile
from pathlib import Path
from typing import IO, TYPE_CHECKING

from chattts_studio.core.errors import StudioError
from chattts_studio.core.messages import QT_TRANSLATE_NOOP, Sentence

if TYPE_CHECKING:
    from ebooklib.epub import EpubBook

# What a book may unpack to. Text deflates about 3-5:1 and pictures hardly at all, while a
# run of zeros deflates about 1000:1: a 2 MB file can unpack to 2 GB.
EPUB_MAX_ENTRIES = 10_000
EPUB_MAX_ENTRY = 256 << 20  # bytes, one file unpacked
EPUB_MAX_TOTAL = 1 << 30  # bytes, every file unpacked
EPUB_MAX_RATIO = 100  # unpacked / packed, for a file over EPUB_RATIO_FROM bytes
EPUB_RATIO_FROM = 1 << 20  # small files (headers weigh more than data) may have any ratio


def _refused(path: Path, reason: Sentence) -> StudioError:
    return StudioError(
        Sentence(
            QT_TRANSLATE_NOOP("core", "The EPUB {path} is not read: {reason}."),
            path=str(path),
            reason=reason,
        )
    )


def check_epub_entries(path: Path, entries: list[zipfile.ZipInfo]) -> None:
    """StudioError when unpacking the zip's entries (as its central directory declares them)
    would cost more memory than a book is worth: too many files, one too big, all too big, or
    one that packs far more tightly than a book's text and pictures do (a zip bomb). The
    reads then stay within these sizes (see bounded_read)."""
    mb = 1 << 20
    if len(entries) > EPUB_MAX_ENTRIES:
        raise _refused(
            path,
            Sentence(
                QT_TRANSLATE_NOOP("core", "it holds {count} files, more than {limit}"),
                count=len(entries),
                limit=EPUB_MAX_ENTRIES,
            ),
        )
    for entry in entries:
        size, packed = entry.file_size, entry.compress_size
        if size > EPUB_RATIO_FROM and size > EPUB_MAX_RATIO * max(packed, 1):
            raise _refused(
                path,
                Sentence(
                    QT_TRANSLATE_NOOP(
                        "core",
                        "its file {name} would unpack from {packed} KB to {size} MB, as only a "
                        "zip bomb does",
                    ),
                    name=entry.filename[:80],
                    packed=packed >> 10,
                    size=size // mb,
                ),
            )
        if size > EPUB_MAX_ENTRY:
            raise _refused(
                path,
                Sentence(
                    QT_TRANSLATE_NOOP(
                        "core", "its file {name} would unpack to {size} MB, more than {limit} MB"
                    ),
                    name=entry.filename[:80],
                    size=size // mb,
                    limit=EPUB_MAX_ENTRY // mb,
                ),
            )
    total = sum(entry.file_size for entry in entries)
    if total > EPUB_MAX_TOTAL:
        raise _refused(
            path,
            Sentence(
                QT_TRANSLATE_NOOP(
                    "core", "its files would unpack to {size} MB, more than {limit} MB"
                ),
                size=total // mb,
                limit=EPUB_MAX_TOTAL // mb,
            ),
        )


def bounded_read(archive: zipfile.ZipFile, name: str) -> bytes:
    """An entry's bytes, never more than its declared (checked) size, unpacked a block at a
    time: zipfile's own read() of a whole entry inflates everything it read in one call, up to
    2 GB whatever size the entry declares."""
    info = archive.getinfo(name)
    parts, left = [], info.file_size
    with archive.open(info) as stream:
        while left > 0 and (block := stream.read(min(left, 1 << 20))):
            parts.append(block)
            left -= len(block)
    return b"".join(parts)


def open_epub(path: Path, handle: IO[bytes]) -> "EpubBook":
    """The book in `handle` (the open file `path`), read by ebooklib once its entries passed
    check_epub_entries: the very file checked is the one read."""
    from ebooklib import epub

    class BoundedReader(epub.EpubReader):  # type: ignore[misc]
        def read_file(self, name: str) -> bytes:  # every read ebooklib makes comes here
            return bounded_read(self.zf, posixpath.normpath(name))

    with zipfile.ZipFile(handle) as archive:
        check_epub_entries(path, archive.infolist())
    handle.seek(0)
    reader = BoundedReader(handle, {"ignore_ncx": False})
    book = reader.load()
    reader.process()
    return book
