"""The MCP server's path rules without a server: every name an agent gives lands inside the
output folder or is one sentence, links leading out included; books are read only from the
folders the user allowed; a cancelled job's thread is stopped and waited for."""

import threading
import time
from pathlib import Path

import anyio
import pytest

from chattts_studio.core.engine.cancel import CancelToken
from chattts_studio.core.mcp.arguments import Arguments, BadArgument
from chattts_studio.core.mcp.folders import BookFolders, OutputFolder, PathRefused
from chattts_studio.core.mcp.slot import in_thread


@pytest.mark.parametrize(
    ("name", "said"),
    [
        ("../out.wav", "leads out of the output folder"),
        ("a/../../out.wav", "leads out of the output folder"),
        ("/etc/out.wav", "absolute path"),
        ("\\\\server\\share\\out.wav", "absolute path"),
        ("C:out.wav", "absolute path"),
        ("CON.wav", "reserves for a device"),
        ("talks/nul", "reserves for a device"),
        ("com1.flac", "reserves for a device"),
        ("a<b.wav", "characters Windows refuses"),
        ("trailing./x.wav", "dot or a space"),
        (".segments/x.flac", "hidden"),
        ("", "empty"),
        ("/./", "absolute path"),
        ("./", "names no file or folder"),
        ("a/b/c/d/e.wav", "folders deep"),
    ],
)
def test_a_name_that_would_leave_or_break_the_folder_is_one_sentence(
    tmp_path: Path, name: str, said: str
) -> None:
    output = OutputFolder.open(tmp_path / "out")
    with pytest.raises(PathRefused) as refused:
        output.place(name, "speech.wav")
    assert said in str(refused.value) and "\n" not in str(refused.value)
    assert list((tmp_path / "out").iterdir()) == []  # no folder made for a refused name


def test_names_inside_land_inside_and_a_link_out_is_refused(tmp_path: Path) -> None:
    output = OutputFolder.open(tmp_path / "out")
    assert output.place("talks/intro.wav", "x") == output.root / "talks" / "intro.wav"
    assert output.place("a\\b.wav", "x") == output.root / "a" / "b.wav"  # Windows' separator
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (output.root / "escape").symlink_to(outside)
    (output.root / "out.wav").symlink_to(outside / "taken.wav")
    (output.root / "inner").symlink_to(output.root / "talks")
    for name in ("escape/x.wav", "out.wav", "escape/deep/x.wav"):
        with pytest.raises(PathRefused, match="through a link"):
            output.place(name, "x")
    assert list(outside.iterdir()) == []
    assert output.place("inner/y.wav", "x") == output.root / "inner" / "y.wav"  # a link inside


def test_the_default_output_folder_is_in_the_data_folder(private_home: Path) -> None:
    assert OutputFolder.open().root == (private_home / "mcp").resolve()


def test_books_are_read_only_inside_the_allowed_folders(tmp_path: Path) -> None:
    shelf = tmp_path / "shelf"
    shelf.mkdir()
    (shelf / "tale.txt").write_text("Once.", encoding="utf-8")
    (shelf / "notes.json").write_text("{}", encoding="utf-8")
    secret = tmp_path / "secret.txt"
    secret.write_text("No.", encoding="utf-8")
    (shelf / "link.txt").symlink_to(secret)
    with pytest.raises(PathRefused, match="--books"):
        BookFolders.open([]).book("tale.txt")
    books = BookFolders.open([shelf])
    assert books.book("tale.txt") == (shelf / "tale.txt").resolve()
    assert books.book(str(shelf / "tale.txt")) == (shelf / "tale.txt").resolve()
    for name in ("../secret.txt", str(secret), "link.txt", "missing.txt"):
        with pytest.raises(PathRefused, match="inside the allowed books folder"):
            books.book(name)
    with pytest.raises(PathRefused, match="not a book"):
        books.book("notes.json")


def test_arguments_are_checked_one_sentence_each() -> None:
    args = Arguments("synthesize", {"speed": -1, "top_p": float("nan")}, ["top_p", "speed"])
    with pytest.raises(BadArgument, match="from 0 to 9"):
        args.whole("speed", 0, 9, 5)
    with pytest.raises(BadArgument, match="number from"):
        args.number("top_p", 0.01, 1, 0.7)  # NaN is no number in range
    with pytest.raises(BadArgument, match="no argument 'top_p'"):
        Arguments("synthesize", {"top_p": 0.5}, ["speed"])
    assert (
        Arguments("t", {"speed": 4.0, "top_p": True}, ["speed", "top_p"]).whole("speed", 0, 9, 5)
        == 4
    )
    with pytest.raises(BadArgument, match="number from"):
        Arguments("t", {"top_p": True}, ["top_p"]).number("top_p", 0.01, 1, 0.7)


def test_a_cancelled_job_is_stopped_and_waited_for() -> None:
    """The call's cancel sets the job's token, and the call ends only once the thread has."""
    token = CancelToken()
    ended = threading.Event()

    def work() -> str:
        while not token.cancelled:
            time.sleep(0.01)
        time.sleep(0.2)  # the job's own clean-up after it saw the cancel
        ended.set()
        return "stopped"

    async def body() -> None:
        with anyio.move_on_after(0.2):
            await in_thread(work, token)
        assert token.cancelled and ended.is_set()

    anyio.run(body)


def test_a_wrong_option_is_one_line_and_exit_2_before_serving(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from conftest import run_cli

    taken = tmp_path / "a-file"
    taken.write_text("", encoding="utf-8")
    code, out, err = run_cli(capsys, "mcp", "--output-dir", str(taken), "--device", "cpu")
    assert (code, out) == (2, "")
    assert err.strip().splitlines() == [
        f"error: The output folder {taken} is a file; give a folder."
    ]
    code, _, err = run_cli(capsys, "mcp", "--books", str(taken), "--output-dir", str(tmp_path))
    assert code == 2 and "is not a folder" in err
