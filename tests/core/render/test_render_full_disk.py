"""A render on a full or read-only disk: one sentence (a StudioError the CLI prints as its one
`error:` line), no traceback, no temp file left, and what it kept before (segments, journal,
outputs) byte for byte as it was; the next run with room resumes from there."""

from pathlib import Path
from typing import Any

import pytest
from disk_faults import enospc, files_under, fill, read_only, small_disk

from chattts_studio.core.engine.cancel import CancelToken
from chattts_studio.core.engine.request import SynthesisRequest
from chattts_studio.core.errors import StudioError
from chattts_studio.core.render import output as render_output
from chattts_studio.core.render.book import RenderJob, RenderOptions
from chattts_studio.core.render.output import Assembler
from chattts_studio.core.render.segment_store import STORE
from chattts_studio.core.text.chapters import text_chapters

BOOK = "第一章\n你好。今天好。\n\n第二章\n我们回家。\n"


def render(engine: Any, folder: Path, cancel_after: int | None = None) -> RenderJob:
    """BOOK into `folder`, in-process (cancelled after `cancel_after` segments made)."""
    request = SynthesisRequest("", seed=3, refine_text=False, segment_size=8)
    options = RenderOptions(format="wav", subtitles="srt", group_size=1)
    job = RenderJob(engine, text_chapters(BOOK, "book"), request, folder, options)
    job.plan()
    token = CancelToken()

    def progress(p: Any) -> None:
        if cancel_after is not None and p.done - job.stats.kept >= cancel_after:
            token.cancel()

    with job.store:
        job.refresh()
        assembler = Assembler(job, token)
        job.run(token, progress, on_chapter=assembler.chapter)
        assembler.book()
    return job


def refused(engine: Any, folder: Path) -> str:
    with pytest.raises(StudioError) as caught:
        render(engine, folder)
    message = str(caught.value)
    assert "\n" not in message and "Traceback" not in message
    return message


def no_temp_files(disk: Path) -> None:
    assert not [p for p in disk.rglob("*") if ".part" in p.name], "a temp file was left"


def test_a_full_disk_stops_a_render_in_one_sentence_and_keeps_its_segments(
    engine: Any, tmp_path: Path
) -> None:
    from chattts_studio.core.errors import Cancelled

    with small_disk(tmp_path / "disk", size="4m") as disk:
        folder = disk / "book"
        with pytest.raises(Cancelled):
            render(engine, folder, cancel_after=1)
        kept = files_under(folder / STORE)
        assert any(name.endswith(".flac") for name in kept)
        filler = fill(disk)
        message = refused(engine, folder)
        assert "the disk is full" in message and str(folder) in message, message
        no_temp_files(disk)
        now = files_under(folder / STORE)
        assert {k: v for k, v in now.items() if k != "journal.jsonl"} == {
            k: v for k, v in kept.items() if k != "journal.jsonl"
        }
        assert now["journal.jsonl"].startswith(kept["journal.jsonl"])  # earlier lines intact
        filler.unlink()
        job = render(engine, folder)  # room again: it resumes from what it kept
        assert job.stats.kept >= 1 and (folder / "chapters.json").is_file()


def test_a_full_disk_while_writing_the_chapter_list_is_one_sentence(
    engine: Any, tmp_path: Path
) -> None:
    with small_disk(tmp_path / "disk", size="4m") as disk:
        folder = disk / "book"
        render(engine, folder)
        before = files_under(folder)  # every output is kept: only the list is written again
        fill(disk)
        message = refused(engine, folder)
        assert "chapters.json" in message and "the disk is full" in message, message
        no_temp_files(disk)
        assert files_under(folder) == before


def test_a_read_only_render_folder_is_one_sentence_and_untouched(
    engine: Any, tmp_path: Path
) -> None:
    with small_disk(tmp_path / "disk", size="4m") as disk:
        folder = disk / "book"
        render(engine, folder)
        before = files_under(folder)
        read_only(disk)
        message = refused(engine, folder)
        assert "read-only" in message, message
        assert files_under(folder) == before


def test_outputs_refused_by_the_disk_are_one_sentence(
    engine: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Injected (no file system needed): the record of the outputs and the chapter list."""
    folder = tmp_path / "book"
    render(engine, folder)
    before = files_under(folder)
    (folder / "chapters.json").unlink()

    def full(path: Path, _text: str) -> None:
        raise enospc(path)

    monkeypatch.setattr(render_output, "write_text_atomic", full)
    message = refused(engine, folder)
    assert message.startswith(f"Cannot write to {folder / 'chapters.json'}: the disk is full")
    from chattts_studio.core.render import segment_store as render_store

    monkeypatch.setattr("chattts_studio.core.atomic.write_text_atomic", full)
    segments = render_store.SegmentStore(folder)
    with segments, pytest.raises(StudioError, match=r"outputs\.json: the disk is full"):
        segments.save_outputs({"x": {"key": "y"}})
    assert {k: v for k, v in files_under(folder).items() if k != "chapters.json"} == {
        k: v for k, v in before.items() if k != "chapters.json"
    }
