"""An EPUB 3 read-along of a rendered EPUB: a copy of the book with media overlays, a SMIL <par>
per word clipping the chapter audio inside the container. Only the OPF and the XHTML given word ids
change.
"""

import posixpath
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote, unquote

from lxml import etree

from chattts_studio.core.align.words import Alignment, Word
from chattts_studio.core.atomic import atomic_path
from chattts_studio.core.render.xhtml_words import (
    MarkedDocument,
    mark_words,
    pair_words,
    strip_unused,
)
from chattts_studio.core.text.epub_zip import bounded_read, check_epub_entries

OPF = "http://www.idpf.org/2007/opf"
SMIL = "http://www.w3.org/ns/SMIL"
OPS = "http://www.idpf.org/2007/ops"
CONTAINER = "urn:oasis:names:tc:opendocument:xmlns:container"
ACTIVE_CLASS = "-epub-media-overlay-active"
ACTIVE_STYLE = f".{ACTIVE_CLASS} {{ background-color: #ffe680; }}"
AUDIO_TYPES = {".mp3": "audio/mpeg", ".m4a": "audio/mp4"}  # EPUB 3's core audio types
SHORTEST_CLIP_MS = 1


class ReadAlongError(Exception):
    """The EPUB cannot carry a read-along (EPUB 2, no package file, ...): one sentence."""


@dataclass(frozen=True)
class ChapterAudio:
    """A rendered chapter: its audio file (the one in the render folder) and its words."""

    number: int  # 0-based, in the book
    audio: Path
    words: Alignment


@dataclass
class ReadAlong:
    """What was written: overlays made, words in them, how many estimated, what was left out."""

    path: Path
    overlays: int = 0
    words: int = 0
    estimated: int = 0
    skipped: list[str] = field(default_factory=list)  # documents left without an overlay


@dataclass
class _Document:
    item: etree._Element  # its manifest <item>
    name: str  # its path in the zip
    marked: MarkedDocument | None = None
    pars: list[tuple[str, int, Word]] = field(default_factory=list)  # (span id, chapter, word)


def clock(ms: int) -> str:
    """A SMIL clock value, H:MM:SS.mmm."""
    hours, ms = divmod(ms, 3_600_000)
    minutes, ms = divmod(ms, 60_000)
    return f"{hours}:{minutes:02d}:{ms // 1000:02d}.{ms % 1000:03d}"


def _package_path(archive: zipfile.ZipFile) -> str:
    try:
        container = etree.fromstring(bounded_read(archive, "META-INF/container.xml"))
    except (KeyError, etree.XMLSyntaxError):
        raise ReadAlongError("the EPUB has no readable META-INF/container.xml") from None
    found = container.find(f".//{{{CONTAINER}}}rootfile")
    if found is None or not found.get("full-path"):
        raise ReadAlongError("the EPUB's container names no package file")
    return str(found.get("full-path"))


def _unique(base: str, taken: set[str]) -> str:
    name, n = base, 1
    while name in taken:
        n += 1
        name = f"{base}-{n}"
    taken.add(name)
    return name


def _free_folder(wanted: str, names: list[str]) -> str:
    """`wanted`, or `wanted-2`, ...: a folder no file of the book is in."""
    folder, n = wanted, 1
    while any(name.startswith(folder + "/") for name in names):
        n += 1
        folder = f"{wanted}-{n}"
    return folder


def _audio_for(chapter: ChapterAudio, folder: Path) -> tuple[Path, str]:
    """The chapter's audio as the EPUB takes it: the render's own MP3 or AAC file, else an MP3
    made from it in `folder`."""
    import soundfile as sf

    kind = AUDIO_TYPES.get(chapter.audio.suffix.lower())
    if kind is not None:
        return chapter.audio, chapter.audio.suffix.lower()
    target = folder / f"chapter-{chapter.number + 1:04d}.mp3"
    with (
        sf.SoundFile(str(chapter.audio)) as source,
        sf.SoundFile(str(target), "w", source.samplerate, source.channels, format="MP3") as out,
    ):
        for block in source.blocks(blocksize=1 << 16, dtype="float32"):
            out.write(block)
    return target, ".mp3"


def _clips(
    pars: list[tuple[str, int, Word]], seconds: dict[int, float]
) -> list[tuple[str, int, int, int, bool]]:
    """(span id, chapter, begin ms, end ms, estimated) per word: in order, not overlapping,
    inside the chapter's audio; a word with no time left is dropped."""
    out: list[tuple[str, int, int, int, bool]] = []
    last: dict[int, int] = {}
    for name, chapter, word in pars:
        limit = round(seconds[chapter] * 1000)
        begin = max(round(word.start * 1000), last.get(chapter, 0), 0)
        end = min(max(round(word.end * 1000), begin + SHORTEST_CLIP_MS), limit)
        if end - begin < SHORTEST_CLIP_MS:
            continue
        out.append((name, chapter, begin, end, word.estimated))
        last[chapter] = end
    return out


