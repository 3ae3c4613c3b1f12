"""Every platform branch in core (core/platforms.py), each taken on a simulated platform: the
platform injected into the function, or platforms.OS_NAME switched while an atomic write runs
against stand-ins for what Windows refuses (a flush through a read-only handle, opening a
folder)."""

import errno
import os
import stat
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from windows_rules import (
    ACCESS_DENIED,
    ERROR_ACCESS_DENIED,
    ERROR_SHARING_VIOLATION,
    IN_USE,
    WindowsRules,
)

from chattts_studio.core import platforms
from chattts_studio.core.atomic import write_text_atomic
from chattts_studio.core.voices.speakers import SpeakerLibrary


def in_use_error() -> PermissionError:
    """What Windows raises for a file another program holds open (winerror 32)."""
    exc = PermissionError(errno.EACCES, IN_USE)
    exc.winerror = ERROR_SHARING_VIOLATION  # type: ignore[attr-defined]
    return exc


def test_each_branch_on_each_platform(tmp_path: Path) -> None:
    assert platforms.is_windows("nt") and not platforms.is_windows("posix")
    # The folder of a rename is flushed on POSIX only: Windows cannot open a folder.
    assert platforms.can_fsync_folder("posix") and not platforms.can_fsync_folder("nt")
    # A replace refused as in use is tried again on Windows only.
    assert platforms.replace_retry_delays("posix") == ()
    assert len(platforms.replace_retry_delays("nt")) >= 3
    # The longest name: asked of the file system on POSIX, Windows' 255 there.
    assert platforms.name_max(tmp_path, "nt") == platforms.NAME_MAX
    assert platforms.name_max(tmp_path, "posix") == os.pathconf(tmp_path, "PC_NAME_MAX")
    # Peak memory: bytes on macOS, KiB on Linux.
    assert platforms.max_rss_bytes(1000, "darwin") == 1000
    assert platforms.max_rss_bytes(1000, "linux") == 1024 * 1000
    # The flush handle is writable everywhere (Windows refuses a read-only one).
    assert platforms.FSYNC_OPEN_FLAGS & os.O_ACCMODE == os.O_RDWR


def test_the_current_platform_is_read_when_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    assert os.name == platforms.OS_NAME and sys.platform == platforms.PLATFORM
    monkeypatch.setattr(platforms, "OS_NAME", "nt")
    assert platforms.is_windows() and not platforms.can_fsync_folder()
    assert platforms.replace_retry_delays() == platforms.WINDOWS_REPLACE_RETRY_S
    monkeypatch.setattr(platforms, "OS_NAME", "posix")
    assert not platforms.is_windows() and platforms.can_fsync_folder()
    monkeypatch.setattr(platforms, "PLATFORM", "darwin")
    assert platforms.max_rss_bytes(5) == 5


