"""A project's voice checks as its files keep them: a project saved before the checks named
their rule still opens (and one saved before voice checks at all), each check is judged again
as one of its voice's takes when the project is read, the flag says which rule fired, and a
save writes the rule, its limit and its pool beside the similarity."""

import json
from pathlib import Path

from project_fakes import saved_project, speech

from chattts_studio.core.project import reading, store, writer
from chattts_studio.core.speaker.spread import MIN_TAKES, RULE_FIXED, RULE_SPREAD

STEADY = [0.95, 0.94, 0.96, 0.93, 0.95]  # takes 2/1 .. 6/1 against the typical take 1/1
NEAR = 0.80  # segment 7: another voice, above the fixed threshold (0.73)


def _project(folder: Path, similarities: list[float]) -> Path:
    """Segment 1's take is its voice's typical take; segment n+1's is `similarities[n-1]`
    like it, each check written as a version before rules wrote it (no rule, limit, takes)."""
    count = len(similarities) + 1
    texts = [f"Sentence {n}." for n in range(1, count + 1)]
    path = saved_project(folder, texts, [[speech(0.25, n)] for n in range(count)])
    data = json.loads((path / "project.json").read_text())
    for segment, score in zip(data["segments"], [1.0, *similarities], strict=True):
        segment["takes"][0]["voice_check"] = {
            "similarity": score,
            "threshold": 0.73,
            "reference": "typical",
            "reference_id": f"{data['segments'][0]['id']}/1",
            "model": "campplus.onnx",
            "demo": False,
        }
    (path / "project.json").write_text(json.dumps(data))
    return path


def _voice_flags(path: Path) -> dict[int, str]:
    listed = reading.listing(store.load(path))
    return {
        n: flag["why"]
        for n, segment in enumerate(listed, 1)
        for flag in segment["takes"][0]["flags"]
        if flag["kind"] == "voice"
    }


def test_an_old_project_s_checks_open_judged_by_their_voice_s_spread(tmp_path: Path) -> None:
    path = _project(tmp_path / "book.chattts", [*STEADY, NEAR])
    project = store.load(path)
    checks = [s.takes[0].voice_check for s in project.segments]
    assert all(c is not None and c.rule == RULE_SPREAD for c in checks)
    near = checks[-1]
    assert near is not None and near.takes == len(STEADY) + 2 and not near.same
    assert near.limit is not None and near.limit > NEAR  # the fixed threshold would pass it
    flagged = _voice_flags(path)
    assert list(flagged) == [len(STEADY) + 2] and "(spread rule)" in flagged[len(STEADY) + 2]
    listed = reading.listing(project)
    assert listed[-1]["takes"][0]["voice"]["rule"] == RULE_SPREAD

    with writer.opened(path) as handle:  # a save writes the verdict beside the similarity
        handle.save()
    written = json.loads((path / "project.json").read_text())["segments"][-1]["takes"][0]
    assert written["voice_check"]["rule"] == RULE_SPREAD
    assert written["voice_check"]["limit"] == near.limit


def test_too_few_takes_keep_the_fixed_threshold(tmp_path: Path) -> None:
    path = _project(tmp_path / "book.chattts", [0.94, NEAR][: MIN_TAKES - 2])
    checks = [s.takes[0].voice_check for s in store.load(path).segments]
    assert all(c is not None and c.rule == RULE_FIXED and c.same for c in checks)
    assert _voice_flags(path) == {}


def test_a_project_from_before_voice_checks_opens(tmp_path: Path) -> None:
    path = saved_project(
        tmp_path / "old.chattts", ["One.", "Two."], [[speech(0.25, 1)], [speech(0.25, 2)]]
    )
    data = json.loads((path / "project.json").read_text())
    for segment in data["segments"]:
        for take in segment["takes"]:
            del take["voice_check"]
    (path / "project.json").write_text(json.dumps(data))
    project = store.load(path)
    assert [t.voice_check for s in project.segments for t in s.takes] == [None, None]
