"""Bad input at the core level gives one clear sentence, no crash and no stray file; nothing
from a file is trusted blindly (no pickle, no names turned into paths, safetensors only)."""

import errno
import json
import os
import pickle
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from chattts_studio.core.audio.output import save
from chattts_studio.core.errors import AudioError, SpeakerError, StudioError
from chattts_studio.core.file_lock import lock_file
from chattts_studio.core.voices.speaker_file import MAX_FILE_BYTES
from chattts_studio.core.voices.speakers import SpeakerLibrary
from chattts_studio.core.weights import models

EMB = "豆" * 40


def one_sentence(exc: pytest.ExceptionInfo[StudioError]) -> str:
    text = str(exc.value)
    assert text and "\n" not in text and "Traceback" not in text and text.endswith(".")
    return text


def tree(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


class Payload:
    """Unpickling this creates a file: a speaker file must never be unpickled."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[object, tuple[str, str]]:
        return (open, (str(self.marker), "w"))


# -- damaged, foreign and future speaker libraries --------------------------------------------


def damaged_contents(marker: Path) -> list[bytes]:
    return [
        b"[]",  # valid JSON, but a list
        b'[{"name": "A", "embedding": "x"}]',
        b'"speakers"',
        b"null",
        b"\xff\xfe\x00garbage",  # not UTF-8
        "{}".encode("utf-16"),
        b"[" * 100_000 + b"]" * 100_000,  # nesting deep enough to break a recursive parser
        json.dumps({"format": "2", "speakers": []}).encode(),  # a format that is not a number
        json.dumps({"format": True, "speakers": []}).encode(),
        json.dumps({"format": 0, "speakers": []}).encode(),
        json.dumps({"format": 1, "speakers": [{"name": "A", "embedding": " " * 40}]}).encode(),
        pickle.dumps(Payload(marker), protocol=0),  # ASCII pickle
        pickle.dumps(Payload(marker)),  # binary pickle
    ]


def test_damaged_libraries_are_kept_aside_never_unpickled(tmp_path: Path) -> None:
    marker = tmp_path / "unpickled"
    for number, content in enumerate(damaged_contents(marker)):
        folder = tmp_path / f"case{number}"
        folder.mkdir()
        path = folder / "speakers.json"
        path.write_bytes(content)
        lib = SpeakerLibrary(path)
        assert "damaged" in lib.problem and lib.entries == [], content[:40]
        assert "\n" not in lib.problem
        aside = list(folder.glob("speakers.json.damaged-*"))
        assert len(aside) == 1 and aside[0].read_bytes() == content
        assert not path.exists()
        lib.add("New", EMB)  # a new library is started beside the kept one
        assert SpeakerLibrary(path).names() == ["New"]
    assert not marker.exists(), "a speaker file was unpickled"


def test_a_huge_file_is_not_read_into_memory(tmp_path: Path) -> None:
    path = tmp_path / "speakers.json"
    with open(path, "wb") as fh:
        fh.truncate(MAX_FILE_BYTES + 1)  # sparse: costs no disk
    lib = SpeakerLibrary(path)
    assert "too large" in lib.problem
    with pytest.raises(SpeakerError, match="too large") as exc:
        lib.import_file(next(tmp_path.glob("speakers.json.damaged-*")))
    one_sentence(exc)


def test_imports_of_bad_files_change_nothing(tmp_path: Path) -> None:
    marker = tmp_path / "unpickled"
    path = tmp_path / "speakers.json"
    lib = SpeakerLibrary(path)
    lib.add("A", EMB)
    before = path.read_bytes()
    for number, content in enumerate(damaged_contents(marker)):
        source = tmp_path / f"import{number}.json"
        source.write_bytes(content)
        with pytest.raises(SpeakerError) as exc:
            lib.import_file(source)
        one_sentence(exc)
        assert lib.names() == ["A"] and path.read_bytes() == before
        assert source.read_bytes() == content
    newer = tmp_path / "newer.json"
    newer.write_text(json.dumps({"format": 7, "speakers": []}))
    with pytest.raises(SpeakerError, match="newer ChatTTS Studio"):
        lib.import_file(newer)
    with pytest.raises(SpeakerError, match="Cannot read"):
        lib.import_file(tmp_path)  # a folder
    assert not marker.exists()


def test_a_library_that_cannot_be_read_or_moved_is_left_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder_instead = tmp_path / "dir" / "speakers.json"
    folder_instead.mkdir(parents=True)
    with pytest.raises(SpeakerError, match="not a file") as exc:
        SpeakerLibrary(folder_instead)
    one_sentence(exc)
    assert folder_instead.is_dir()

    path = tmp_path / "speakers.json"
    path.write_text("{damaged")

    def refuse(*_args: object, **_kw: object) -> None:
        raise PermissionError(errno.EACCES, "Permission denied")

    with monkeypatch.context() as patch:
        patch.setattr(Path, "read_bytes", refuse)
        with pytest.raises(SpeakerError, match=r"Cannot read the speaker library.*denied") as exc:
            SpeakerLibrary(path)
        one_sentence(exc)
    with monkeypatch.context() as patch:
        patch.setattr(Path, "replace", refuse)
        with pytest.raises(SpeakerError, match="could not be moved aside") as exc:
            SpeakerLibrary(path)
        one_sentence(exc)
    assert path.read_text() == "{damaged" and sorted(p.name for p in tmp_path.iterdir()) == [
        "dir",
        "speakers.json",
    ]


def test_a_failed_save_keeps_the_library_as_it_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "speakers.json"
    lib = SpeakerLibrary(path)
    lib.add("A", EMB)
    before = path.read_bytes()

    def full(self: Path, *_args: object, **_kw: object) -> None:
        with open(self, "w") as fh:
            fh.write("{half")
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(Path, "write_text", full)
    for change in (
        lambda: lib.add("B", EMB),
        lambda: lib.rename("A", "C"),
        lambda: lib.remove("A"),
    ):
        with pytest.raises(SpeakerError, match="disk is full") as exc:
            change()
        one_sentence(exc)
        assert lib.names() == ["A"]  # memory and disk still agree
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == [path.name, lock_file(path).name]


# -- names stay names ------------------------------------------------------------------------


def test_imported_names_never_become_paths(tmp_path: Path) -> None:
    home = tmp_path / "data"
    home.mkdir()
    library = home / "speakers.json"
    lib = SpeakerLibrary(library)
    names = ["../../x", "/etc/passwd", "..", "a/b\\c", "nul\0byte", "new\nline", "CON", "x" * 100]
    source = tmp_path / "in.json"
    source.write_text(
        json.dumps(
            {
                "format": 1,
                "speakers": [{"name": n, "embedding": f"{EMB}{i}"} for i, n in enumerate(names)],
            }
        )
    )
    before = {p for p in tmp_path.parent.rglob("*")}
    added = list(lib.import_file(source).added)
    cleaned = ["../../x", "/etc/passwd", "..", "a/b\\c", "nul byte", "new line", "CON"]
    assert added == [*cleaned, "x" * 100]
    after = {p for p in tmp_path.parent.rglob("*")}
    # The only files written are the library itself and its lock (file_lock.py).
    assert after - before - {lock_file(library)} == {library}
    assert not (tmp_path.parent / "x").exists()
    stored = json.loads(library.read_text(encoding="utf-8"))["speakers"]
    assert [s["name"] for s in stored] == added
    again = SpeakerLibrary(library)
    assert again.names() == added
    out = home / "export.json"
    assert again.export(out, ["../../x"]) == 1  # the name picks an entry, never a file
    assert sorted(p.name for p in home.iterdir()) == [
        "export.json",
        "speakers.json",
        "speakers.json.lock",
    ]


# -- export and save targets the file system refuses ------------------------------------------


def refused_targets(folder: Path, ext: str) -> list[tuple[Path, str]]:
    return [
        (folder, "is a folder"),
        (folder / f"nul\0name{ext}", "NUL character"),
        (folder / ("n" * 300 + ext), "too long"),
        (folder / ("语" * 90 + ext), "too long"),  # 90 characters but 270 bytes
        (folder / "missing" / f"x{ext}", "does not exist"),
        (Path(f"/proc/studio{ext}"), "Cannot"),
        (Path("/dev/null"), "not a regular file"),
    ]


def test_speaker_export_refuses_bad_targets_with_one_sentence(tmp_path: Path) -> None:
    lib = SpeakerLibrary(tmp_path / "lib" / "speakers.json")
    lib.add("A", EMB)
    out = tmp_path / "out"
    out.mkdir()
    for target, message in refused_targets(out, ".json"):
        if target == Path("/dev/null"):
            continue  # exporting to /dev/null is refused too, but checked by audio below
        with pytest.raises(SpeakerError, match=message) as exc:
            lib.export(target)
        one_sentence(exc)
    assert list(out.iterdir()) == []


def test_audio_save_refuses_bad_targets_with_one_sentence(tmp_path: Path) -> None:
    audio = np.zeros(2400, dtype=np.float32)
    for target, message in refused_targets(tmp_path, ".wav"):
        with pytest.raises(AudioError, match=message) as exc:
            save(target, audio)
        one_sentence(exc)
    assert list(tmp_path.iterdir()) == []


@pytest.fixture
def old_files(tmp_path: Path) -> Iterator[tuple[Path, Path, SpeakerLibrary]]:
    lib = SpeakerLibrary(tmp_path / "lib" / "speakers.json")
    lib.add("A", EMB)
    out = tmp_path / "out"
    out.mkdir()
    wav = save(out / "old.wav", np.full(2400, 0.25, dtype=np.float32))
    lib.export(out / "old.json")
    yield wav, out / "old.json", lib


@pytest.mark.parametrize(
    ("where", "error", "message"),
    [
        ("replace", OSError(errno.EACCES, "Permission denied"), "permission denied"),
        ("replace", OSError(errno.EROFS, "Read-only file system"), "read-only"),
        ("create", OSError(errno.EACCES, "Permission denied"), "permission denied"),
        ("fsync", OSError(errno.ENOSPC, "No space left on device"), "disk is full"),
        ("fsync", OSError(errno.EDQUOT, "Disk quota exceeded"), "quota"),
        ("replace", OSError(errno.ENAMETOOLONG, "File name too long"), "too long"),
        ("replace", ValueError("embedded null byte"), "null byte"),
    ],
)
def test_failed_writes_keep_the_old_file_and_leave_no_temp_file(
    old_files: tuple[Path, Path, SpeakerLibrary],
    monkeypatch: pytest.MonkeyPatch,
    where: str,
    error: Exception,
    message: str,
) -> None:
    wav, exported, lib = old_files
    folder = wav.parent
    before = tree(folder)

    def fail(*_args: object, **_kw: object) -> None:
        raise error

    real_open = os.open

    def create(path: object, flags: int, *args: object, **kw: object) -> int:
        if flags & os.O_EXCL:  # a new temp file beside the target (and a writability probe)
            raise error
        return real_open(path, flags, *args, **kw)  # type: ignore[arg-type]

    if where == "create":
        monkeypatch.setattr(os, "open", create)
    else:
        monkeypatch.setattr(os, where, fail)
    with pytest.raises(AudioError, match=f"(?i){message}") as exc:
        save(wav, np.full(2400, -0.5, dtype=np.float32))
    sentence = one_sentence(exc)
    # A folder found unwritable before writing says so; a write that failed says it undid it.
    assert "Nothing was changed" in sentence or "is not writable" in sentence
    with pytest.raises(SpeakerError, match=f"(?i){message}") as exc2:
        lib.export(exported)
    one_sentence(exc2)
    monkeypatch.undo()
    assert tree(folder) == before  # old files unchanged, no temp file left


def test_a_full_disk_reported_by_libsndfile_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import soundfile as sf

    def write(path: str, *_args: object, **_kw: object) -> None:
        Path(path).write_bytes(b"RIFF")
        raise sf.LibsndfileError(1, prefix="Error writing: ")

    monkeypatch.setattr(sf, "write", write)
    monkeypatch.setattr(shutil, "disk_usage", lambda _p: shutil._ntuple_diskusage(10, 10, 0))  # type: ignore[attr-defined]
    with pytest.raises(AudioError, match="disk is full") as exc:
        save(tmp_path / "a.wav", np.zeros(100, dtype=np.float32))
    one_sentence(exc)
    assert list(tmp_path.iterdir()) == []


# -- weights: safetensors and JSON only, verified before use -----------------------------------


def test_only_safetensors_and_json_are_ever_verified_or_fetched() -> None:
    assert all(f.endswith((".safetensors", ".json")) for f in models.ASSET_FILES)


def test_pickles_planted_in_a_model_folder_are_never_read(tmp_path: Path, demo_model: str) -> None:
    """A folder with pytorch_model.bin, *.pt and *.pkl beside the safetensors: verifying and
    loading it opens none of them and unpickles nothing."""
    from chattts_studio.core.engine.engine import Engine
    from chattts_studio.core.paths import models_dir

    folder = tmp_path / "model"
    shutil.copytree(models_dir() / demo_model, folder)
    marker = tmp_path / "unpickled"
    payload = pickle.dumps(Payload(marker))
    planted = [
        folder / "asset" / "gpt" / "pytorch_model.bin",
        folder / "asset" / "gpt" / "model.pt",
        folder / "asset" / "DVAE.pt",
        folder / "asset" / "tokenizer" / "tokenizer.pt",
        folder / "asset" / "spk_stat.pt",
        folder / "evil.pkl",
    ]
    for path in planted:
        path.write_bytes(payload)
    opened: list[str] = []
    unpickled: list[str] = []
    active = [True]

    def audit(event: str, args: tuple[object, ...]) -> None:
        if not active[0]:
            return
        if event == "open" and args and isinstance(args[0], str | bytes | os.PathLike):
            opened.append(os.fsdecode(args[0]))
        elif event == "pickle.find_class":
            unpickled.append(f"{args[0]}.{args[1]}")

    sys.addaudithook(audit)  # hooks cannot be removed: `active` switches it off afterwards
    engine = Engine()
    try:
        engine.load(str(folder), "cpu", "fp32")
    finally:
        active[0] = False
        engine.unload()
    read = [p for p in opened if str(folder) in p]
    assert any(p.endswith("model.safetensors") for p in read)  # the hook did see the load
    assert not [p for p in read if p.endswith((".bin", ".pt", ".pkl"))]
    assert not [u for u in unpickled if "open" in u or "system" in u]
    assert not marker.exists()
