"""`render BOOK --word-timing` from the command line with the demo weights (noise): every word of
each chapter in its JSON, estimated and said to be; an EPUB rendered to MP3 gets a read-along
that carries the chapter files themselves."""

import json
import zipfile
from pathlib import Path

import pytest
from conftest import run_cli

from chattts_studio.core.align.words import text_words
from chattts_studio.core.text.chapters import read_book


def test_render_word_timing_writes_word_json_and_a_read_along_with_the_mp3s(
    private_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from ebooklib import epub

    book = epub.EpubBook()
    book.set_identifier("cli-words")
    book.set_title("Words")
    book.set_language("en")
    pages = []
    for n, body in enumerate(("<h1>Chapter 1</h1><p>Hello there, world.</p>",
                              "<h1>Chapter 2</h1><p>你好，世界。</p>"), 1):  # fmt: skip
        page = epub.EpubHtml(title=f"c{n}", file_name=f"c{n}.xhtml", lang="en")
        page.content = f"<html><head><title>t</title></head><body>{body}</body></html>"
        book.add_item(page)
        pages.append(page)
    book.toc = tuple(
        epub.Link(p.file_name, f"Chapter {n}", f"c{n}") for n, p in enumerate(pages, 1)
    )
    book.add_item(epub.EpubNcx())
    book.add_item(epub.EpubNav())
    book.spine = ["nav", *pages]
    source = tmp_path / "words.epub"
    epub.write_epub(str(source), book)

    out = tmp_path / "out"
    argv = ["render", str(source), "-o", str(out), "--no-refine", "--seed", "3"]
    argv += ["--format", "mp3", "--subtitles", "json", "--word-timing"]
    code, said, err = run_cli(capsys, *argv)
    assert code == 0, err
    chapters = json.loads((out / "chapters.json").read_text(encoding="utf-8"))["chapters"]
    for chapter, written in zip(chapters, read_book(source).chapters, strict=True):
        words = json.loads((out / chapter["subtitles"]).read_text(encoding="utf-8"))
        assert [w["text"] for w in words["words"]] == text_words(written.text)
        assert all(w["estimated"] for w in words["words"])  # noise: nothing measured
        assert f"{len(words['words'])} of {len(words['words'])} word times" in err + said
    read_along = out / "words read-along.epub"
    assert str(read_along) in said
    with zipfile.ZipFile(read_along) as made:
        carried = sorted(n for n in made.namelist() if n.endswith(".mp3"))
        assert len(carried) == 2
        for name, chapter in zip(carried, chapters, strict=True):
            assert made.read(name) == (out / chapter["file"]).read_bytes()
