"""A project's files against what a user, a crash, a full or read-only disk and a hostile file
can do to them: each is one sentence (exit 2 from the CLI, never a traceback), no work is lost
or changed, nothing is written outside the folder. Projects are made without a model
(tests/project_fakes.py)."""

import contextlib
import errno
import json
import os
import shutil
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import soundfile as sf
from project_fakes import file_hashes, small_project, speech, unsaved_take

from chattts_studio.core import file_lock
from chattts_studio.core.cli.main import main
from chattts_studio.core.project import checked, store, take_files, writer
from chattts_studio.core.project.store import ProjectError

RAW = "@@raw@@"


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A data folder of the test's own (the dictionary `project list` reads)."""
    folder = tmp_path / "home"
    folder.mkdir()
    monkeypatch.setenv("CHATTTS_STUDIO_HOME", str(folder))
    return folder


@pytest.fixture
def book(tmp_path: Path, home: Path) -> Path:
    return small_project(tmp_path / "book")


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def refused(result: tuple[int, str, str], words: str) -> None:
    """Exit 2 and one `error:` line that says `words` (after any `warning:` lines)."""
    code, out, err = result
    lines = [line for line in err.strip().splitlines() if not line.startswith("warning: ")]
    assert code == 2 and len(lines) == 1 and lines[0].startswith("error:"), (code, out, err)
    assert words in err and "Traceback" not in err, err


def project_json(folder: Path) -> dict[str, Any]:
    return json.loads((folder / store.PROJECT_FILE).read_text(encoding="utf-8"))  # type: ignore[no-any-return]


def put(data: Any, path: tuple[Any, ...], value: Any) -> None:
    for key in path[:-1]:
        data = data[key]
    data[path[-1]] = value


def write_json(target: Path, data: Any, raw: str | None = None) -> None:
    """`data` as JSON, the marker RAW replaced by `raw` as it is (1e999, NaN, deep nesting)."""
    text = json.dumps(data)
    if raw is not None:
        text = text.replace(json.dumps(RAW), raw)
    target.write_text(text, encoding="utf-8")


def changed_json(folder: Path, path: tuple[Any, ...], value: Any, raw: str | None = None) -> None:
    data = project_json(folder)
    put(data, path, RAW if raw is not None else value)
    write_json(folder / store.PROJECT_FILE, data, raw)


@contextlib.contextmanager
def no_longer_than(seconds: int) -> Iterator[None]:
    """A read that blocks (a FIFO) fails the test instead of hanging it."""

    def late(*_: Any) -> None:
        raise TimeoutError("blocked")

    old = signal.signal(signal.SIGALRM, late)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


@pytest.fixture
def tmpfs(tmp_path: Path) -> Iterator[Path]:
    """A real 1 MiB file system (a tmpfs: root may mount one) that a test may fill or make
    read-only; skipped, saying why, where mounting is not allowed (the injected-error tests
    cover the same refusals there)."""
    where = tmp_path / "disk"
    where.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(where)],
        capture_output=True,
        text=True,
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here ({mounted.stderr.strip() or 'not root'})")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


def remount(where: Path, mode: str) -> None:
    subprocess.run(["mount", "-o", f"remount,{mode}", str(where)], check=True)


