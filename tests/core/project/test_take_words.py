"""A take's word timings kept in its project: an alignment (core/align) stored with the take
is written and read back whole, a project saved before takes kept words opens (none kept), and
a damaged words record is dropped, not a reason to refuse the project."""

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
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


class HearsTheText:
    """A recogniser that hears what was to be said (the check's score is not under test)."""

    name = "hears the text"

    def __init__(self, text: str) -> None:
        self.text = text

    def transcribe(self, audio: np.ndarray, sample_rate: int, language: str) -> str:
        return self.text


def test_a_checked_take_keeps_its_words_timed_and_noise_keeps_none(tmp_path: Path) -> None:
    """`project check` times a take's words as it hears it: real (espeak-ng) English speech
    gets each word measured, in order, inside the take; noise the aligner refuses gets none
    (nothing invented), and its check is kept all the same."""
    from chattts_studio.core.devtools.alignacc import ESPEAK_RATE, at_app_rate, espeak
    from chattts_studio.core.services.project_check import check_project

    text = "The weather is very nice today."
    said = at_app_rate(espeak().say("en-us", text)[0], ESPEAK_RATE)
    path = saved_project(tmp_path / "book.chattts", [text, text], [[said], [speech(2.0, 3)]])
    checked = check_project(path, HearsTheText(text))
    assert [(n, take) for n, take, _ in checked] == [(1, 1), (2, 1)]
    project = store.load(path)
    spoken, noise = (s.takes[0] for s in project.segments)
    assert spoken.words is not None and noise.words is None
    assert spoken.asr is not None and noise.asr is not None
    words = spoken.words.words
    assert [w.text.lower() for w in words] == ["the", "weather", "is", "very", "nice", "today"]
    assert not any(w.estimated for w in words)
    starts = [w.start for w in words]
    assert starts == sorted(starts) and starts[0] >= 0 and words[-1].end <= len(said) / SAMPLE_RATE
