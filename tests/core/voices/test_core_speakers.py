"""The speaker library: round trip, damaged and future files, atomic writes."""

import json
from pathlib import Path

import pytest

from chattts_studio.core.errors import SpeakerError
from chattts_studio.core.voices.speaker_file import MAX_NAME, ImportResult, SpeakerNameTaken
from chattts_studio.core.voices.speakers import SpeakerLibrary

EMB = "豆" * 40


def test_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "speakers.json"
    lib = SpeakerLibrary(path)
    lib.add("Alice", EMB, seed=3, note="warm")
    lib.add("鲍勃", EMB + "x", seed=None)
    lib.rename("Alice", "Alicia")
    again = SpeakerLibrary(path)
    assert again.names() == ["Alicia", "鲍勃"]
    alicia = again.get("Alicia")
    assert alicia and alicia.seed == 3 and alicia.note == "warm" and alicia.created
    assert "鲍勃" in path.read_text(encoding="utf-8")  # human-readable, not escaped
    out = tmp_path / "export.json"
    assert again.export(out, ["鲍勃"]) == 1
    again.remove("鲍勃")
    assert again.import_file(out).added == ("鲍勃",)
    assert again.import_file(out) == ImportResult(skipped=("鲍勃",))  # the same voice: skipped
    assert SpeakerLibrary(path).names() == ["Alicia", "鲍勃"]
    with pytest.raises(SpeakerNameTaken, match="already exists") as taken:
        again.add("Alicia", EMB)
    assert taken.value.name == "Alicia" and isinstance(taken.value, SpeakerError)
    with pytest.raises(SpeakerError, match="no speaker named"):
        again.remove("nobody")


@pytest.mark.parametrize(
    "content",
    [
        "{not json",
        "",
        json.dumps({"speakers": "x"}),
        json.dumps({"format": 1, "speakers": [{"name": 1}]}),
    ],
)
def test_a_damaged_library_is_kept_aside_not_overwritten(tmp_path: Path, content: str) -> None:
    path = tmp_path / "speakers.json"
    path.write_text(content)
    lib = SpeakerLibrary(path)
    assert "damaged" in lib.problem and lib.entries == []
    aside = list(tmp_path.glob("speakers.json.damaged-*"))
    assert len(aside) == 1 and aside[0].read_text() == content
    lib.add("New", EMB)
    assert SpeakerLibrary(path).names() == ["New"]


def test_a_library_from_a_newer_version_is_refused_and_untouched(tmp_path: Path) -> None:
    path = tmp_path / "speakers.json"
    content = json.dumps({"format": 99, "speakers": []})
    path.write_text(content)
    with pytest.raises(SpeakerError, match="newer"):
        SpeakerLibrary(path)
    assert path.read_text() == content


def test_import_of_a_bad_file_changes_nothing(tmp_path: Path) -> None:
    lib = SpeakerLibrary(tmp_path / "speakers.json")
    lib.add("A", EMB)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"format": 1, "speakers": [{"name": "B", "embedding": 5}]}))
    with pytest.raises(SpeakerError, match="embedding"):
        lib.import_file(bad)
    with pytest.raises(SpeakerError, match="Cannot read"):
        lib.import_file(tmp_path / "missing.json")
    assert SpeakerLibrary(tmp_path / "speakers.json").names() == ["A"]


def test_an_unusable_library_opens_locked_and_is_never_written(tmp_path: Path) -> None:
    path = tmp_path / "speakers.json"
    content = json.dumps({"format": 7, "speakers": []})
    path.write_text(content)
    lib = SpeakerLibrary.open_or_locked(path)
    assert lib.locked and "newer" in lib.problem and lib.entries == []
    with pytest.raises(SpeakerError, match="cannot be changed"):
        lib.add("A", EMB)
    assert path.read_text() == content
    fine = SpeakerLibrary.open_or_locked(tmp_path / "other.json")
    assert not fine.locked
    fine.add("A", EMB)


def library_file(path: Path, speakers: list[tuple[str, str]]) -> Path:
    body = {"format": 1, "speakers": [{"name": n, "embedding": e} for n, e in speakers]}
    path.write_text(json.dumps(body, ensure_ascii=False), encoding="utf-8")
    return path


def test_an_import_skips_known_voices_renames_taken_names_and_counts(tmp_path: Path) -> None:
    path = tmp_path / "speakers.json"
    lib = SpeakerLibrary(path)
    lib.add("Alice", EMB + "a")
    lib.add("Bob", EMB + "b")
    source = library_file(
        tmp_path / "in.json",
        [
            ("Alice", EMB + "a"),  # the same speaker: skipped
            ("Robert", EMB + "b"),  # Bob's voice under another name: skipped too
            ("Alice", EMB + "c"),  # another voice under a taken name: renamed
            ("Cy", EMB + "d"),
            ("Cy again", EMB + "d"),  # twice in the file: once
        ],
    )
    result = lib.import_file(source)
    assert result.added == ("Alice (2)", "Cy")
    assert result.skipped == ("Alice", "Robert", "Cy again")
    assert result.renamed == (("Alice", "Alice (2)"),)
    assert result.counts() == "2 added, 3 skipped (already in the library), 1 renamed"
    assert SpeakerLibrary(path).names() == ["Alice", "Bob", "Alice (2)", "Cy"]
    before = path.read_bytes()
    again = lib.import_file(source)
    assert again.counts() == "0 added, 5 skipped (already in the library), 0 renamed"
    assert path.read_bytes() == before  # nothing added, nothing written