def _smil(
    doc_href: str, clips: list[tuple[str, int, int, int, bool]], audio: dict[int, str]
) -> bytes:
    root = etree.Element(f"{{{SMIL}}}smil", nsmap={None: SMIL, "epub": OPS})
    root.set("version", "3.0")
    body = etree.SubElement(root, f"{{{SMIL}}}body")
    for n, (name, chapter, begin, end, _estimated) in enumerate(clips, 1):
        par = etree.SubElement(body, f"{{{SMIL}}}par", id=f"par{n}")
        etree.SubElement(par, f"{{{SMIL}}}text", src=f"{doc_href}#{name}")
        etree.SubElement(
            par,
            f"{{{SMIL}}}audio",
            src=audio[chapter],
            clipBegin=f"{begin / 1000:.3f}s",
            clipEnd=f"{end / 1000:.3f}s",
        )
    return bytes(etree.tostring(root, xml_declaration=True, encoding="utf-8", pretty_print=True))


def _add_style(document: MarkedDocument) -> None:
    """The active word's highlight, for reading systems that leave it to the book."""
    head = document.tree.getroot().find("{http://www.w3.org/1999/xhtml}head")
    if head is not None:
        style = etree.SubElement(head, "{http://www.w3.org/1999/xhtml}style")
        style.text = ACTIVE_STYLE


def _opf(parent: etree._Element, tag: str, **attributes: str) -> etree._Element:
    """A package element in the default namespace (lxml would take a metadata block's opf:
    prefix, which naive reading systems miss)."""
    return etree.SubElement(parent, f"{{{OPF}}}{tag}", attributes, nsmap={None: OPF})


def write_read_along(
    source: Path, target: Path, chapters: Sequence[ChapterAudio], work: Path
) -> ReadAlong:
    """The read-along of the EPUB `source` for the rendered `chapters`, written atomically to
    `target`; `work` is a folder for MP3 copies of the audio. ReadAlongError when the book
    cannot carry one; OSError when a file cannot be read or written."""
    with open(source, "rb") as handle, zipfile.ZipFile(handle) as archive:
        check_epub_entries(source, archive.infolist())
        return _build(archive, target, chapters, work)


def _build(
    archive: zipfile.ZipFile, target: Path, chapters: Sequence[ChapterAudio], work: Path
) -> ReadAlong:
    opf_name = _package_path(archive)
    try:
        package = etree.fromstring(bounded_read(archive, opf_name))
    except (KeyError, etree.XMLSyntaxError):
        raise ReadAlongError(f"its package file {opf_name} cannot be read") from None
    if not str(package.get("version", "")).startswith("3"):
        raise ReadAlongError("media overlays need an EPUB 3 book and this one is EPUB 2")
    manifest = package.find(f"{{{OPF}}}manifest")
    spine = package.find(f"{{{OPF}}}spine")
    metadata = package.find(f"{{{OPF}}}metadata")
    if manifest is None or spine is None or metadata is None:
        raise ReadAlongError("its package file has no manifest, spine or metadata")
    result = ReadAlong(target)
    base = posixpath.dirname(opf_name)
    documents = _documents(archive, base, manifest, spine, result)
    # Every timed word of the book against every marked word, in reading order.
    timed = [(ch.number, w) for ch in chapters for w in ch.words.words]
    shown = [
        (d, name, word)
        for d in documents
        if d.marked
        for name, word in zip(d.marked.ids, d.marked.words, strict=True)
    ]
    for i, j in pair_words([w.text for _, w in timed], [word for _, _, word in shown]):
        doc, name, _word = shown[j]
        doc.pars.append((name, timed[i][0], timed[i][1]))
    folder = _free_folder(posixpath.join(base, "readalong"), archive.namelist())
    audio: dict[int, tuple[Path, str]] = {}  # chapter -> (file, name in the zip)
    overlays = _overlays(documents, chapters, folder, work, audio, result)
    if not overlays:
        raise ReadAlongError("none of its words could be matched with the rendered speech")
    _add_to_package(package, base, overlays, audio)
    changed = {
        opf_name: bytes(
            etree.tostring(package.getroottree(), xml_declaration=True, encoding="utf-8")
        )
    }
    for doc, *_ in overlays:
        assert doc.marked is not None
        changed[doc.name] = doc.marked.to_bytes()
    with atomic_path(target) as tmp, zipfile.ZipFile(tmp, "w") as out:
        out.writestr(zipfile.ZipInfo("mimetype"), b"application/epub+zip", zipfile.ZIP_STORED)
        for info in archive.infolist():
            if info.filename == "mimetype":
                continue
            data = changed.get(info.filename)
            out.writestr(info, data if data is not None else bounded_read(archive, info.filename))
        for _doc, smil_name, smil, _ms in overlays:
            out.writestr(smil_name, smil, zipfile.ZIP_DEFLATED)
        for _chapter, (path, zipped) in sorted(audio.items()):
            out.write(path, zipped, zipfile.ZIP_STORED)
    return result


