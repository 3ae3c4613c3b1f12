"""The speaker library: round trip, damaged and future files, atomic writes."""

import json
from pathlib import Path

import pytest

from core.errors import SpeakerError
from core.speakers import SpeakerLibrary

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
    assert again.import_file(out) == ["鲍勃"]
    assert again.import_file(out) == ["鲍勃 (2)"]
    assert SpeakerLibrary(path).names() == ["Alicia", "鲍勃", "鲍勃 (2)"]
    with pytest.raises(SpeakerError, match="already exists"):
        again.add("Alicia", EMB)
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
