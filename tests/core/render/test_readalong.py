"""Word timings in book renders: segments aligned once and cached, in chapter time (espeak-ng
speech with known word times); word ids put into XHTML without harm to its markup; the EPUB 3
read-along checked schema-deep (SMIL, clips, fragments, OPF, every other file byte for byte);
and a render with word timing end to end."""

import io
import itertools
import posixpath
import subprocess
import zipfile
from pathlib import Path
from urllib.parse import unquote

import numpy as np
import pytest
import soundfile as sf
from lxml import etree

from chattts_studio.core import SAMPLE_RATE
from chattts_studio.core.align.sphinx import EnglishAligner
from chattts_studio.core.align.words import Alignment, Word
from chattts_studio.core.devtools.alignacc import joined
from chattts_studio.core.render.readalong import (
    OPF,
    SMIL,
    ChapterAudio,
    ReadAlongError,
    write_read_along,
)
from chattts_studio.core.render.segment_store import SegmentStore
from chattts_studio.core.render.words import WordTimer
from chattts_studio.core.render.xhtml_words import XHTML, mark_words, pair_words, strip_unused
from chattts_studio.core.text.chapters import html_text

VOICE = "en-us+f2"
TEXTS = ("The weather is very nice today.", "We will go to the park together.")
PNG = (
    b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x02\x00\x00\x00"
    b"\x90wS\xde\x00\x00\x00\x0cIDATx\x9cc\xf8\x0f\x00\x00\x01\x01\x00\x05\x18\xd8N\x00\x00\x00"
    b"\x00IEND\xaeB`\x82"
)
PAGES = {
    "c1.xhtml": "<h1>Chapter 1</h1><p>The weather is <b>very</b> nice today.</p>"
    "<p><img src='pic.png' alt='a picture'/></p>",
    "c2.xhtml": "<h1>Chapter 2</h1><p>We walk home <a href='#n1'>1</a> together.</p>"
    "<aside id='n1'><p>A note.</p></aside>",
}


def make_epub(path: Path, pages: dict[str, str] = PAGES) -> Path:
    from ebooklib import epub

    book = epub.EpubBook()
    book.set_identifier("read-along-test")
    book.set_title("Small Book")
    book.set_language("en")
    css = epub.EpubItem(uid="css", file_name="style.css", media_type="text/css", content=b"p{}")
    book.add_item(css)
    book.add_item(
        epub.EpubItem(uid="pic", file_name="pic.png", media_type="image/png", content=PNG)
    )
    items = []
    for name, body in pages.items():
        item = epub.EpubHtml(title=name, file_name=name, lang="en")
        item.content = f"<html><head><title>t</title></head><body>{body}</body></html>"
        item.add_item(css)
        book.add_item(item)
        items.append(item)
    book.toc = tuple(epub.Link(n, f"Chapter {i}", f"c{i}") for i, n in enumerate(pages, 1))
    book.add_item(epub.EpubNcx())
    book.add_item(epub.EpubNav())
    book.spine = ["nav", *items]
    epub.write_epub(str(path), book)
    return path