def _documents(
    archive: zipfile.ZipFile,
    base: str,
    manifest: etree._Element,
    spine: etree._Element,
    result: ReadAlong,
) -> list[_Document]:
    """The spine's content documents (not the navigation), each with its words marked; one
    that cannot be parsed is named in `result.skipped` and left as it is."""
    items = {i.get("id"): i for i in manifest.findall(f"{{{OPF}}}item")}
    documents: list[_Document] = []
    seen: set[str] = set()
    for ref in spine.findall(f"{{{OPF}}}itemref"):
        item = items.get(ref.get("idref"))
        if item is None or item.get("media-type") != "application/xhtml+xml":
            continue
        if "nav" in str(item.get("properties", "")).split() or item.get("media-overlay"):
            continue
        name = posixpath.normpath(posixpath.join(base, unquote(str(item.get("href")))))
        if name in seen:
            continue
        seen.add(name)
        doc = _Document(item, name)
        try:
            doc.marked = mark_words(bounded_read(archive, name), "rw")
        except (KeyError, etree.XMLSyntaxError, ValueError) as exc:
            reason = str(exc).splitlines()[0] if str(exc) else "unreadable"
            result.skipped.append(f"{name} ({reason})")
            continue
        documents.append(doc)
    return documents


def _overlays(
    documents: list[_Document],
    chapters: Sequence[ChapterAudio],
    folder: str,
    work: Path,
    audio: dict[int, tuple[Path, str]],
    result: ReadAlong,
) -> list[tuple[_Document, str, bytes, int]]:
    """(document, SMIL name, SMIL, milliseconds of audio) for each document with clips; the
    spans no clip points at unwrapped; the chapters' audio made ready into `audio`."""
    seconds = {ch.number: ch.words.duration for ch in chapters}
    by_number = {ch.number: ch for ch in chapters}
    overlays = []
    for n, doc in enumerate(documents, 1):
        clips = _clips(doc.pars, seconds)
        assert doc.marked is not None
        strip_unused(doc.marked, {c[0] for c in clips})
        if not clips:
            continue
        for _name, chapter, *_ in clips:
            if chapter not in audio:
                path, ext = _audio_for(by_number[chapter], work)
                audio[chapter] = (path, f"{folder}/chapter-{chapter + 1:04d}{ext}")
        estimated = {c[0] for c in clips if c[4]}
        for span in doc.marked.tree.getroot().iter("{http://www.w3.org/1999/xhtml}span"):
            if span.get("id") in estimated:
                span.set("data-estimated", "true")
        _add_style(doc.marked)
        smil_name = f"{folder}/document-{n:04d}.smil"
        smil_dir = posixpath.dirname(smil_name)
        href = quote(posixpath.relpath(doc.name, smil_dir))
        refs = {c: quote(posixpath.relpath(z, smil_dir)) for c, (_p, z) in audio.items()}
        overlays.append((doc, smil_name, _smil(href, clips, refs), sum(c[3] - c[2] for c in clips)))
        result.words += len(clips)
        result.estimated += sum(c[4] for c in clips)
    result.overlays = len(overlays)
    return overlays


def _add_to_package(
    package: etree._Element,
    base: str,
    overlays: list[tuple[_Document, str, bytes, int]],
    audio: dict[int, tuple[Path, str]],
) -> None:
    """An item per overlay and audio file, media-overlay on each document, the durations."""
    manifest = package.find(f"{{{OPF}}}manifest")
    metadata = package.find(f"{{{OPF}}}metadata")
    assert manifest is not None and metadata is not None
    taken_ids = {str(i) for i in package.xpath("//@id")}
    total = 0
    for doc, smil_name, _smil_bytes, ms in overlays:
        overlay_id = _unique("mo-" + str(doc.item.get("id")), taken_ids)
        href = quote(posixpath.relpath(smil_name, base or "."))
        _opf(manifest, "item", id=overlay_id, href=href, **{"media-type": "application/smil+xml"})
        doc.item.set("media-overlay", overlay_id)
        meta = _opf(metadata, "meta", property="media:duration")
        meta.set("refines", f"#{overlay_id}")
        meta.text = clock(ms)
        total += ms
    for chapter, (_path, zipped) in sorted(audio.items()):
        item_id = _unique(f"mo-audio-{chapter + 1}", taken_ids)
        href = quote(posixpath.relpath(zipped, base or "."))
        kind = AUDIO_TYPES[Path(zipped).suffix]
        _opf(manifest, "item", id=item_id, href=href, **{"media-type": kind})
    _opf(metadata, "meta", property="media:duration").text = clock(total)
    _opf(metadata, "meta", property="media:active-class").text = ACTIVE_CLASS
