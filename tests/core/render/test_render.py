"""Long-form rendering: chapters from TXT, Markdown and EPUB; a resumable render
whose killed (SIGKILL) or cancelled run ends with the audio an uninterrupted run makes;
subtitles timed from the real segment boundaries; loudness; the M4B's chapter marks."""

import itertools
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
from conftest import REPO

from chattts_studio.core.audio.loudness import LoudnessMeter, plan_gain, true_peak
from chattts_studio.core.audio.subtitles import (
    Cue,
    cues_for,
    format_srt,
    format_vtt,
    parse_subtitles,
    sentences,
)
from chattts_studio.core.engine.cancel import CancelToken
from chattts_studio.core.engine.request import SynthesisRequest
from chattts_studio.core.errors import Cancelled
from chattts_studio.core.render.book import RenderJob, RenderOptions, group_seed
from chattts_studio.core.render.journal import JOURNAL
from chattts_studio.core.render.output import Assembler
from chattts_studio.core.render.segment_store import STORE
from chattts_studio.core.text.chapters import markdown_chapters, read_book, text_chapters

FRAME = 256  # samples: one mel frame, 10.7 ms at 24 kHz
PAUSE = 6000  # the default 0.25 s pause, in samples
ROOT = REPO
# Two chapters of short sentences: enough segments that a kill lands in the middle.
BOOK = (
    "第一章 春天\n"
    + "".join(f"春天来了{n}次。" for n in range(1, 7))
    + "\n\nChapter 2\n"
    + " ".join(f"We walk home {n} times." for n in range(1, 7))
    + "\n"
)
# What every render of BOOK here shares: what shapes the audio must be equal to compare.
RENDER_ARGS = ["--no-refine", "--segment-size", "12", "--batch-size", "2", "--seed", "7"]
RENDER_ARGS += ["--device", "cpu", "--threads", "1", "--format", "wav", "--subtitles", "srt"]
RENDER_ARGS += ["--loudness", "--engine", "torch"]  # the reference is the torch engine


def request() -> SynthesisRequest:
    return SynthesisRequest("", seed=7, refine_text=False, segment_size=12)


