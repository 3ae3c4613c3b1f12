"""Re-roll flagged until clean and best of N, on the real engine (demo weights) with a
recogniser that hears what the test decides per take: segments are re-rolled one take at a
time until speech recognition's flag is gone or the tries run out, every take is kept and
checked, and each segment ends on its best take unless picked by hand."""

import hashlib
from pathlib import Path

import numpy as np
import pytest

from chattts_studio.core.engine.engine import Engine
from chattts_studio.core.errors import BadSettingError
from chattts_studio.core.project import edits, store, take_files
from chattts_studio.core.project.model import TakeSettings
from chattts_studio.core.project.reading import flagged_numbers, take_flags
from chattts_studio.core.services.heard_takes import reroll_until_clean
from chattts_studio.core.services.project import NewProject, new_project
from chattts_studio.core.voices.voice import Voice

TEXT = "今天天气很好。我们去公园散步吧！"


class Scripted:
    """Hears a take's own text from its `clean_from`-th take on, and nothing before (every
    word missing); finds the take by its audio in the project on disk."""

    name = "scripted"

    def __init__(self, path: Path, clean_from: int) -> None:
        self.path, self.clean_from, self.calls = path, clean_from, 0

    def transcribe(self, audio: np.ndarray, sample_rate: int, language: str) -> str:
        self.calls += 1
        digest = hashlib.sha256(np.asarray(audio, np.float32).tobytes()).hexdigest()
        for segment in store.load(self.path).segments:
            for take in segment.takes:
                stored = take_files.take_audio(self.path, take)
                if hashlib.sha256(stored.tobytes()).hexdigest() == digest:
                    return take.spoken_text if take.id >= self.clean_from else ""
        raise AssertionError("audio of no take")


@pytest.fixture
def made(engine: Engine, tmp_path: Path) -> Path:
    spec = NewProject(
        text=TEXT,
        voice=Voice(embedding=engine.sample_speaker(3)),
        settings=TakeSettings(),
        model="demo",
        segment_size=8,
        seed=5,
    )
    return new_project(engine, tmp_path / "p.chattts", spec)


def _asr_flagged(path: Path) -> list[int]:
    project = store.load(path)
    found = take_flags(project)
    return [
        n
        for n, s in enumerate(project.segments, 1)
        if any(f.kind == "asr" for f in found[(s.id, s.chosen)])  # type: ignore[arg-type]
    ]


def test_flagged_segments_are_re_rolled_until_clean_and_keep_every_take(
    engine: Engine, made: Path
) -> None:
    count = len(store.load(made).segments)
    assert count >= 2
    tries = reroll_until_clean(engine, made, Scripted(made, clean_from=3), max_tries=5, seed=9)
    assert tries == {n: 2 for n in range(1, count + 1)}  # takes 1 and 2 flagged, 3 clean
    project = store.load(made)
    for segment in project.segments:
        assert [t.id for t in segment.takes] == [1, 2, 3]
        assert all(t.asr is not None for t in segment.takes)  # every take heard
        assert segment.chosen == 3 and segment.take(3).asr.score == 0.0  # type: ignore[union-attr]
    assert _asr_flagged(made) == []


def test_tries_run_out_and_the_best_take_stays_chosen(engine: Engine, made: Path) -> None:
    edits.pick(made, 2, 1)  # segment 2 picked by hand: re-rolled, never re-chosen
    hearing = Scripted(made, clean_from=99)
    tries = reroll_until_clean(engine, made, hearing, max_tries=2, seed=9)
    project = store.load(made)
    count = len(project.segments)
    assert tries == {n: 2 for n in range(1, count + 1)}
    first, second = project.segments[:2]
    assert [t.id for t in first.takes] == [1, 2, 3] and first.chosen in (1, 2, 3)
    assert first.chosen == 1  # all equally bad (nothing heard): the earliest
    assert second.chosen == 1 and second.picked
    assert _asr_flagged(made) == list(range(1, count + 1))
    assert set(flagged_numbers(project)) >= {1}  # segment 2: picked, so never listed
    assert hearing.calls == 3 * count  # each take heard once: the first takes, then 2 new


def test_tries_outside_their_range_are_one_sentence(engine: Engine, made: Path) -> None:
    with pytest.raises(BadSettingError) as caught:
        reroll_until_clean(engine, made, Scripted(made, 1), max_tries=0)
    assert "between 1 and" in str(caught.value)