class Spy:
    """os.open and os.fsync as Windows behaves: a folder cannot be opened, and a handle without
    write access cannot be flushed (EBADF). Records what was flushed and opened."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.opened: list[tuple[str, int]] = []
        self.flushed: list[int] = []
        real_open, real_fsync = os.open, os.fsync

        def fake_open(path: object, flags: int, *args: object, **kw: object) -> int:
            # filelock's POSIX lock probes its folder; on Windows its own lock runs instead.
            if "filelock" not in Path(sys._getframe(1).f_code.co_filename).parts:
                self.opened.append((os.fspath(path), flags))  # type: ignore[arg-type]
                if Path(os.fspath(path)).is_dir():  # type: ignore[arg-type]
                    raise PermissionError(errno.EACCES, "Access is denied")
            return real_open(path, flags, *args, **kw)  # type: ignore[arg-type]

        def fake_fsync(fd: int) -> None:
            os.write(fd, b"")  # EBADF for a handle without write access, as Windows' flush
            self.flushed.append(fd)
            real_fsync(fd)

        monkeypatch.setattr(os, "open", fake_open)
        monkeypatch.setattr(os, "fsync", fake_fsync)


@pytest.fixture
def windows(monkeypatch: pytest.MonkeyPatch) -> Iterator[Spy]:
    spy = Spy(monkeypatch)
    monkeypatch.setattr(platforms, "OS_NAME", "nt")
    yield spy
    monkeypatch.undo()


def test_atomic_writes_on_windows_flush_a_writable_handle_and_never_open_a_folder(
    tmp_path: Path, windows: Spy
) -> None:
    target = tmp_path / "notes.txt"
    write_text_atomic(target, "first")
    write_text_atomic(target, "second")  # over an existing file too
    library = SpeakerLibrary(tmp_path / "speakers.json")
    library.add("Alice", "豆" * 40)  # a library save is an atomic write under its lock
    assert target.read_text(encoding="utf-8") == "second"
    assert SpeakerLibrary(library.path).names() == ["Alice"]
    assert len(windows.flushed) == 3
    assert not [path for path, _flags in windows.opened if Path(path).is_dir()]
    assert not list(tmp_path.glob(".*part*"))


def test_atomic_writes_on_posix_also_flush_the_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    flushed: list[int] = []
    real_fsync = os.fsync

    def spy(fd: int) -> None:
        flushed.append(os.fstat(fd).st_mode)
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", spy)
    monkeypatch.setattr(platforms, "OS_NAME", "posix")
    write_text_atomic(tmp_path / "notes.txt", "text")
    monkeypatch.undo()
    assert [stat.S_ISREG(m) for m in flushed] == [True, False]  # the file, then its folder


def test_a_replace_refused_as_in_use_is_tried_again_on_windows_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "speakers.json"
    target.write_text("old", encoding="utf-8")
    real_replace = os.replace
    refusals = [2]

    def replace(src: object, dst: object) -> None:
        if refusals[0]:  # a reader holds the target for a moment
            refusals[0] -= 1
            raise in_use_error()
        real_replace(src, dst)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "replace", replace)
    monkeypatch.setattr(platforms, "OS_NAME", "posix")
    with pytest.raises(PermissionError):
        write_text_atomic(target, "new")
    assert target.read_text(encoding="utf-8") == "old"

    refusals[0] = 2
    monkeypatch.setattr(platforms, "OS_NAME", "nt")
    write_text_atomic(target, "new")
    monkeypatch.undo()
    assert target.read_text(encoding="utf-8") == "new"
    assert not list(tmp_path.glob(".*part*"))


# -- Windows' path limit and files in use --------------------------------------------------------


def test_the_path_limit_and_the_in_use_refusal_on_each_platform() -> None:
    # Windows' MAX_PATH (260, its closing NUL included); POSIX says ENAMETOOLONG itself.
    assert platforms.max_path("nt") == 259 and platforms.max_path("posix") is None
    # A refused replace is "in use" only with Windows' sharing codes (32, 33), and "access
    # denied" with its code 5 (or none, on Windows); on POSIX it is plain permissions.
    refused = PermissionError(errno.EACCES, "Permission denied")
    assert not platforms.is_file_in_use(refused)
    assert platforms.is_access_denied(refused, "nt")
    assert not platforms.is_access_denied(refused, "posix")
    for code, in_use in ((32, True), (33, True), (5, False)):
        refused.winerror = code  # type: ignore[attr-defined]
        assert platforms.is_file_in_use(refused) is in_use
        assert platforms.is_access_denied(refused, "posix") is not in_use
        assert platforms.is_access_denied(refused, "nt") is not in_use
    assert not platforms.is_file_in_use(FileNotFoundError(errno.ENOENT, "gone"))
    assert not platforms.is_access_denied(FileNotFoundError(errno.ENOENT, "gone"), "nt")
    # Modes are ours to set on POSIX only (Windows: ACLs and a read-only flag).
    assert platforms.has_file_modes("posix") and not platforms.has_file_modes("nt")


def deep_target(root: Path, length: int) -> Path:
    """A file path of exactly `length` characters under `root`, its folders made."""
    folder = root
    while len(str(folder)) + 120 < length:
        folder = folder / ("d" * 100)
    folder.mkdir(parents=True, exist_ok=True)
    name = "n" * (length - len(str(folder)) - 1 - len(".wav")) + ".wav"
    target = folder / name
    assert len(str(target)) == length
    return target


def test_a_path_longer_than_windows_allows_is_refused_there_with_its_length(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from chattts_studio.core.atomic import target_problem

    fits, over = deep_target(tmp_path, 259), deep_target(tmp_path, 260)
    monkeypatch.setattr(platforms, "OS_NAME", "nt")
    assert target_problem(fits) is None
    assert target_problem(over) == (
        f"The path {over} is 260 characters long; Windows allows 259. Choose a shorter folder "
        "or file name."
    )
    # Windows counts UTF-16 code units: a character beyond the BMP is two.
    emoji = fits.with_name(fits.name[:-5] + "😀.wav")
    assert len(str(emoji)) == 259 and "260 characters long" in str(target_problem(emoji))
    monkeypatch.setattr(platforms, "OS_NAME", "posix")
    assert target_problem(over) is None  # POSIX allows it


def test_a_write_near_windows_path_limit_keeps_its_temp_file_within_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The temp file beside the target may have a longer name than the target: on Windows
    its name is cut to fit, and where nothing fits the write says the name is too long."""
    import numpy as np

    from chattts_studio.core.audio.output import save
    from chattts_studio.core.errors import AudioError

    made: list[str] = []
    real_open = os.open

    def spy(path: object, flags: int, *args: object, **kw: object) -> int:
        if flags & os.O_EXCL:
            made.append(os.fspath(path))  # type: ignore[arg-type]
        return real_open(path, flags, *args, **kw)  # type: ignore[arg-type]

    target = deep_target(tmp_path, 259)
    folder = tmp_path / "short"
    folder = folder / ("d" * (250 - len(str(folder)) - 1))
    folder.mkdir(parents=True)
    short = folder / "a.wav"  # 256 characters: it fits, a temp name beside it does not
    monkeypatch.setattr(os, "open", spy)
    monkeypatch.setattr(platforms, "OS_NAME", "nt")
    write_text_atomic(target, "fits")
    with pytest.raises(AudioError) as caught:
        save(short, np.zeros(2400, dtype=np.float32))
    monkeypatch.undo()
    assert target.read_text(encoding="utf-8") == "fits"
    temps = [path for path in made if ".part" in path]  # (not output.py's writability probe)
    assert temps and all(len(path) <= 259 for path in temps), temps
    assert str(caught.value) == (
        f"Cannot save {short}: the file name is too long (File name too long). Nothing was changed."
    )
    assert not short.exists()


