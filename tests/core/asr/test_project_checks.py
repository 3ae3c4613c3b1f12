"""A take's speech recognition check kept in its project: saved with the take, read back, given
by `project list --json` as `asr`, and shown as an "asr" flag naming what was missed; projects
made before it open as before, and a damaged check is dropped, not the project."""

import json
from pathlib import Path

import pytest
from conftest import run_cli
from project_fakes import saved_project, speech

from chattts_studio.core.asr.score import check
from chattts_studio.core.project import edits, reading, store, writer
from chattts_studio.core.project.store import ProjectError

TEXTS = ["今天天气很好，我们下午一起去公园散步。", "The weather is very nice today."]


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    return saved_project(
        tmp_path / "book.chattts", TEXTS, [[speech(3, 1), speech(3, 2)], [speech(2, 3)]]
    )


def test_a_check_is_kept_listed_and_flags_its_take(folder: Path) -> None:
    heard = check(TEXTS[0], "今天很好我们下午一起去公园散步")
    edits.set_check(folder, 1, 2, heard)
    edits.set_check(folder, 2, 1, check(TEXTS[1], "the weather is very nice today"))
    project = store.load(folder)  # from disk: what another process sees
    assert project.segments[0].take(2).asr == heard  # type: ignore[union-attr]
    assert project.segments[0].take(1).asr is None  # type: ignore[union-attr]
    rows = reading.listing(project)
    first, second = rows[0]["takes"], rows[1]["takes"]
    assert first[0]["asr"] is None
    assert first[1]["asr"]["missing"] == ["天气"] and first[1]["asr"]["score"] == heard.score
    assert [f["kind"] for f in first[1]["flags"]] == ["asr"]
    assert "“天气”" in first[1]["flags"][0]["why"]
    assert second[0]["asr"]["score"] == 0.0 and second[0]["flags"] == []
    json.dumps(rows)  # the CLI prints it as it is
    assert reading.flagged_numbers(project) == [1]  # segment 1's chosen take (2) is flagged


def test_a_new_check_replaces_the_old_one(folder: Path) -> None:
    edits.set_check(folder, 1, 2, check(TEXTS[0], "今天很好"))
    edits.set_check(folder, 1, 2, check(TEXTS[0], TEXTS[0]))
    project = store.load(folder)
    assert project.segments[0].take(2).asr.score == 0.0  # type: ignore[union-attr]
    assert reading.flagged_numbers(project) == []


def test_a_check_of_a_take_that_is_not_there_is_one_sentence(folder: Path) -> None:
    with pytest.raises(ProjectError) as caught:
        edits.set_check(folder, 1, 9, check(TEXTS[0], ""))
    assert str(caught.value) == "Segment 1 has no take 9."


def test_projects_before_checks_and_damaged_checks_open(folder: Path) -> None:
    edits.set_check(folder, 1, 1, check(TEXTS[0], "今天"))
    path = folder / "project.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    takes = data["segments"][0]["takes"]
    assert takes[0]["asr"]["missing"]
    takes[0]["asr"] = {"score": "not a number"}  # damaged
    del takes[1]["asr"]  # as a project made before checks
    path.write_text(json.dumps(data), encoding="utf-8")
    project = store.load(folder)
    assert [t.asr for t in project.segments[0].takes] == [None, None]
    assert len(project.segments[0].takes) == 2  # the takes themselves are whole


def test_project_check_hears_the_chosen_takes_and_keeps_what_it_heard(
    folder: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The CLI through the real recogniser path (sherpa-onnx) with the demo model: random
    weights, so the transcripts are noise, and the checks say so."""
    monkeypatch.setenv("CHATTTS_STUDIO_HOME", str(tmp_path / "home"))
    code, out, err = run_cli(
        capsys, "project", "check", str(folder), "--asr-model", "demo", "--json"
    )
    assert code == 0, err
    checked = json.loads(out)
    assert checked["demo"] is True
    assert [(row["index"], row["take"]) for row in checked["checked"]] == [(1, 2), (2, 1)]
    for row in checked["checked"]:
        assert row["asr"]["transcript"] and row["asr"]["score"] > 0.0  # noise, not the text
    listed = reading.listing(store.load(folder))
    assert listed[0]["takes"][1]["asr"] == checked["checked"][0]["asr"]
    assert listed[0]["takes"][0]["asr"] is None  # not chosen, not checked
    code, out, err = run_cli(
        capsys, "project", "check", str(folder), "1", "--all-takes", "--asr-model", "demo"
    )
    assert code == 0, err
    assert out.count(" take ") == 2 and "random weights: its transcripts are noise" in out
    assert all(t.asr is not None for t in store.load(folder).segments[0].takes)


def test_project_check_without_a_model_is_one_sentence(
    folder: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = (folder / "project.json").read_bytes()
    code, out, err = run_cli(capsys, "project", "check", str(folder))
    assert code == 2 and "model download-asr" in err and err.count("\n") == 1 and not out
    code, out, err = run_cli(capsys, "project", "check", str(folder), "--asr-model", str(tmp_path))
    assert code == 2 and "No speech recognition model in" in err and err.count("\n") == 1
    assert (folder / "project.json").read_bytes() == before


def test_best_of_n_chooses_the_lowest_error_unless_picked(folder: Path) -> None:
    from chattts_studio.core.services.heard_takes import best_by_check

    edits.set_check(folder, 1, 1, check(TEXTS[0], TEXTS[0][:12]))  # a dropped tail
    edits.set_check(folder, 1, 2, check(TEXTS[0], TEXTS[0][:5]))  # worse
    with writer.opened(folder) as handle:
        best_by_check(handle.project, handle.project.segments)
        handle.save()
    assert store.load(folder).segments[0].chosen == 1  # the lower error, not the later take
    edits.pick(folder, 1, 2)
    with writer.opened(folder) as handle:
        best_by_check(handle.project, handle.project.segments)
        handle.save()
    assert store.load(folder).segments[0].chosen == 2  # picked by hand: kept
