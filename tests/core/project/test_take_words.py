"""A take's word timings kept in its project: an alignment (core/align) stored with the take
is written and read back whole, a project saved before takes kept words opens (none kept), and
a damaged words record is dropped, not a reason to refuse the project."""

import json
from dataclasses import replace
from pathlib import Path

from project_fakes import saved_project, speech

from chattts_studio.core import SAMPLE_RATE
from chattts_studio.core.align.aligner import align
from chattts_studio.core.align.words import Alignment
from chattts_studio.core.project import store, writer


def _timed(folder: Path) -> tuple[Path, Alignment]:
    """A project of one Chinese segment whose take is timed by the aligner (estimated from
    the speech's ends: no recogniser needed) and saved with it."""
    text = "今天天气很好。"
    audio = speech(2.0, 7)
    path = saved_project(folder, [text], [[audio]])
    words = align(audio, SAMPLE_RATE, text, language="zh")
    assert [w.text for w in words.words] == list("今天天气很好")
    with writer.opened(path) as handle:
        segment = handle.project.segments[0]
        segment.takes[0] = replace(segment.takes[0], words=words)
        handle.save()
    return path, words


def test_a_take_s_word_timings_are_kept_and_read_back(tmp_path: Path) -> None:
    path, words = _timed(tmp_path / "book.chattts")
    got = store.load(path).segments[0].takes[0].words
    assert got is not None and got.to_json() == words.to_json()
    assert got.language == "zh" and len(got.words) == 6
    assert all(0.0 <= w.start <= w.end <= got.duration for w in got.words)
    written = json.loads((path / "project.json").read_text())["segments"][0]["takes"][0]
    assert written["words"]["words"][0]["text"] == "今"


def test_a_project_saved_before_word_timings_opens(tmp_path: Path) -> None:
    path = saved_project(
        tmp_path / "old.chattts", ["One.", "Two."], [[speech(0.3, 1)], [speech(0.3, 2)]]
    )
    data = json.loads((path / "project.json").read_text())
    for segment in data["segments"]:
        for take in segment["takes"]:
            del take["words"]
    (path / "project.json").write_text(json.dumps(data))
    assert [t.words for s in store.load(path).segments for t in s.takes] == [None, None]


def test_damaged_word_timings_are_dropped_and_the_project_opens(tmp_path: Path) -> None:
    path, _ = _timed(tmp_path / "book.chattts")
    data = json.loads((path / "project.json").read_text())
    good = data["segments"][0]["takes"][0]["words"]
    for bad in (
        {**good, "words": [{"text": "今", "start": 2.0, "end": 1.0}]},  # ends before it starts
        {**good, "words": [{"text": "今", "start": float("nan"), "end": 1.0}]},
        {**good, "language": "fr"},
        {**good, "words": "今天"},
        "words",
    ):
        data["segments"][0]["takes"][0]["words"] = bad
        (path / "project.json").write_text(json.dumps(data))
        take = store.load(path).segments[0].takes[0]
        assert take.words is None and take.id == 1