def test_a_path_the_system_finds_too_long_is_never_a_missing_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ENAMETOOLONG says the path is too long, whatever Path.is_dir makes of it (from Python
    3.13 it says False for any error, which read as "the folder does not exist")."""
    from chattts_studio.core.atomic import target_problem

    monkeypatch.setattr(Path, "is_dir", lambda self: False)  # as 3.13 answers here
    too_long_name = tmp_path / ("d" * 300) / "x.wav"  # one folder name over NAME_MAX
    too_long_path = tmp_path.joinpath(*["d" * 200] * 25) / "x.wav"  # over PATH_MAX
    for target in (too_long_name, too_long_path):
        said = target_problem(target)
        assert said is not None and "does not exist" not in said, said
        assert said.startswith(f"Cannot write to {target}: the file name is too long"), said
    assert target_problem(tmp_path / "missing" / "x.wav") == (
        f"The folder {tmp_path / 'missing'} does not exist."
    )


@pytest.fixture
def fast_windows_retries(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(platforms, "OS_NAME", "nt")
    monkeypatch.setattr(platforms, "WINDOWS_REPLACE_RETRY_S", (0.0, 0.0, 0.0))
    monkeypatch.setattr(platforms, "can_fsync_folder", lambda os_name=None: False)


def test_a_replace_refused_until_the_retries_run_out_names_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fast_windows_retries: None
) -> None:
    from chattts_studio.core.atomic import FileInUse, replace_file

    tries: list[str] = []

    def replace(src: object, dst: object) -> None:
        tries.append(str(dst))
        raise in_use_error()

    target = tmp_path / "speech.wav"
    target.write_bytes(b"old")
    monkeypatch.setattr(os, "replace", replace)
    with pytest.raises(FileInUse) as caught:
        write_text_atomic(target, "new")
    monkeypatch.undo()
    assert len(tries) == 4  # the first try and one after each of the three waits
    assert str(caught.value) == (
        f"{target} is open in another program; close it there and try again."
    )
    assert isinstance(caught.value, PermissionError) and caught.value.filename == str(target)
    assert target.read_bytes() == b"old" and not list(tmp_path.glob(".*part*"))
    # A folder (a model's) is said as a folder.
    monkeypatch.setattr(platforms, "OS_NAME", "nt")
    monkeypatch.setattr(platforms, "WINDOWS_REPLACE_RETRY_S", ())
    monkeypatch.setattr(os, "replace", replace)
    with pytest.raises(FileInUse, match=r"^A file in .*model is in use by another program"):
        replace_file(tmp_path, tmp_path.with_name("model"))


@pytest.mark.parametrize("winerror", [ERROR_ACCESS_DENIED, None])
def test_access_denied_is_said_at_once_apart_from_a_file_in_use(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fast_windows_retries: None, winerror: int
) -> None:
    """Windows' access denied (winerror 5, or a PermissionError with no code there): a
    read-only file, an access list, a mapping. No retry, its own sentence, nothing changed."""
    from chattts_studio.core.atomic import AccessDenied, os_error_sentence

    tries: list[str] = []

    def replace(src: object, dst: object) -> None:
        tries.append(str(dst))
        exc = PermissionError(errno.EACCES, ACCESS_DENIED)
        if winerror is not None:
            exc.winerror = winerror  # type: ignore[attr-defined]
        raise exc

    target = tmp_path / "speech.wav"
    target.write_bytes(b"old")
    monkeypatch.setattr(os, "replace", replace)
    with pytest.raises(AccessDenied) as caught:
        write_text_atomic(target, "new")
    monkeypatch.undo()
    assert len(tries) == 1
    said = str(caught.value)
    assert said.startswith(f"Windows denied access to {target}: it is read-only") and (
        "another program" not in said and said.count(". ") == 0
    )
    assert isinstance(caught.value, PermissionError) and caught.value.filename == str(target)
    assert target.read_bytes() == b"old" and not list(tmp_path.glob(".*part*"))
    inside = os_error_sentence("save", target, caught.value)
    assert inside == (
        f"Cannot save {target}: Windows denied access to it (read-only, not your account's to "
        "change, or loaded by a program). Nothing was changed."
    )


def test_files_open_elsewhere_are_one_sentence_through_every_writer(
    tmp_path: Path, windows_rules: WindowsRules
) -> None:
    """Under Windows' rules (tests/windows_rules.py): an audio file or a speaker export the
    user still has open is named in one sentence, and stays as it was."""
    import numpy as np

    from chattts_studio.core.audio.output import save
    from chattts_studio.core.errors import AudioError, SpeakerError

    wav, exported = tmp_path / "take.wav", tmp_path / "speakers.json"
    save(wav, np.zeros(2400, dtype=np.float32))
    library = SpeakerLibrary(tmp_path / "lib" / "speakers.json")
    library.add("Alice", "豆" * 40)
    library.export(exported)
    before = {p: p.read_bytes() for p in (wav, exported)}
    with open(wav, "rb"), open(exported, "rb"):
        with pytest.raises(AudioError) as audio:
            save(wav, np.ones(2400, dtype=np.float32) / 2)
        with pytest.raises(SpeakerError) as speakers:
            library.export(exported)
    in_use = "it is open in another program; close it there and try again. Nothing was changed."
    assert str(audio.value) == f"Cannot save {wav}: {in_use}"
    assert str(speakers.value).endswith(f"{exported}: {in_use}")
    assert {p: p.read_bytes() for p in (wav, exported)} == before
    assert len(windows_rules.refused) == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["lib", "speakers.json", "take.wav"]


# -- written files follow the umask -------------------------------------------------------------


@pytest.fixture(params=[0o022, 0o077])
def umask(request: pytest.FixtureRequest) -> Iterator[int]:
    old = os.umask(request.param)
    try:
        yield request.param
    finally:
        os.umask(old)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_every_writer_gives_the_mode_a_plain_open_gives(
    tmp_path: Path, umask: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A new file gets 0o666 less the umask (0o644 under 022, 0o600 under 077) and a new
    folder 0o777 less it, as open() and mkdir() give them; a file written over keeps its own
    mode. (tempfile's mkstemp and mkdtemp make 0o600 and 0o700 whatever the umask.)"""
    import numpy as np

    from chattts_studio.core.atomic import write_with
    from chattts_studio.core.audio.output import save
    from chattts_studio.core.results.history import HistoryStore
    from chattts_studio.core.results.result_store import AUDIO, ENVELOPE, META
    from chattts_studio.core.weights import hashcache

    monkeypatch.setenv("CHATTTS_STUDIO_HOME", str(tmp_path / "home"))
    file_mode, folder_mode = 0o666 & ~umask, 0o777 & ~umask
    written = [tmp_path / "notes.txt", tmp_path / "data.bin", tmp_path / "take.wav"]
    write_text_atomic(written[0], "text")
    write_with(written[1], lambda tmp: tmp.write_bytes(b"\0"))
    save(written[2], np.zeros(2400, dtype=np.float32))
    library = SpeakerLibrary(tmp_path / "speakers.json")
    library.add("Alice", "豆" * 40)
    written += [library.path, tmp_path / "export.json"]
    library.export(written[-1])
    store = HistoryStore(tmp_path / "history").new()
    store.append(np.zeros(100, dtype=np.float32))
    store.finish({})
    written += [store.folder / name for name in (AUDIO, META, ENVELOPE)]
    hashcache.remember({written[0]: hashcache.Hashed("0" * 64, hashcache.stamp(written[0].stat()))})
    written.append(hashcache._cache_file())
    assert {str(p): oct(mode(p)) for p in written} == {str(p): oct(file_mode) for p in written}
    assert oct(mode(store.folder)) == oct(folder_mode)
    # Written over, a file keeps the mode it has (as writing it in place would).
    os.chmod(written[0], 0o640)
    os.chmod(store.folder / META, 0o604)
    write_text_atomic(written[0], "again")
    store.finish({"again": True})
    assert mode(written[0]) == 0o640 and mode(store.folder / META) == 0o604
    assert mode(store.folder / ENVELOPE) == file_mode