def test_replace_gives_a_name_a_new_voice_in_place(tmp_path: Path) -> None:
    path = tmp_path / "speakers.json"
    lib = SpeakerLibrary(path)
    lib.add("Alice", EMB + "a", seed=1)
    lib.add("Bob", EMB + "b")
    lib.add("Alice", EMB + "z", seed=9, replace=True)
    again = SpeakerLibrary(path)
    alice = again.get("Alice")
    assert again.names() == ["Alice", "Bob"]
    assert alice and alice.embedding == EMB + "z" and alice.seed == 9
    lib.add("Cy", EMB + "c", replace=True)  # replace of a new name: a plain add
    assert SpeakerLibrary(path).names() == ["Alice", "Bob", "Cy"]


def test_a_free_name_stays_a_valid_name(tmp_path: Path) -> None:
    lib = SpeakerLibrary(tmp_path / "speakers.json")
    assert lib.free_name("Alice") == "Alice"
    lib.add("Alice", EMB + "a")
    lib.add("Alice (2)", EMB + "b")
    assert lib.free_name("Alice") == "Alice (3)"
    long = "x" * MAX_NAME
    lib.add(long, EMB + "c")
    source = library_file(tmp_path / "in.json", [(long, EMB + "d")])
    (renamed,) = lib.import_file(source).added
    assert len(renamed) == MAX_NAME and renamed.endswith(" (2)")
    assert renamed in SpeakerLibrary(tmp_path / "speakers.json").names()  # still loads


SAMPLE = "样" * 60  # stands for a sample string; the library only stores it


def test_format_1_files_stay_readable_and_cloned_voices_write_format_2(tmp_path: Path) -> None:
    path = tmp_path / "speakers.json"
    old = {"format": 1, "speakers": [{"name": "Old", "embedding": EMB, "seed": 4}]}
    path.write_text(json.dumps(old), encoding="utf-8")
    lib = SpeakerLibrary(path)
    assert lib.get("Old") and lib.get("Old").voice.embedding == EMB  # type: ignore[union-attr]
    lib.add("Seed", EMB + "y", seed=5)
    data = json.loads(path.read_text(encoding="utf-8"))
    # Only seed and embedding voices: still format 1, with no new fields an old app would drop.
    assert data["format"] == 1 and set(data["speakers"][1]) == {
        "name",
        "embedding",
        "seed",
        "note",
        "created",
    }
    (tmp_path / "speaker-previews").mkdir()
    (tmp_path / "speaker-previews" / "c.flac").write_bytes(b"x")
    lib.add("Clone", "", sample=SAMPLE, transcript="你好", preview="speaker-previews/c.flac")
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["format"] == 2  # format-1 apps refuse it instead of taking it for damage
    assert data["speakers"][2] == {
        "name": "Clone",
        "embedding": "",
        "seed": None,
        "note": "",
        "created": data["speakers"][2]["created"],
        "sample": SAMPLE,
        "transcript": "你好",
        "preview": "speaker-previews/c.flac",
    }
    clone = SpeakerLibrary(path).get("Clone")
    assert clone and clone.cloned and clone.voice.sample == SAMPLE
    lib.rename("Clone", "Clara")
    assert SpeakerLibrary(path).get("Clara").preview == "speaker-previews/c.flac"  # type: ignore[union-attr]
    # An export carries the voice but no file paths; importing it back is a known voice.
    out = tmp_path / "out.json"
    lib.export(out, ["Clara"])
    assert "preview" not in json.loads(out.read_text(encoding="utf-8"))["speakers"][0]
    assert lib.import_file(out).skipped == ("Clara",)
    lib.remove("Clara")
    assert not (tmp_path / "speaker-previews" / "c.flac").exists()
    assert json.loads(path.read_text(encoding="utf-8"))["format"] == 1


@pytest.mark.parametrize(
    "entry",
    [
        {"name": "A", "embedding": "", "sample": SAMPLE},  # a sample without its transcript
        {"name": "A", "embedding": ""},  # neither an embedding nor a sample
        {"name": "A", "embedding": EMB, "transcript": 5},
    ],
)
def test_incomplete_cloned_entries_are_refused(tmp_path: Path, entry: dict[str, object]) -> None:
    with pytest.raises(SpeakerError):
        SpeakerLibrary(tmp_path / "s.json").add(**{"embedding": "", **entry})  # type: ignore[arg-type]