# -- damaged project.json: one sentence ---------------------------------------------------------
@pytest.mark.parametrize(
    ("path", "raw", "words"),
    [
        (("segments", 0, "id"), "1e999", "segment 1: id is not a whole number (inf)"),
        (("next_segment_id",), "9" * 5000, "not JSON this version reads"),
        (("future",), "[" * 100_000 + "]" * 100_000, "not JSON this version reads"),
        (("future",), "[" * 40 + "]" * 40, "nested deeper than 32"),
        (("title",), '"\\ud800"', "no file can hold"),
        (("segments", 1, "pause_before"), "NaN", "pause_before is nan"),
        (("segments", 1, "pause_before"), "1e999", "pause_before is inf"),
    ],
)
def test_numbers_past_every_limit_and_deep_nesting_in_project_json_are_one_sentence(
    book: Path, capsys: pytest.CaptureFixture[str], path: tuple[Any, ...], raw: str, words: str
) -> None:
    changed_json(book, path, None, raw)
    before = file_hashes(book)
    with pytest.raises(ProjectError, match="is damaged") as caught:
        store.load(book)
    assert words in str(caught.value) and "\n" not in str(caught.value)
    for argv in (
        ("list", str(book)),
        ("lock", str(book), "1"),
        ("export", str(book), str(book.parent / "x.wav")),
    ):
        refused(cli(capsys, "project", *argv), words)
    assert file_hashes(book) == before


@pytest.mark.parametrize(
    ("path", "value", "words"),
    [
        (("segments", 1, "pause_before"), 1e7, "pause_before is 10000000.0, not from 0 to 60"),
        (("segments", 1, "pause_before"), -0.5, "pause_before is -0.5"),
        (("segments", 1, "pause_before"), "0.3", "pause_before is not a number"),
        (("pause",), 61, "pause is 61, not from 0 to 60"),
        (("settings", "temperature"), "hot", "settings: temperature is not a number"),
        (("segments", 0, "takes", 0, "settings", "temperature"), "hot", "temperature is not"),
        (("segments", 0, "takes", 0, "settings", "top_k"), 0, "top_k is 0, not from 1 to 100"),
        (("segments", 0, "takes", 0, "settings", "speed"), 2.5, "speed is not a whole number"),
        (("segments", 0, "takes", 0, "settings", "colour"), 1, "unknown key 'colour'"),
        (("segments", 0, "takes", 0, "seed"), -1, "seed is -1"),
        (("segments", 0, "takes", 0, "seed"), 2**31, "seed is 2147483648"),
        (("segments", 0, "takes", 0, "id"), 0, "id is 0"),
        (("segments", 0, "takes", 0, "audio"), "../../elsewhere.wav", "not a file in takes/"),
        (("segments", 0, "takes", 0, "measures", "seconds"), 1e300, "seconds is over 600"),
        (("segments", 0, "takes", 0, "measures", "seconds"), 10**400, "a number is too large"),
        (("segments", 0, "takes", 0, "measures", "spoken"), 10**400, "spoken is over 100000"),
        (("segments", 0, "id"), True, "id is not a whole number"),
        (("segments", 0, "picked"), "yes", "picked is not true or false"),
        (("segments", 0, "text"), "x" * (checked.MAX_TEXT + 1), "longer than 100,000"),
        (("segments", 0, "chosen"), 7, "chooses take 7"),
        (("voices",), [], "voices is not an object"),
        (("format",), 0, "no format number"),
    ],
)
def test_every_value_is_checked_at_load_type_finite_and_range(
    book: Path, capsys: pytest.CaptureFixture[str], path: tuple[Any, ...], value: Any, words: str
) -> None:
    """Not later, where it would fail: a NaN pause in the export, a 'hot' temperature in a
    re-roll after the model has loaded."""
    changed_json(book, path, value)
    with pytest.raises(ProjectError, match="is damaged") as caught:
        store.load(book)
    assert words in str(caught.value), caught.value
    refused(cli(capsys, "project", "export", str(book), str(book.parent / "out.wav")), words)
    assert not (book.parent / "out.wav").exists()