# -- segments aligned once, in chapter time ---------------------------------------------------
def test_segment_words_land_in_chapter_time_and_come_from_the_cache(tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    truths = [joined(VOICE, text, rng) for text in TEXTS]
    gap = 6000  # the pause between segments, as the chapter file has it
    with SegmentStore(tmp_path) as store:
        entries = [
            store.add(0, i, f"t{i}", "g", "s", truth.audio) for i, truth in enumerate(truths)
        ]
        spans, at = [], 0
        for truth in truths:
            spans.append((at, at + len(truth.audio)))
            at += len(truth.audio) + gap
        english = EnglishAligner()
        timer = WordTimer(store.store, english=english)
        got = timer.chapter(TEXTS, entries, spans, store.read)
        assert timer.aligned == 2
        expected = [
            (word, start + first / SAMPLE_RATE)
            for truth, (first, _end) in zip(truths, spans, strict=True)
            for word, start in zip(truth.words, truth.starts, strict=True)
        ]
        assert [w.text for w in got.words] == [w for w, _ in expected]
        errors = [abs(w.start - s) for w, (_, s) in zip(got.words, expected, strict=True)]
        assert np.median(errors) <= 0.04 and max(errors) <= 0.25, errors
        assert sum(w.estimated for w in got.words) <= 1
        assert got.duration == pytest.approx(spans[-1][1] / SAMPLE_RATE)

        again = WordTimer(store.store, english=english)
        assert again.chapter(TEXTS, entries, spans, store.read).words == got.words
        assert again.aligned == 0  # from the cache
        # Another text for the same audio is aligned again, not taken from the cache.
        other = WordTimer(store.store, english=english)
        other.chapter(["Something else entirely said here.", TEXTS[1]], entries, spans, store.read)
        assert other.aligned == 1


def test_noise_the_aligner_refuses_is_estimated_inside_its_segment(tmp_path: Path) -> None:
    noise = np.random.default_rng(1).normal(0, 0.1, SAMPLE_RATE * 2).astype(np.float32)
    with SegmentStore(tmp_path) as store:
        entry = store.add(0, 0, "t", "g", "s", noise)
        timer = WordTimer(store.store)
        got = timer.chapter([TEXTS[0]], [entry], [(SAMPLE_RATE, 3 * SAMPLE_RATE)], store.read)
    assert got.words and all(w.estimated for w in got.words)
    assert got.words[0].start >= 1.0 and got.words[-1].end <= 3.0 + 1e-6


# -- word ids in XHTML ------------------------------------------------------------------------
DOCUMENT = (
    '<?xml version="1.0" encoding="utf-8"?>\n<!DOCTYPE html>\n'
    '<html xmlns="http://www.w3.org/1999/xhtml" xmlns:epub="http://www.idpf.org/2007/ops">'
    "<head><title>Not read</title><style>p { color: red; }</style></head><body>"
    '<h1 id="rw1">Chapter 2</h1><p class="x">Hello <b>brave</b> new&#160;world, '
    '<a href="#n1" epub:type="noteref">1</a> it\'s 3.5 today.<!-- a note --> 今天天气。</p>'
    '<img src="a.png" alt="pic"/><script>var hidden = 1;</script>'
    '<svg xmlns="http://www.w3.org/2000/svg"><text>drawn</text></svg>tail words</body></html>'
)


def test_word_ids_go_round_the_visible_words_only_and_come_off_cleanly() -> None:
    marked = mark_words(DOCUMENT.encode(), "rw")
    assert marked.words == [
        "Chapter", "2", "Hello", "brave", "new", "world", "1", "it's", "3.5", "today",
        "今", "天", "天", "气", "tail", "words",
    ]  # fmt: skip
    assert len(set(marked.ids)) == len(marked.ids) and "rw1" not in marked.ids  # the book's id kept
    out = marked.to_bytes()
    root = etree.fromstring(out)
    assert html_text(out) == html_text(DOCUMENT.encode())  # the same text, the same blocks
    assert root.find(f".//{{{XHTML}}}b/{{{XHTML}}}span").text == "brave"
    assert b"var hidden = 1;" in out and b"<!-- a note -->" in out and b"<text>drawn</text>" in out
    assert root.find(f".//{{{XHTML}}}a").get("href") == "#n1"

    strip_unused(marked, set(marked.ids[:2]))
    root = etree.fromstring(marked.to_bytes())
    spans = [s for s in root.iter(f"{{{XHTML}}}span")]
    assert [s.text for s in spans] == ["Chapter", "2"]
    assert html_text(marked.to_bytes()) == html_text(DOCUMENT.encode())


def test_entities_are_neither_expanded_nor_fetched_and_cdata_stays() -> None:
    document = (
        '<?xml version="1.0"?><!DOCTYPE html [<!ENTITY x SYSTEM "file:///etc/passwd">'
        '<!ENTITY a "aaaa"><!ENTITY b "&a;&a;&a;&a;">]><html xmlns="http://www.w3.org/1999/xhtml">'
        "<head><title>t</title><style><![CDATA[p>b{}]]></style></head>"
        "<body><p>Hi &x; and &b; there</p></body></html>"
    )
    marked = mark_words(document.encode(), "rw")
    assert marked.words == ["Hi", "and", "there"]
    out = marked.to_bytes()
    assert b"&x;" in out and b"&b;" in out and b"<![CDATA[p>b{}]]>" in out and b"root:" not in out


def test_words_pair_in_order_across_insertions_and_changes() -> None:
    timed = ["Chapter", "two", "Hello", "brave", "new", "world", "it's", "3.5", "today"]
    shown = ["Chapter", "2", "Hello", "brave", "new", "world", "1", "it's", "3.5", "today"]
    assert pair_words(timed, shown) == [
        (0, 0),
        (2, 2),
        (3, 3),
        (4, 4),
        (5, 5),
        (6, 7),
        (7, 8),
        (8, 9),
    ]  # fmt: skip: "two" is not "2", so neither gets a time
    # A passage only one side has (a skipped chapter) is stepped over.
    assert pair_words(["a", "b", "c", "d"], ["x", "y", "z", "w", "a", "b", "c", "d"]) == [
        (0, 4), (1, 5), (2, 6), (3, 7),
    ]  # fmt: skip


# -- the read-along EPUB, no model ------------------------------------------------------------
EPUBCHECK = "/usr/share/java/epubcheck.jar"  # Debian's epubcheck package


def chapter_audio(
    tmp_path: Path, number: int, text: str, seconds: float, estimated: bool
) -> ChapterAudio:
    audio = np.random.default_rng(number).normal(0, 0.1, round(seconds * SAMPLE_RATE))
    path = tmp_path / f"{number + 1:02d} Chapter.flac"
    sf.write(str(path), audio.astype(np.float32), SAMPLE_RATE)
    texts = text.replace(".", "").split()
    step = seconds / (len(texts) + 1)
    words = [
        Word(t, step * (i + 0.5), step * (i + 1.4), estimated, "") for i, t in enumerate(texts)
    ]
    return ChapterAudio(number, path, Alignment(words, "en", "test", seconds))


def check_read_along(path: Path, source: Path) -> dict[str, list[tuple[str, float, float]]]:
    """The schema-level check; {document: [(fragment id, clip begin, clip end)]}."""
    with zipfile.ZipFile(source) as before, zipfile.ZipFile(path) as after:
        first = after.infolist()[0]
        assert first.filename == "mimetype" and first.compress_type == zipfile.ZIP_STORED
        assert after.read("mimetype") == b"application/epub+zip"
        container = etree.fromstring(after.read("META-INF/container.xml"))
        opf_name = container.find(".//{*}rootfile").get("full-path")
        base = posixpath.dirname(opf_name)
        package = etree.fromstring(after.read(opf_name))
        items = {i.get("id"): i for i in package.iter(f"{{{OPF}}}item")}
        names = set(after.namelist())
        changed = {opf_name}
        overlays: dict[str, list[tuple[str, float, float]]] = {}
        durations = {
            m.get("refines", "")[1:]: m.text
            for m in package.iter(f"{{{OPF}}}meta")
            if m.get("property") == "media:duration"
        }
        total_ms = 0
        for item in items.values():
            if not item.get("media-overlay"):
                continue
            overlay = items[item.get("media-overlay")]
            assert overlay.get("media-type") == "application/smil+xml"
            doc = posixpath.join(base, unquote(item.get("href")))
            smil_name = posixpath.normpath(posixpath.join(base, unquote(overlay.get("href"))))
            changed.add(doc)
            xhtml = etree.fromstring(after.read(doc))
            ids = {str(i) for i in xhtml.xpath("//@id")}
            smil = etree.fromstring(after.read(smil_name))
            clips = []
            ends: dict[str, float] = {}
            for par in smil.iter(f"{{{SMIL}}}par"):
                text = par.find(f"{{{SMIL}}}text").get("src")
                target, fragment = text.split("#")
                target = posixpath.normpath(
                    posixpath.join(posixpath.dirname(smil_name), unquote(target))
                )
                assert target == doc and fragment in ids
                audio = par.find(f"{{{SMIL}}}audio")
                src = posixpath.normpath(
                    posixpath.join(posixpath.dirname(smil_name), unquote(audio.get("src")))
                )
                assert src in names
                assert any(
                    i.get("media-type") in ("audio/mpeg", "audio/mp4")
                    and posixpath.join(base, unquote(i.get("href"))) == src
                    for i in items.values()
                )
                if src not in ends:
                    info = sf.info(io.BytesIO(after.read(src)))
                    ends[src] = info.frames / info.samplerate
                begin = float(audio.get("clipBegin").rstrip("s"))
                end = float(audio.get("clipEnd").rstrip("s"))
                assert 0 <= begin < end <= ends[src] + 0.001
                clips.append((fragment, begin, end))
            assert clips
            assert all(a[2] <= b[1] + 1e-9 for a, b in itertools.pairwise(clips))
            ms = sum(round(e * 1000) - round(b * 1000) for _, b, e in clips)
            assert durations[overlay.get("id")] == clock_text(ms)
            total_ms += ms
            overlays[doc] = clips
        assert durations[""] == clock_text(total_ms)
        assert any(
            m.get("property") == "media:active-class" for m in package.iter(f"{{{OPF}}}meta")
        )
        for info in before.infolist():  # every other file byte for byte
            if info.filename not in changed:
                assert after.read(info.filename) == before.read(info.filename), info.filename
            elif info.filename != opf_name:  # the XHTML says the same as before
                assert html_text(after.read(info.filename)) == html_text(before.read(info.filename))
    return overlays


def clock_text(ms: int) -> str:
    return f"{ms // 3_600_000}:{ms // 60_000 % 60:02d}:{ms // 1000 % 60:02d}.{ms % 1000:03d}"


def test_read_along_overlays_point_at_words_inside_the_audio(tmp_path: Path) -> None:
    source = make_epub(tmp_path / "book.epub")
    chapters = [
        chapter_audio(tmp_path, 0, "Chapter 1 The weather is very nice today.", 3.0, False),
        chapter_audio(tmp_path, 1, "Chapter 2 We walk home 1 together. A note.", 3.5, True),
    ]
    target = tmp_path / "out" / "book read-along.epub"
    target.parent.mkdir()
    made = write_read_along(source, target, chapters, tmp_path)
    assert (made.overlays, made.words, made.estimated) == (2, 17, 9)
    overlays = check_read_along(target, source)
    assert [len(c) for c in overlays.values()] == [8, 9]
    # The W3C's own validator (Debian's epubcheck, a Java program): no error, no warning.
    checked = subprocess.run(
        ["java", "-jar", EPUBCHECK, str(target)], capture_output=True, encoding="utf-8", timeout=300
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "No errors or warnings detected" in checked.stdout, checked.stdout
    with zipfile.ZipFile(target) as book:
        second = etree.fromstring(book.read("EPUB/c2.xhtml"))
        spans = list(second.iter(f"{{{XHTML}}}span"))
        assert all(s.get("data-estimated") == "true" for s in spans)  # estimates say so
        first = etree.fromstring(book.read("EPUB/c1.xhtml"))
        assert not any(s.get("data-estimated") for s in first.iter(f"{{{XHTML}}}span"))
        assert [n for n in book.namelist() if n.endswith(".mp3")] == [
            "EPUB/readalong/chapter-0001.mp3", "EPUB/readalong/chapter-0002.mp3",
        ]  # fmt: skip


def test_a_broken_document_is_left_without_an_overlay_and_epub2_is_refused(tmp_path: Path) -> None:
    source = make_epub(tmp_path / "book.epub")
    broken = tmp_path / "broken.epub"
    with zipfile.ZipFile(source) as before, zipfile.ZipFile(broken, "w") as after:
        for info in before.infolist():
            data = before.read(info.filename)
            if info.filename == "EPUB/c2.xhtml":
                data = data.replace(b"</p>", b"", 1)  # not well-formed any more
            after.writestr(info, data)
    chapters = [
        chapter_audio(tmp_path, 0, "Chapter 1 The weather is very nice today.", 3.0, False),
        chapter_audio(tmp_path, 1, "Chapter 2 We walk home 1 together. A note.", 3.5, False),
    ]
    target = tmp_path / "broken read-along.epub"
    made = write_read_along(broken, target, chapters, tmp_path)
    assert made.overlays == 1 and made.skipped and "EPUB/c2.xhtml" in made.skipped[0]
    assert list(check_read_along(target, broken)) == ["EPUB/c1.xhtml"]

    old = tmp_path / "old.epub"
    with zipfile.ZipFile(source) as before, zipfile.ZipFile(old, "w") as after:
        for info in before.infolist():
            data = before.read(info.filename)
            if info.filename.endswith(".opf"):
                data = data.replace(b'version="3.0"', b'version="2.0"')
            after.writestr(info, data)
    with pytest.raises(ReadAlongError, match="EPUB 2"):
        write_read_along(old, tmp_path / "old read-along.epub", chapters, tmp_path)
    assert not (tmp_path / "old read-along.epub").exists()


# -- a render with --word-timing --------------------------------------------------------------
def render_book_here(engine, source: Path, folder: Path):  # type: ignore[no-untyped-def]
    from chattts_studio.core.engine.cancel import CancelToken
    from chattts_studio.core.engine.request import SynthesisRequest
    from chattts_studio.core.render.book import RenderJob, RenderOptions
    from chattts_studio.core.render.output import Assembler
    from chattts_studio.core.text.chapters import read_book

    options = RenderOptions(format="wav", subtitles="vtt", group_size=2, word_timing=True)
    request = SynthesisRequest("", seed=7, refine_text=False, segment_size=40)
    job = RenderJob(engine, read_book(source), request, folder, options, source=source)
    job.plan()
    with job.store:
        job.refresh()
        assembler = Assembler(job, CancelToken())
        job.run(CancelToken(), on_chapter=assembler.chapter)
        files = assembler.book()
    return job, assembler, files


def test_a_render_with_word_timing_writes_word_subtitles_and_a_read_along_and_resumes(
    engine,  # type: ignore[no-untyped-def]
    tmp_path: Path,
) -> None:
    import json
    import re

    from chattts_studio.core.align.words import text_words

    source = make_epub(tmp_path / "book.epub")
    folder = tmp_path / "out"
    job, _assembler, files = render_book_here(engine, source, folder)
    read_along = folder / "book read-along.epub"
    assert read_along in files
    listing = json.loads((folder / "chapters.json").read_text(encoding="utf-8"))
    for chapter, planned in zip(listing["chapters"], job.chapters, strict=True):
        vtt = (folder / chapter["subtitles"]).read_text(encoding="utf-8")
        assert vtt.startswith("WEBVTT") and chapter["subtitles"].endswith(".vtt")
        cues = [block.split("\n", 1)[1] for block in vtt.split("\n\n") if " --> " in block]
        shown = re.sub(r"<[^>]*>", "", " ".join(cues))
        said = [w for s in planned.segments for w in text_words(s.text)]
        assert text_words(shown) == said  # every word, in order, in a timed cue
        # The demo weights make noise: what the aligner refused is estimated, and says so.
        assert " ".join(cues).count("<c.estimated>") == chapter["estimated_words"] > 0
        assert chapter["words"] == len(said)
        assert re.search(r"<\d\d:\d\d:\d\d\.\d\d\d>", vtt)  # a timestamp before each word
    assert listing["read_along"]["file"] == read_along.name
    overlays = check_read_along(read_along, source)
    assert sorted(overlays) == ["EPUB/c1.xhtml", "EPUB/c2.xhtml"]
    assert listing["read_along"]["words"] == sum(len(c) for c in overlays.values())

    # Resumed: nothing aligned again, the read-along kept as it was.
    stamp = read_along.stat().st_mtime_ns
    _job, again, _files = render_book_here(engine, source, folder)
    assert again.timer.aligned == 0 and read_along.stat().st_mtime_ns == stamp
    assert json.loads((folder / "chapters.json").read_text(encoding="utf-8")) == listing


def test_word_timing_mistakes_give_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from chattts_studio.core.cli.main import main

    book = make_epub(tmp_path / "book.epub")
    (tmp_path / "items.jsonl").write_text('{"id": "a", "text": "Hi.", "speaker": "1"}\n')
    cases = [
        (["--word-timing"], "--word-timing needs --subtitles"),
        (["--subtitles", "ass"], "add --word-timing"),
    ]
    for extra, message in cases:
        assert main(["render", str(book), "-o", str(tmp_path / "o"), *extra]) == 2
        last = capsys.readouterr().err.strip().splitlines()[-1]
        assert last.startswith("error: ") and message in last, (extra, last)
    argv = ["render", str(tmp_path / "items.jsonl"), "-o", str(tmp_path / "m"), "--word-timing"]
    assert main(argv) == 2
    assert "works on a book" in capsys.readouterr().err


def test_a_package_in_a_subfolder_and_a_chapter_over_two_documents(tmp_path: Path) -> None:
    head = (
        '<?xml version="1.0" encoding="UTF-8"?>\n<!DOCTYPE html>\n<html xmlns="http://www.w3.org/'
        '1999/xhtml" xmlns:epub="http://www.idpf.org/2007/ops"><head><title>T</title></head><body>'
    )
    texts = {
        "OEBPS/Text/nav.xhtml": '<nav epub:type="toc"><ol><li><a href="chapter%20one.xhtml">'
        'Chapter 1</a></li><li><a href="two.xhtml">Chapter 2</a></li></ol></nav>',
        "OEBPS/Text/chapter one.xhtml": "<h1>Chapter 1</h1><p>The weather is nice.</p>",
        "OEBPS/Text/one-b.xhtml": "<p>And more of <em>chapter</em> one.</p>",
        "OEBPS/Text/two.xhtml": "<h1>Chapter 2</h1><p>We walk home.</p>",
    }
    nav = ' properties="nav"'
    items = "".join(
        f'<item id="i{n}" href="Text/{Path(name).name.replace(" ", "%20")}" '
        f'media-type="application/xhtml+xml"{nav if n == 0 else ""}/>'
        for n, name in enumerate(texts)
    )
    opf = (
        '<?xml version="1.0" encoding="UTF-8"?><package xmlns="http://www.idpf.org/2007/opf" '
        'version="3.0" unique-identifier="uid"><metadata xmlns:dc="http://purl.org/dc/elements/'
        '1.1/"><dc:identifier id="uid">x</dc:identifier><dc:title>Sub</dc:title><dc:language>en'
        '</dc:language><meta property="dcterms:modified">2026-01-01T00:00:00Z</meta></metadata>'
        f"<manifest>{items}</manifest><spine>"
        + "".join(f'<itemref idref="i{n}"/>' for n in range(len(texts)))
        + "</spine></package>"
    )
    source = tmp_path / "sub.epub"
    with zipfile.ZipFile(source, "w") as book:
        book.writestr("mimetype", "application/epub+zip", zipfile.ZIP_STORED)
        book.writestr(
            "META-INF/container.xml",
            '<container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container">'
            '<rootfiles><rootfile full-path="OEBPS/content.opf" media-type="application/'
            'oebps-package+xml"/></rootfiles></container>',
        )
        book.writestr("OEBPS/content.opf", opf, zipfile.ZIP_DEFLATED)
        for name, body in texts.items():
            book.writestr(name, f"{head}{body}</body></html>", zipfile.ZIP_DEFLATED)
    chapters = [
        chapter_audio(
            tmp_path, 0, "Chapter 1 The weather is nice. And more of chapter one.", 4.0, False
        ),
        chapter_audio(tmp_path, 1, "Chapter 2 We walk home.", 2.0, False),
    ]
    target = tmp_path / "sub read-along.epub"
    made = write_read_along(source, target, chapters, tmp_path)
    overlays = check_read_along(target, source)
    assert list(overlays) == [
        "OEBPS/Text/chapter one.xhtml",
        "OEBPS/Text/one-b.xhtml",
        "OEBPS/Text/two.xhtml",
    ]  # fmt: skip: the navigation gets none
    assert made.words == 16
    # The second document goes on in chapter 1's audio where the first left off.
    first, second = overlays["OEBPS/Text/chapter one.xhtml"], overlays["OEBPS/Text/one-b.xhtml"]
    assert second[0][1] >= first[-1][2]
    with zipfile.ZipFile(target) as book:
        smil = etree.fromstring(book.read("OEBPS/readalong/document-0002.smil"))
        audio = {a.get("src") for a in smil.iter(f"{{{SMIL}}}audio")}
        assert audio == {"chapter-0001.mp3"}