def options(**changes: object) -> RenderOptions:
    base = {"format": "wav", "subtitles": "srt", "loudness": -16.0, "group_size": 2}
    return RenderOptions(**(base | changes))  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def one_thread() -> Iterator[None]:
    """The renders here run on one thread, as the subprocess does (--threads 1), so their
    float sums are made in the same order."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def render(engine, folder: Path, cancel_after: int | None = None, **changes: object) -> RenderJob:  # type: ignore[no-untyped-def]
    """BOOK rendered in-process into folder (cancelled after `cancel_after` segments)."""
    job = RenderJob(engine, text_chapters(BOOK, "book"), request(), folder, options(**changes))
    job.plan()
    token = CancelToken()

    def progress(p) -> None:  # type: ignore[no-untyped-def]
        if cancel_after is not None and p.done - job.stats.kept >= cancel_after:
            token.cancel()

    with job.store:
        job.refresh()
        assembler = Assembler(job, token)
        job.run(token, progress, on_chapter=assembler.chapter)
        assembler.book()
    return job


@pytest.fixture(scope="module")
def reference(engine, one_thread, tmp_path_factory) -> Path:  # type: ignore[no-untyped-def]
    """An uninterrupted render of BOOK."""
    folder = tmp_path_factory.mktemp("render") / "reference"
    render(engine, folder)
    return folder


def chapter_audio(folder: Path) -> list[np.ndarray]:
    files = sorted(folder.glob("[0-9]* *.wav"))
    assert len(files) == 2, files
    return [sf.read(str(f), dtype="float32")[0] for f in files]


def journal_lines(folder: Path) -> list[str]:
    path = folder / STORE / JOURNAL
    return path.read_text().splitlines() if path.exists() else []


def pause_runs(audio: np.ndarray, min_length: int = PAUSE) -> list[tuple[int, int]]:
    """Where the audio is exactly silent for at least min_length samples: the pauses."""
    edges = np.diff(np.concatenate([[0], (audio == 0).astype(np.int8), [0]]))
    runs = zip(np.flatnonzero(edges == 1), np.flatnonzero(edges == -1), strict=True)
    return [(int(a), int(b)) for a, b in runs if b - a >= min_length]


def check_cues(cues: list[Cue], audio: np.ndarray, segments: int) -> None:
    """Cue boundaries sit within one frame of the segment boundaries found in the audio."""
    runs = pause_runs(audio)
    assert len(runs) == segments - 1
    starts = np.array([c.start for c in cues]) * 24000
    ends = np.array([c.end for c in cues]) * 24000
    assert abs(starts[0]) <= FRAME and abs(ends[-1] - len(audio)) <= FRAME
    for silence_start, silence_end in runs:
        assert np.min(np.abs(ends - silence_start)) <= FRAME
        assert np.min(np.abs(starts - silence_end)) <= FRAME
    assert all(a.end <= b.start + 1e-3 for a, b in itertools.pairwise(cues))


# -- chapters ------------------------------------------------------------------------------
def test_text_chapters_follow_the_heading_rules() -> None:
    text = (
        "这是序。\n\n第一章 开始\n今天很好。\n\n第2章\n明天。\n"
        "Chapter 3: The Road\nWe go.\nCHAPTER FOUR\nEnd. Chapter 5 was long, he said.\n"
        "Chapter 5 was the best part.\n"
    )
    book = text_chapters(text, "My Book")
    titles = [c.title for c in book.chapters]
    assert titles == ["My Book", "第一章 开始", "第2章", "Chapter 3: The Road", "CHAPTER FOUR"]
    assert book.chapters[1].text.startswith("第一章 开始\n今天很好")  # the heading is read too
    assert "Chapter 5 was the best part." in book.chapters[-1].text  # prose, not a heading
    blocks = text_chapters("One a.\nmore.\n\n\n\nTwo b.\n\n\n\nThree c. [1]", "x").chapters
    assert [c.title for c in blocks] == ["One a.", "Two b.", "Three c. [1]"]
    assert blocks[2].text == "Three c. (1)"  # not a control token: read as parentheses
    assert [c.title for c in text_chapters("Just text.\n\nMore.", "Solo").chapters] == ["Solo"]
    toc = "目录\n第一章 甲\n第二章 乙\n\n第一章 甲\n正文一。\n第二章 乙\n正文二。"
    assert [c.title for c in text_chapters(toc, "书").chapters] == ["书", "第一章 甲", "第二章 乙"]


def test_markdown_chapters_split_at_the_repeated_heading_level() -> None:
    md = (
        "# The Book\n\nIntro with a [link](http://x) and **bold**.\n\n## One\n\nText *one*.\n\n"
        "```\ncode()\n```\n\n## Two\n![img](a.png)\n- item two [uv_break] here\n"
    )
    book = markdown_chapters(md, "stem")
    assert book.title == "The Book"
    assert [c.title for c in book.chapters] == ["The Book", "One", "Two"]
    assert book.chapters[0].text.endswith("Intro with a link and bold.")
    assert "code()" not in book.chapters[1].text and "Text one." in book.chapters[1].text
    lines = [line for line in book.chapters[2].text.splitlines() if line]
    assert lines == ["Two", "item two [uv_break] here"]  # the image is gone, the token kept


def test_epub_chapters_come_from_its_table_of_contents(tmp_path: Path) -> None:
    from ebooklib import epub

    book = epub.EpubBook()
    book.set_identifier("test-book")
    book.set_title("Small Book")
    book.set_language("zh")
    pages = {
        "cover.xhtml": "<p></p>",
        "c1.xhtml": "<h1>第一章 开始</h1><p>今天天气很好。</p><script>x()</script>",
        "c1b.xhtml": "<p>And more of chapter one.</p>",
        "c2.xhtml": "<h2>Chapter 2</h2><p>Hello &amp; goodbye.</p>",
    }
    items = {}
    for name, body in pages.items():
        item = epub.EpubHtml(title=name, file_name=name, lang="zh")
        item.content = f"<html><head><title>t</title></head><body>{body}</body></html>"
        book.add_item(item)
        items[name] = item
    book.toc = (
        epub.Link("c1.xhtml", "第一章 开始", "c1"),
        (epub.Section("Part Two"), (epub.Link("c2.xhtml#top", "Chapter 2", "c2"),)),
    )
    book.add_item(epub.EpubNcx())
    book.add_item(epub.EpubNav())
    book.spine = ["nav", *items.values()]
    path = tmp_path / "small.epub"
    epub.write_epub(str(path), book)

    read = read_book(path)
    assert read.title == "Small Book"
    assert [c.title for c in read.chapters] == ["第一章 开始", "Chapter 2"]
    assert read.chapters[0].text == "第一章 开始\n今天天气很好。\nAnd more of chapter one."
    assert read.chapters[1].text == "Chapter 2\nHello & goodbye."


# -- subtitles and loudness, no model --------------------------------------------------------
def test_subtitles_share_a_segment_by_sentence_and_parse_back() -> None:
    assert sentences("你好，世界。Hello world. It is 3.14 now!「对吗？」[uv_break]好……") == [
        "你好，世界。",
        "Hello world.",
        "It is 3.14 now!",
        "「对吗？」",
        "好……",
    ]
    cues = cues_for([("你好。世界很大，真的。", 0, 48000), ("Hello there.", 54000, 80000)])
    assert [c.text for c in cues] == ["你好。", "世界很大，真的。", "Hello there."]
    assert cues[0].end == pytest.approx(2.0 * 2 / 8)  # 2 of the 8 characters' reading time
    assert (cues[1].end, cues[2].start, cues[2].end) == (2.0, 2.25, pytest.approx(80000 / 24000))
    for text in (format_srt(cues), format_vtt(cues, note="demo")):
        back = parse_subtitles(text)
        assert [c.text for c in back] == [c.text for c in cues]
        assert all(abs(a.start - b.start) < 1e-3 for a, b in zip(back, cues, strict=True))
    assert format_vtt(cues).startswith("WEBVTT\n")
    assert "00:00:02,250 --> 00:00:03,333" in format_srt(cues)


def test_streaming_loudness_matches_pyloudnorm_and_the_peak_ceiling_holds() -> None:
    import pyloudnorm

    rng = np.random.default_rng(1)
    audio = (rng.standard_normal(24000 * 5 + 77) * 0.05 * np.hanning(24000 * 5 + 77)).astype(
        np.float32
    )
    audio[3000:20000] = 0
    meter = LoudnessMeter()
    at = 0
    while at < len(audio):
        size = int(rng.integers(1, 9000))
        meter.add(audio[at : at + size])
        at += size
    expected = pyloudnorm.Meter(24000).integrated_loudness(audio.astype(np.float64))
    assert meter.integrated() == pytest.approx(expected, abs=1e-6)
    quiet = plan_gain(-30.0, 10 ** (-20 / 20), -16.0, -1.0)
    assert quiet.gain_db == pytest.approx(14.0) and not quiet.peak_limited
    loud = plan_gain(-20.0, 10 ** (-3 / 20), -16.0, -1.0)
    assert loud.peak_limited and loud.gain_db == pytest.approx(2.0)
    assert loud.result_peak_dbtp == pytest.approx(-1.0) and "held back" in loud.describe()
    assert true_peak(np.array([0.0, 0.5, -0.9], np.float32)) >= 0.9


# -- rendering -----------------------------------------------------------------------------
def test_group_seeds_depend_only_on_seed_chapter_and_first_segment() -> None:
    assert group_seed(7, 1, 4) == group_seed(7, 1, 4)
    assert len({group_seed(7, c, f) for c in range(3) for f in range(0, 8, 2)}) == 12
    assert all(0 <= group_seed(s, 0, 0) < 2**31 for s in (0, 1, 2**31 - 1))


def test_render_writes_chapters_subtitles_loudness_and_the_chapter_list(reference: Path) -> None:
    import pyloudnorm

    listing = json.loads((reference / "chapters.json").read_text())
    assert listing["random_weights"] and "noise, not speech" in listing["made_by"]
    assert [c["title"] for c in listing["chapters"]] == ["第一章 春天", "Chapter 2"]
    target = {"target_lufs": -16.0, "peak_ceiling_dbtp": -1.0, "per": "chapter"}
    assert listing["loudness"] == target
    lines = (reference / "chapters.txt").read_text().splitlines()
    assert lines[0] == "00:00:00.000 第一章 春天" and lines[1].endswith(" Chapter 2")
    second = listing["chapters"][1]
    assert second["start"] == pytest.approx(listing["chapters"][0]["duration"] + 1.0)
    for chapter, audio in zip(listing["chapters"], chapter_audio(reference), strict=True):
        path = reference / chapter["file"]
        assert "noise, not speech" in sf.SoundFile(str(path)).copy_metadata()["comment"]
        loudness = pyloudnorm.Meter(24000).integrated_loudness(audio.astype(np.float64))
        assert abs(loudness - (-16.0)) <= 0.5
        assert chapter["loudness"]["result_lufs"] == pytest.approx(-16.0, abs=0.01)
        assert not chapter["loudness"]["peak_limited"]
        cues = parse_subtitles((reference / chapter["subtitles"]).read_text())
        check_cues(cues, audio, chapter["segments"])  # chapter-relative times


def test_m4b_has_chapter_marks(engine, one_thread, reference: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """The same book as an audiobook: the kept segments are reused, only assembly runs."""
    import shutil

    from chattts_studio.core.audio.m4b import read_chapters

    folder = tmp_path / "book"
    shutil.copytree(reference / STORE, folder / STORE)
    job = render(engine, folder, format="m4b", subtitles="vtt")
    assert job.stats.made == 0 and job.stats.kept == job.total_segments
    listing = json.loads((folder / "chapters.json").read_text())
    marks = read_chapters(folder / listing["audiobook"])
    assert [m[2] for m in marks] == ["第一章 春天", "Chapter 2"]
    for mark, chapter in zip(marks, listing["chapters"], strict=True):
        assert mark[0] == pytest.approx(chapter["start"], abs=0.002)
    assert marks[-1][1] == pytest.approx(listing["duration"], abs=0.002)
    assert sorted(p.suffix for p in folder.glob("[0-9]* *")) == [".m4a", ".m4a", ".vtt", ".vtt"]
    cues = parse_subtitles((folder / listing["audiobook_subtitles"]).read_text())
    assert cues[-1].end == pytest.approx(listing["duration"], abs=0.002)  # the whole book's times


def test_cancelled_render_keeps_its_segments_and_resumes_to_the_same_audio(
    engine, one_thread, reference: Path, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    folder = tmp_path / "cancelled"
    with pytest.raises(Cancelled):
        render(engine, folder, cancel_after=3)
    kept = len(journal_lines(folder))
    assert 3 <= kept < len(journal_lines(reference))
    job = render(engine, folder)
    assert job.stats.kept == kept and job.stats.made + kept == job.total_segments
    for got, want in zip(chapter_audio(folder), chapter_audio(reference), strict=True):
        np.testing.assert_array_equal(got, want)

    # A group cut short (its second segment's line lost): the whole group runs again with its
    # seed; its kept segment comes out the same and is not written again.
    lines = journal_lines(folder)
    entries = [json.loads(line) for line in lines]
    lost = next(i for i, e in enumerate(entries) if e["chapter"] == 1 and e["index"] == 3)
    (folder / STORE / JOURNAL).write_text("\n".join(lines[:lost] + lines[lost + 1 :]) + "\n")
    job = render(engine, folder)
    assert (job.stats.made, job.stats.remade, job.stats.mismatched) == (1, 1, 0)
    for got, want in zip(chapter_audio(folder), chapter_audio(reference), strict=True):
        np.testing.assert_array_equal(got, want)


def test_sigkilled_render_resumes_to_the_uninterrupted_audio(
    reference: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from chattts_studio.core.cli.main import main

    book = tmp_path / "book.txt"
    book.write_text(BOOK, encoding="utf-8")
    folder = tmp_path / "killed"
    argv = ["render", str(book), "-o", str(folder), *RENDER_ARGS]
    total = len(journal_lines(reference))
    proc = subprocess.Popen(
        [sys.executable, "-m", "chattts_studio.core.cli.main", *argv],
        cwd=ROOT,
        env=dict(os.environ),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 120
        while len(journal_lines(folder)) < 3:
            assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
            assert time.monotonic() < deadline, "the render made no segments"
            time.sleep(0.005)
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.wait()
    assert proc.returncode == -signal.SIGKILL
    kept = len(journal_lines(folder))
    assert 3 <= kept < total, "the kill came after the render had finished"

    code = main(argv)
    _, err = capsys.readouterr()
    assert code == 0, err
    assert f"{kept} segment(s) already in" in err
    for got, want in zip(chapter_audio(folder), chapter_audio(reference), strict=True):
        np.testing.assert_array_equal(got, want)
    assert not list(folder.rglob(".*.part*")), "a temp file was left behind"


def test_render_mistakes_give_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from chattts_studio.core.cli.main import main

    (tmp_path / "empty.txt").write_text("  \n", encoding="utf-8")
    (tmp_path / "a_file").write_text("x", encoding="utf-8")
    cases = [
        (["render", str(tmp_path / "missing.txt"), "-o", str(tmp_path / "o")], "does not exist"),
        (["render", str(tmp_path / "empty.txt"), "-o", str(tmp_path / "o")], "no text"),
        (["render", str(tmp_path / "empty.txt"), "-o", str(tmp_path / "a_file")], "not a folder"),
        (["render", str(tmp_path / "empty.txt"), "-o", "/nope/x"], "does not exist"),
        (["render", str(tmp_path / "empty.txt"), "-o", "x", "--loudness", "5"], "loudness"),
    ]
    for argv, message in cases:
        assert main(argv) == 2
        last = capsys.readouterr().err.strip().splitlines()[-1]
        assert last.startswith("error: ") and message in last, (argv, last)


def test_progress_is_a_bar_on_a_terminal_and_lines_otherwise() -> None:
    import io

    from chattts_studio.core.cli.render import ProgressView
    from chattts_studio.core.render.book import RenderProgress

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    step = RenderProgress(5, 10, 1, 2, 754.0, 30.0, 15.0, 3725.0, "")
    terminal, log = Terminal(), io.StringIO()
    ProgressView(terminal)(step)
    ProgressView(log)(step)
    ProgressView(log)(RenderProgress(6, 10, 1, 2, 760.0, 36.0, 18.0, None, "cut short"))
    bar = terminal.getvalue()  # tqdm's bar, redrawn in place: half full at 5 of 10
    assert bar.startswith("\r") and "5/10 segments, 12:34 of audio, RTF 0.50, 1:02:05 left" in bar
    drawn = bar.split("5/10")[0].lstrip("\r")
    assert len(drawn) == 25 and len(drawn.strip()) == 12, drawn  # 24 wide, then a space
    lines = log.getvalue().splitlines()
    assert lines[0] == "  5/10 segments, 12:34 of audio, RTF 0.50, 1:02:05 left (chapter 1/2)"
    assert lines[1].endswith("--:-- left (chapter 1/2)") and lines[2] == "  warning: cut short"


def test_a_book_resumed_with_other_weights_in_the_same_folder_makes_it_again(
    engine, one_thread, reference: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    """The same model name, other bytes in its files: no kept segment is reused (the
    settings key names the weights' identity, as manifests' do)."""
    import shutil

    from chattts_studio.core.render import book as render_module

    folder = tmp_path / "book"
    shutil.copytree(reference, folder)
    job = render(engine, folder)
    assert job.stats.made == 0 and job.stats.kept == job.total_segments
    monkeypatch.setattr(render_module, "weights_identity", lambda info: "other-weights")
    job = render(engine, folder)
    assert job.stats.kept == 0 and job.stats.made == job.total_segments


def test_the_voice_check_remakes_drifting_segments_says_so_and_resumes_alike(
    engine,
    one_thread,
    reference: Path,
    tmp_path: Path,  # type: ignore[no-untyped-def]
) -> None:
    """With the voice check on (here the demo speaker model, held to a threshold noise cannot
    reach, so every segment it can judge "drifts"), each judged segment is made again once and
    the journal says its similarity and tries; the reference segment (the first long enough)
    is not. A render cancelled midway resumes to the audio of an uninterrupted one."""
    from chattts_studio.core.render.voice_guard import VoiceGuard
    from chattts_studio.core.speaker import models

    guard = VoiceGuard(models.encoder("demo"), threshold=0.99999, tries=1)
    whole = render(engine, tmp_path / "whole", voice=guard)
    entries = [json.loads(line) for line in journal_lines(tmp_path / "whole")]
    assert len(entries) == whole.total_segments
    assert entries[0]["voice"] is None and entries[0]["tries"] == 0  # the reference
    remade = [e for e in entries if e["tries"]]
    assert whole.stats.voice_rerolled == len(remade) > 0
    assert all(e["tries"] == 1 and -1.0 <= e["voice"] < 0.99999 for e in remade)
    assert whole.stats.voice_reference == "segment 1 of chapter 1"
    assert any("its voice drifted; made again 1 time(s)" in w for w in whole.stats.warnings)
    differs = [
        not np.array_equal(a, b)
        for a, b in zip(chapter_audio(tmp_path / "whole"), chapter_audio(reference), strict=True)
    ]
    assert any(differs)  # the remade segments are other audio than the plain render's
    folder = tmp_path / "cancelled"
    with pytest.raises(Cancelled):
        render(engine, folder, cancel_after=3, voice=guard)
    resumed = render(engine, folder, voice=guard)
    assert resumed.stats.kept >= 3
    for got, want in zip(chapter_audio(folder), chapter_audio(tmp_path / "whole"), strict=True):
        np.testing.assert_array_equal(got, want)