def test_project_new_refuses_what_a_project_does_not_keep_before_the_model_loads(
    tmp_path: Path, home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for option, value, words in (
        ("--temperature", "5", "temperature must be between 0.01 and 2 (got 5)"),
        ("--top-k", "0", "top-K must be between 1 and 100"),
        ("--pause", "1e7", "pause must be between 0 and 60"),
        ("--turn-pause", "nan", "pause must be between 0 and 60 (got nan)"),
    ):
        target = tmp_path / "new.chattts"
        argv = ("project", "new", "你好。", "-o", str(target), option, value, "--device", "cpu")
        refused(cli(capsys, *argv), words)
        assert not target.exists()


def test_what_load_would_refuse_is_never_saved(
    book: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An id past the limit (a split of the segment with the last id): refused before
    project.json is written, so the project still opens."""
    changed_json(book, ("segments", 2, "id"), checked.MAX_ID)
    before = file_hashes(book)
    refused(cli(capsys, "project", "split", str(book), "3", "4"), "cannot be saved as it is")
    assert file_hashes(book) == before
    assert len(store.load(book).segments) == 3


# -- take records: recovered at any width, a bad one left out with a warning ---------------------
@pytest.mark.parametrize(
    ("record", "words"),
    [
        ('{"segment": 1, "chosen": true, "take": {"id": 1e999}}', "id is not a whole number (inf)"),
        ("[" * 100_000 + "]" * 100_000, "nested too deep"),
        ('{"segment": 1, "chosen": tr', "not JSON"),
        ("\udcff", "UnicodeDecodeError"),
    ],
)
def test_a_stray_record_that_does_not_read_is_left_out_with_a_warning(
    book: Path, capsys: pytest.CaptureFixture[str], record: str, words: str
) -> None:
    stray = book / "takes" / "s00001-t002.json"
    stray.write_bytes(record.encode("utf-8", "surrogateescape"))
    project = store.load(book)
    assert [len(s.takes) for s in project.segments] == [1, 2, 1]
    assert len(project.warnings) == 1 and "takes/s00001-t002.json" in project.warnings[0]
    assert words in project.warnings[0] and "\n" not in project.warnings[0]
    assert project.segments[0].next_take_id() == 3  # a new take never replaces its files
    code, out, err = cli(capsys, "project", "list", str(book))
    assert code == 0 and len(out.splitlines()) == 3
    assert err.splitlines() == [f"warning: {project.warnings[0]}"]
    assert cli(capsys, "project", "export", str(book), str(book.parent / "x.wav"))[0] == 0


def test_a_record_of_another_take_is_left_out_with_a_warning(book: Path) -> None:
    shutil.copy(book / "takes" / "s00002-t001.json", book / "takes" / "s00002-t005.json")
    project = store.load(book)
    assert [t.id for t in project.segments[1].takes] == [1, 2]
    assert "it holds take 1" in project.warnings[0]


def test_records_of_take_ids_past_999_and_segment_ids_past_99999_are_recovered(
    book: Path,
) -> None:
    changed_json(book, ("segments", 2, "id"), 100_000)
    unsaved_take(book, 1, 1000)
    unsaved_take(book, 3, 2)
    assert (book / "takes" / "s00001-t1000.json").is_file()
    assert (book / "takes" / "s100000-t002.json").is_file()
    shutil.copy(book / "takes" / "s00001-t1000.json", book / "takes" / "s00001-t01000.json")
    project = store.load(book)
    assert [t.id for t in project.segments[0].takes] == [1, 1000]
    assert [t.id for t in project.segments[2].takes] == [1, 2]
    assert project.segments[0].chosen == 1000 and project.segments[2].chosen == 2
    assert project.warnings == []  # a name the writer never gives is no record of ours
    assert len(take_files.take_audio(book, project.segments[0].takes[1])) == 2400


# -- exports, and take audio that is not what its record says -----------------------------------
def test_an_export_into_the_project_folder_is_refused(
    book: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = file_hashes(book)
    inside = tmp_path / "inside"
    inside.symlink_to(book / "takes")
    for argv in (
        (str(book / "takes" / "s00001-t001.wav"),),
        (str(inside / "mix.wav"),),
        (str(book / "parts"), "--per-segment"),
        (str(tmp_path / "ok.wav"), "--subtitles", str(book / "book.srt")),
    ):
        refused(cli(capsys, "project", "export", str(book), *argv), "is inside the project")
    assert file_hashes(book) == before and not (tmp_path / "ok.wav").exists()
    assert cli(capsys, "project", "export", str(book), str(tmp_path / "ok.wav"))[0] == 0


def test_a_take_cut_short_is_refused_not_exported_short(
    book: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    wav = book / "takes" / "s00002-t002.wav"
    whole = wav.read_bytes()
    wav.write_bytes(whole[: len(whole) * 8 // 10])  # a copy that stopped
    out = tmp_path / "out.wav"
    refused(cli(capsys, "project", "export", str(book), str(out)), "cut short")
    assert not out.exists()
    audio, _ = sf.read(io_bytes(whole), dtype="float32")
    sf.write(str(wav), audio[:-100], 24000, subtype="FLOAT")  # whole, but not this take's length
    refused(cli(capsys, "project", "export", str(book), str(out)), "samples where its record says")
    wav.write_bytes(b"RIFF\x00\x00\x00\x00WAVEjunk")
    refused(cli(capsys, "project", "export", str(book), str(out)), "no audio data")
    wav.write_bytes(whole)
    assert cli(capsys, "project", "export", str(book), str(out))[0] == 0


def io_bytes(data: bytes) -> Any:
    import io

    return io.BytesIO(data)


def test_a_record_or_take_that_is_not_a_plain_file_never_blocks(
    book: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    os.mkfifo(book / "takes" / "s00001-t002.json")
    wav = book / "takes" / "s00003-t001.wav"
    wav.unlink()
    os.mkfifo(wav)
    with no_longer_than(20):
        project = store.load(book)
        assert "not a plain file" in project.warnings[0]
        refused(
            cli(capsys, "project", "export", str(book), str(book.parent / "x.wav")), "not a plain"
        )


# -- links out of the folder ---------------------------------------------------------------------
def test_a_takes_folder_leading_outside_is_refused_and_nothing_there_is_touched(
    book: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    outside = tmp_path / "elsewhere"
    shutil.move(book / "takes", outside)
    (outside / ".s00001-t009.abc.part.wav").write_bytes(b"someone's file")
    (book / "takes").symlink_to(outside)
    before = file_hashes(outside)
    for argv in (("list", str(book)), ("lock", str(book), "1"), ("pick", str(book), "2", "1")):
        refused(cli(capsys, "project", *argv), "takes/ leads outside the project")
    with pytest.raises(ProjectError, match="leads outside"), writer.opened(book):
        pass
    assert file_hashes(outside) == before


def test_a_take_file_leading_outside_is_refused(
    book: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    wav = book / "takes" / "s00002-t002.wav"
    copy = tmp_path / "copy.wav"
    shutil.move(wav, copy)
    wav.symlink_to(copy)
    refused(cli(capsys, "project", "export", str(book), str(tmp_path / "x.wav")), "leads outside")


# -- the lock, read-only and full disks ---------------------------------------------------------
def test_a_lock_that_is_a_link_is_one_sentence_and_its_target_untouched(
    book: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lock = book / store.LOCK
    victim = tmp_path / "precious.txt"
    victim.write_text("kept", encoding="utf-8")
    for target in (tmp_path / "gone" / "x", victim):
        lock.unlink()
        lock.symlink_to(target)
        refused(cli(capsys, "project", "lock", str(book), "1"), "is a link, not a lock file")
    assert victim.read_text(encoding="utf-8") == "kept"
    assert not store.load(book).segments[0].locked


def test_a_lock_that_cannot_be_made_is_one_sentence(
    book: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A read-only folder, injected (root ignores permission bits; the tmpfs test below
    makes a real one)."""

    def read_only(self: Any, *args: Any, **kwargs: Any) -> None:
        raise OSError(errno.EROFS, "Read-only file system", str(self.lock_file))

    monkeypatch.setattr(file_lock.FileLock, "acquire", read_only)
    for argv in (("lock", "1"), ("pick", "2", "1"), ("split", "1", "3"), ("merge", "1")):
        refused(cli(capsys, "project", argv[0], str(book), *argv[1:]), "file system is read-only")
    with pytest.raises(ProjectError, match="read-only"), writer.opened(book):
        pass


def test_a_read_only_disk_is_one_sentence_for_writers_and_readers_still_work(
    tmpfs: Path, tmp_path: Path, home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    book = small_project(tmpfs / "book")
    (book / store.LOCK).unlink()  # as a copy from elsewhere brings no lock file
    before = file_hashes(book)
    remount(tmpfs, "ro")
    for argv in (("lock", "1"), ("pick", "2", "1"), ("merge", "1")):
        refused(cli(capsys, "project", argv[0], str(book), *argv[1:]), "read-only")
    assert cli(capsys, "project", "list", str(book))[0] == 0
    assert cli(capsys, "project", "export", str(book), str(tmp_path / "x.wav"))[0] == 0
    assert file_hashes(book) == before


def _full_disk_take(book: Path) -> ProjectError:
    """A new take of segment 1 written as a take job writes it, on a disk that refuses it."""
    with writer.opened(book) as handle:
        segment = handle.project.segments[0]
        with pytest.raises(ProjectError) as caught:
            handle.write_take_audio(segment, 2, speech(2.0, 9))
    return caught.value


def test_a_take_that_cannot_be_written_is_one_sentence_and_keeps_every_earlier_take(
    book: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Injected: soundfile's own error (a RuntimeError), and the OS's full disk."""
    before = file_hashes(book)

    def libsndfile_fails(*args: Any, **kwargs: Any) -> None:
        raise sf.LibsndfileError(0, "Error writing: ")

    with monkeypatch.context() as patched:
        patched.setattr(sf, "write", libsndfile_fails)
        said = str(_full_disk_take(book))
    assert said.startswith("Cannot write ") and "\n" not in said

    def disk_full(path: Path, *args: Any) -> None:
        raise OSError(errno.ENOSPC, "No space left on device", str(path))

    monkeypatch.setattr(writer, "write_with", disk_full)
    assert "the disk is full" in str(_full_disk_take(book))
    assert file_hashes(book) == before


def test_a_full_disk_is_one_sentence_and_loses_nothing(
    tmpfs: Path, home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    book = small_project(tmpfs / "book")
    filler = tmpfs / "filler"
    with contextlib.suppress(OSError), open(filler, "wb", buffering=0) as f:
        while True:
            f.write(b"\0" * 4096)
    before = file_hashes(book)
    said = str(_full_disk_take(book))
    assert "the disk is full" in said and "s00001-t002.wav" in said
    refused(cli(capsys, "project", "lock", str(book), "1"), "the disk is full")
    assert file_hashes(book) == before  # no temp file left, every take as it was
    project = store.load(book)
    assert all(len(take_files.take_audio(book, t)) for s in project.segments for t in s.takes)
    filler.unlink()
    assert cli(capsys, "project", "lock", str(book), "1")[0] == 0


def test_project_files_are_written_as_a_plain_open_makes_them(book: Path, tmp_path: Path) -> None:
    """Under umask 022: 0644 (not mkstemp's 0600), so another account can read a shared one."""
    old = os.umask(0o022)
    try:
        fresh = small_project(tmp_path / "fresh")
    finally:
        os.umask(old)
    modes = {p.name: oct(p.stat().st_mode & 0o777) for p in fresh.rglob("*") if p.is_file()}
    assert set(modes.values()) == {"0o644"}, modes
    assert {"project.json", "s00002-t002.wav", "s00002-t002.json"} <= set(modes)


def test_a_take_made_here_reads_back_exactly(book: Path) -> None:
    """The length check never refuses a take this version wrote."""
    project = store.load(book)
    for segment in project.segments:
        for take in segment.takes:
            audio = take_files.take_audio(book, take)
            assert len(audio) == take_files.take_frames(take) and audio.dtype == np.float32
