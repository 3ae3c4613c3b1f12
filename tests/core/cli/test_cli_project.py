"""chattts-studio-cli project: new, list, reroll, pick, edit, lock, export, and the mistakes
that must be one sentence and exit 2 with the project unchanged."""

import json
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
from conftest import run_cli

TEXT = "今天天气很好。我们去公园散步吧！然后回家。"
MODEL = ("--device", "cpu", "--engine", "torch")


def _listed(capsys: pytest.CaptureFixture[str], project: Path) -> dict:  # type: ignore[type-arg]
    code, out, err = run_cli(capsys, "project", "list", str(project), "--json")
    assert code == 0, err
    return json.loads(out)  # type: ignore[no-any-return]


def test_a_project_from_new_to_export(
    private_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    project = tmp_path / "walk.chattts"
    code, out, err = run_cli(
        capsys, "project", "new", TEXT, "-o", str(project), "--takes", "2",
        "--segment-size", "10", "--seed", "4", *MODEL,
    )  # fmt: skip
    assert code == 0, err
    assert "3 segment(s), 2 take(s) each" in out and "noise, not speech" in out
    assert "  6/6 takes, " in err and " left" in err  # plain progress lines off a terminal
    listed = _listed(capsys, project)
    segments = listed["segments"]
    assert [s["index"] for s in segments] == [1, 2, 3]
    assert all(len(s["takes"]) == 2 and s["chosen"] in (1, 2) for s in segments)
    assert {"seed", "seconds", "flags", "stale"} <= set(segments[0]["takes"][0])
    code, out, err = run_cli(capsys, "project", "reroll", str(project), "2", "--seed", "8", *MODEL)
    assert code == 0 and "re-rolled 1 segment(s): 2" in out, err
    after = _listed(capsys, project)["segments"]
    assert after[0] == segments[0] and after[2] == segments[2]
    assert len(after[1]["takes"]) == 3 and after[1]["chosen"] == 3
    assert run_cli(capsys, "project", "pick", str(project), "2", "1")[0] == 0
    assert run_cli(capsys, "project", "lock", str(project), "1,3")[0] == 0
    listed = _listed(capsys, project)["segments"]
    assert [s["locked"] for s in listed] == [True, False, True] and listed[1]["picked"]
    code, out, err = run_cli(capsys, "project", "edit", str(project), "2", "我们去河边吧！", *MODEL)
    assert code == 0, err
    listed = _listed(capsys, project)["segments"]
    assert listed[1]["text"] == "我们去河边吧！" and listed[1]["chosen"] == 4
    code, out, _ = run_cli(capsys, "project", "list", str(project))
    assert out.splitlines()[0].startswith("   1 L") and "我们去河边吧！" in out
    wav, srt = tmp_path / "walk.wav", tmp_path / "walk.srt"
    exporting = ("project", "export", str(project), str(wav), "--subtitles", str(srt))
    code, out, err = run_cli(capsys, *exporting)
    assert code == 0, err
    audio, rate = sf.read(str(wav))
    seconds = sum(t["seconds"] for s in listed for t in s["takes"] if t["take"] == s["chosen"])
    # The listing rounds each take's seconds to milliseconds: within 3 ms of the sum.
    assert rate == 24000 and abs(len(audio) - (seconds + 2 * 0.25) * 24000) <= 3 * 24
    assert srt.read_text(encoding="utf-8").count("-->") >= 3


def test_mistakes_are_one_sentence_and_change_nothing(
    private_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    project = tmp_path / "walk.chattts"
    code, _, err = run_cli(
        capsys, "project", "new", TEXT, "-o", str(project), "--segment-size", "10", *MODEL
    )
    assert code == 0, err
    assert run_cli(capsys, "project", "lock", str(project), "2")[0] == 0
    before = (project / "project.json").read_bytes()
    mistakes = [
        (("project", "reroll", str(project), "9", *MODEL), "no segment 9"),
        (("project", "reroll", str(project), "2", *MODEL), "Segment 2 is locked"),
        (("project", "reroll", str(project), *MODEL), "Name the segments"),
        (("project", "pick", str(project), "1", "7"), "Segment 1 has no take 7"),
        (("project", "edit", str(project), "2", "新的。", *MODEL), "Segment 2 is locked"),
        (("project", "lock", str(project), "2-x"), "3,7-9"),
        (("project", "list", str(tmp_path / "nowhere")), "There is no project"),
        (("project", "new", TEXT, "-o", str(project), *MODEL), "exists already"),
        (("project", "export", str(project), str(tmp_path / "x.doc")), "Cannot save as"),
    ]
    for argv, words in mistakes:
        code, out, err = run_cli(capsys, *argv)
        assert code == 2, (argv, out, err)
        assert words in err and len(err.strip().splitlines()) == 1, (argv, err)
        assert "Traceback" not in err
    assert (project / "project.json").read_bytes() == before


def test_a_script_project_keeps_each_line_s_speaker_and_voice(
    private_home: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    engine,  # type: ignore[no-untyped-def]
) -> None:
    from chattts_studio.core.project import store
    from chattts_studio.core.voices.speakers import SpeakerLibrary

    library = SpeakerLibrary()
    library.add("Alice", engine.sample_speaker(1))
    library.add("Bob", engine.sample_speaker(2))
    script = tmp_path / "talk.txt"
    script.write_text("Alice: 你好。今天去哪里？\nBob: 好的。\n", encoding="utf-8")
    project = tmp_path / "talk.chattts"
    code, _, err = run_cli(
        capsys, "project", "new", "--script", str(script), "-o", str(project),
        "--segment-size", "6", "--turn-pause", "0.5", *MODEL,
    )  # fmt: skip
    assert code == 0, err
    made = store.load(project)
    assert [s.speaker for s in made.segments] == ["Alice", "Alice", "Bob"]
    assert [s.pause_before for s in made.segments] == [0.0, 0.25, 0.5]
    voices = {e.name: e.voice for e in SpeakerLibrary().entries}
    assert [s.voice.embedding for s in made.segments] == [
        voices[n].embedding for n in ("Alice", "Alice", "Bob")
    ]
    srt = tmp_path / "talk.vtt"
    assert run_cli(capsys, "project", "export", str(project), str(tmp_path / "t.wav"),
               "--subtitles", str(srt))[0] == 0  # fmt: skip
    assert "<v Bob>好的。" in srt.read_text(encoding="utf-8")
    script.write_text("Alice: 你好。\nEve: Who am I?\n", encoding="utf-8")
    code, _, err = run_cli(
        capsys, "project", "new", "--script", str(script), "-o", str(tmp_path / "eve"), *MODEL
    )
    assert code == 2 and "Line 2: there is no speaker named 'Eve'" in err
    assert not (tmp_path / "eve.chattts").exists()


def test_a_changed_dictionary_entry_marks_the_takes_it_reads_otherwise_stale(
    private_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    project = tmp_path / "words.chattts"
    assert run_cli(capsys, "lexicon", "add", "公园", "花园")[0] == 0
    code, _, err = run_cli(
        capsys, "project", "new", TEXT, "-o", str(project), "--segment-size", "10", *MODEL
    )
    assert code == 0, err
    from chattts_studio.core.project import store

    takes = [s.takes[0] for s in store.load(project).segments]
    assert takes[1].spoken_text == "我们去花园散步吧！"  # the dictionary was applied
    assert [t["stale"] for s in _listed(capsys, project)["segments"] for t in s["takes"]] == [
        False, False, False,
    ]  # fmt: skip
    assert run_cli(capsys, "lexicon", "add", "公园", "乐园")[0] == 0
    stale = [t["stale"] for s in _listed(capsys, project)["segments"] for t in s["takes"]]
    assert stale == [False, True, False]  # only the segment the entry reads


def test_split_merge_speaker_and_reroll_unlocked_from_the_command_line(
    private_home: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    engine,  # type: ignore[no-untyped-def]
) -> None:
    from chattts_studio.core.voices.speakers import SpeakerLibrary

    project = tmp_path / "walk.chattts"
    code, _, err = run_cli(
        capsys, "project", "new", TEXT, "-o", str(project), "--segment-size", "10", *MODEL
    )
    assert code == 0, err
    assert run_cli(capsys, "project", "split", str(project), "2", "5")[0] == 0
    assert [s["text"] for s in _listed(capsys, project)["segments"]][1:3] == [
        "我们去公园",
        "散步吧！",
    ]
    code, _, err = run_cli(capsys, "project", "split", str(project), "2", "9")
    assert code == 2 and "keep from 1 to 4" in err
    assert run_cli(capsys, "project", "merge", str(project), "2")[0] == 0
    assert len(_listed(capsys, project)["segments"]) == 3
    SpeakerLibrary().add("Bob", engine.sample_speaker(2))
    assert run_cli(capsys, "project", "speaker", str(project), "3", "Bob")[0] == 0
    code, _, err = run_cli(capsys, "project", "speaker", str(project), "3", "Eve")
    assert code == 2 and "no speaker named 'Eve'" in err
    assert run_cli(capsys, "project", "lock", str(project), "1")[0] == 0
    code, out, err = run_cli(capsys, "project", "reroll", str(project), "--unlocked", *MODEL)
    assert code == 0 and "re-rolled 2 segment(s): 2, 3" in out, err
    listed = _listed(capsys, project)["segments"]
    assert listed[2]["speaker"] == "Bob" and not any(
        t["stale"] for t in listed[2]["takes"] if t["take"] == listed[2]["chosen"]
    )
    code, _, err = run_cli(capsys, "project", "reroll", str(project), "2", "--takes", "99", *MODEL)
    assert code == 2 and "from 1 to 16 takes" in err and len(err.strip().splitlines()) == 1


def test_best_of_n_and_until_clean_through_speech_recognition(
    private_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """project new --best asr hears every take (the demo recogniser: random weights, said so);
    reroll --until-clean re-rolls the flagged segments, each take heard; its misuse is one
    sentence."""
    project = tmp_path / "heard.chattts"
    code, out, err = run_cli(
        capsys, "project", "new", TEXT, "-o", str(project), "--takes", "2", "--segment-size",
        "10", "--seed", "4", "--best", "asr", "--asr-model", "demo", *MODEL,
    )  # fmt: skip
    assert code == 0, err
    assert "its transcripts are noise" in out
    listed = _listed(capsys, project)["segments"]
    assert all(t["asr"] is not None for row in listed for t in row["takes"])
    code, out, err = run_cli(
        capsys, "project", "reroll", str(project), "--flagged", "--until-clean", "--max-tries",
        "1", "--asr-model", "demo", *MODEL,
    )  # fmt: skip
    assert code == 0, err
    assert "re-rolled: " in out and "still flagged: " in out  # noise is never clean
    again = _listed(capsys, project)["segments"]
    assert all(len(row["takes"]) == 3 for row in again)  # one more take each, all kept
    assert all(t["asr"] is not None for row in again for t in row["takes"])
    for wrong in (["--until-clean"], ["1", "--flagged", "--until-clean"]):
        code, out, err = run_cli(capsys, "project", "reroll", str(project), *wrong, *MODEL)
        assert code == 2 and err.count("\n") == 1, err
    code, out, err = run_cli(
        capsys, "project", "reroll", str(project), "--flagged", "--until-clean", *MODEL
    )
    assert code == 2 and "not downloaded yet" in err and "model download-asr" in err


def test_a_full_disk_during_a_reroll_is_one_sentence_and_keeps_every_take(
    private_home: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """soundfile's own error (a RuntimeError, not an OSError) and the OS's full disk, while a
    re-roll saves its take: one sentence, exit 2, every earlier take and project.json as they
    were."""
    import errno

    from chattts_studio.core.project import store, writer

    project = tmp_path / "walk.chattts"
    code, _, err = run_cli(
        capsys, "project", "new", TEXT, "-o", str(project), "--segment-size", "10", *MODEL
    )
    assert code == 0, err
    before = {p.name: p.read_bytes() for p in sorted(project.rglob("*")) if p.is_file()}

    def libsndfile_fails(*args: object, **kwargs: object) -> None:
        raise sf.LibsndfileError(0, "Error writing: ")

    def disk_full(target: Path, *args: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device", str(target))

    for module, name, failing, words in (
        (sf, "write", libsndfile_fails, "Cannot write "),
        (writer, "write_with", disk_full, "the disk is full"),
    ):
        with monkeypatch.context() as patched:
            patched.setattr(module, name, failing)
            code, out, err = run_cli(capsys, "project", "reroll", str(project), "2", *MODEL)
        assert code == 2 and words in err and "s00002-t002.wav" in err, (out, err)
        errors = [line for line in err.splitlines() if line.startswith("error:")]
        assert errors == [err.strip().splitlines()[-1]] and "Traceback" not in err
        after = {p.name: p.read_bytes() for p in sorted(project.rglob("*")) if p.is_file()}
        assert after == before
    assert [len(s.takes) for s in store.load(project).segments] == [1, 1, 1]


def test_the_window_s_new_project_is_the_command_line_s(
    engine, private_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:  # type: ignore[no-untyped-def]
    """One builder for both front ends: the same text, seed and settings (speed included)
    give the same project, take for take, sample for sample."""
    from chattts_studio.core.engine.cancel import CancelToken
    from chattts_studio.core.engine.request import SynthesisRequest
    from chattts_studio.core.project import store
    from chattts_studio.core.project.take_files import take_audio
    from chattts_studio.core.services.project_job import NewProjectJob, run_project

    cli = tmp_path / "cli.chattts"
    asked = ("--segment-size", "10", "--seed", "4", "--speed", "7", "--top-k", "12")
    code, _, err = run_cli(capsys, "project", "new", TEXT, "-o", str(cli), *asked, *MODEL)
    assert code == 0, err
    window = tmp_path / "window.chattts"
    request = SynthesisRequest(TEXT, refine_text=False, segment_size=10, seed=4, speed=7, top_k=12)
    run_project(engine, NewProjectJob(window, request=request), CancelToken(), print)
    made, mine = store.load(cli), store.load(window)
    assert (made.seed, made.settings, made.device, made.model) == (
        mine.seed,
        mine.settings,
        mine.device,
        mine.model,
    )
    assert made.settings.speed == 7 and made.settings.top_k == 12
    assert [s.text for s in made.segments] == [s.text for s in mine.segments]
    assert len(made.segments) >= 2
    for ours, theirs in zip(made.segments, mine.segments, strict=True):
        assert [t.seed for t in ours.takes] == [t.seed for t in theirs.takes]
        assert np.array_equal(take_audio(cli, ours.takes[0]), take_audio(window, theirs.takes[0]))
