"""`chattts-studio-cli mcp` driven as an assistant drives it: the real server in a child process
over stdio, through the MCP SDK's own client, on the tiny demo weights. Its tools, a synthesis
(file, audio content, the demo note), a render's progress and its cancel, two calls at once, a
client that leaves mid-render, and every bad input: one sentence each, the server still
serving, nothing written outside its folder and nothing left half-written."""

import base64
import contextlib
import json
import os
import re
import signal
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import numpy as np
import psutil
import soundfile as sf
from mcp import Client, MCPError, StdioServerParameters, types
from mcp.client.stdio import stdio_client

from chattts_studio.core.mcp.replies import DEMO_NOTE

SERVER = ["-m", "chattts_studio.core.cli.main", "mcp", "--device", "cpu", "--engine", "torch"]
# Four chapters of one short sentence each: four segments, each its own progress step.
BOOK = "\n\n".join(f"Chapter {n}\nHi, {n}." for n in ("One", "Two", "Three", "Four"))
NO_REFINE = {"refine_text": False}
CALL_SECONDS = 240  # a call that takes longer is a hang


def child_env(home: Path) -> dict[str, str]:
    """What the child needs of this process's environment (the SDK passes on only a few
    variables): the test's data folder, UTF-8 streams, no hub, the worker's thread share."""
    env = {"CHATTTS_STUDIO_HOME": str(home), "PYTHONIOENCODING": "utf-8", "HF_HUB_OFFLINE": "1"}
    for name in ("OMP_NUM_THREADS", "PYTHONPATH"):
        if name in os.environ:
            env[name] = os.environ[name]
    return env


@asynccontextmanager
async def connected(
    home: Path, output: Path, *more: str, mode: str = "auto", log: Path | None = None
) -> AsyncIterator[Client]:
    """A client of a fresh server writing in `output`; its stderr (the server's log) to `log`."""
    params = StdioServerParameters(
        command=sys.executable,
        args=[*SERVER, "--output-dir", str(output), *more],
        env=child_env(home),
        cwd=str(home),
        encoding="utf-8",  # the protocol's, whatever the locale
    )
    with open(log or home / "server.log", "a", encoding="utf-8") as errlog:
        async with Client(stdio_client(params, errlog=errlog), mode=mode) as client:
            yield client


def sentence(result: types.CallToolResult) -> str:
    """An error result's text, checked to be one sentence (no traceback, no line break)."""
    assert result.is_error, result
    (block,) = result.content
    assert isinstance(block, types.TextContent)
    text = block.text
    assert text.endswith(".") and "\n" not in text and "Traceback" not in text, text
    assert not re.search(r"[.!?] [A-Z]", text), f"more than one sentence: {text}"
    return text


def facts(result: types.CallToolResult) -> dict[str, Any]:
    assert not result.is_error, result.content
    assert isinstance(result.structured_content, dict)
    text = result.content[1]
    assert (
        isinstance(text, types.TextContent) and json.loads(text.text) == result.structured_content
    )
    return result.structured_content


def half_written(folder: Path) -> list[Path]:
    """Temp files of atomic writes left behind (.NAME.xxxx.part.EXT)."""
    return [p for p in folder.rglob("*") if ".part" in p.name]


def test_lists_its_tools_and_synthesizes_with_the_demo_note(
    private_home: Path, tmp_path: Path, engine: Any
) -> None:
    """On the handshake-era protocol (Claude Desktop's): the tools and their schemas, the
    model's status, a library speaker with its preview clip, and a synthesis whose file,
    duration and inline audio agree, every result with audio saying the weights are demo."""
    from chattts_studio.core.voices.speakers import SpeakerLibrary

    previews = private_home / "speaker-previews"
    previews.mkdir()
    sf.write(previews / "Ann.flac", np.zeros(2400, np.float32), 24000)
    SpeakerLibrary().add(
        "Ann", engine.sample_speaker(5), seed=5, preview="speaker-previews/Ann.flac"
    )
    output = tmp_path / "out"

    async def body() -> None:
        async with connected(private_home, output, mode="legacy") as client:
            tools = {tool.name: tool for tool in (await client.list_tools()).tools}
            assert set(tools) == {"synthesize", "render_book", "list_speakers", "model_status"}
            speak = tools["synthesize"].input_schema
            assert speak["required"] == ["text"] and speak["additionalProperties"] is False
            assert (
                speak["properties"]["speed"]["minimum"],
                speak["properties"]["speed"]["maximum"],
            ) == (0, 9)
            assert speak["properties"]["text"]["maxLength"] == 4096  # the speech API's limit
            assert all(tool.description for tool in tools.values())
            # What a client shows before it asks: the writers write, nothing is destroyed.
            hints = {name: tool.annotations for name, tool in tools.items()}
            assert all(h is not None and h.destructive_hint is False for h in hints.values())
            assert hints["synthesize"].read_only_hint is False  # type: ignore[union-attr]
            assert hints["render_book"].idempotent_hint is True  # type: ignore[union-attr]
            assert hints["list_speakers"].read_only_hint is True  # type: ignore[union-attr]

            speakers = facts(await client.call_tool("list_speakers", {}))
            (ann,) = speakers["speakers"]
            assert (ann["name"], ann["seed"]) == ("Ann", 5)
            assert ann["preview"] == str((previews / "Ann.flac").resolve())

            steps: list[tuple[float, float | None]] = []

            async def progress(done: float, total: float | None, _message: str | None) -> None:
                steps.append((done, total))

            result = await client.call_tool(
                "synthesize",
                {"text": "你好。Hello.", "speaker": "Ann", "file": "问候/hi.flac", **NO_REFINE},
                progress_callback=progress,
            )
            said = facts(result)
            segments = float(said["segments"])
            assert steps and steps[-1] == (segments, segments), steps
            target = output / "问候" / "hi.flac"
            assert said["path"] == str(target.resolve()) and said["speaker"] == "Ann"
            audio, rate = sf.read(target)
            assert rate == 24000 and abs(len(audio) / rate - said["duration_seconds"]) < 0.01
            assert said["demo_weights"] is True and said["audio_included"] is True
            summary = result.content[0]
            assert isinstance(summary, types.TextContent) and DEMO_NOTE in summary.text
            inline = result.content[2]
            assert isinstance(inline, types.AudioContent) and inline.mime_type == "audio/flac"
            assert base64.b64decode(inline.data) == target.read_bytes()

            status = facts(await client.call_tool("model_status", {}))
            assert status["state"] == "ready" and status["demo_weights"] is True
            assert (status["device"], status["output_folder"]) == ("cpu", str(output.resolve()))

            quiet = facts(
                await client.call_tool(
                    "synthesize", {"text": "Again.", "include_audio": False, "seed": 7, **NO_REFINE}
                )
            )
            assert quiet["audio_included"] is False and quiet["speaker"] == "seed 7"
            assert Path(quiet["path"]).parent == output.resolve()
        assert half_written(output) == []

    anyio.run(body)


def test_every_bad_input_is_one_sentence_and_the_server_goes_on(
    private_home: Path, tmp_path: Path
) -> None:
    output, outside, shelf = tmp_path / "out", tmp_path / "outside", tmp_path / "shelf"
    for folder in (output, outside, shelf):
        folder.mkdir()
    (output / "escape").symlink_to(outside)
    (shelf / "tale.md").write_text("# One\n\nA tale.\n", encoding="utf-8")
    (outside / "secret.txt").write_text("Not yours.", encoding="utf-8")
    (shelf / "leak.txt").symlink_to(outside / "secret.txt")
    bad: list[tuple[str, dict[str, Any], str]] = [
        ("synthesize", {"text": ""}, "The text is empty."),
        ("synthesize", {"text": "   \n"}, "The text is empty."),
        ("synthesize", {"text": "x" * 2**20}, "the limit is 4,096"),
        ("render_book", {"text": "好" * 2**20}, "the limit is 100,000"),
        ("synthesize", {"text": "Hi.", "speaker": "Nobody"}, "no speaker named 'Nobody'"),
        ("synthesize", {"text": "Hi.", "speed": -1}, "speed must be a whole number from 0 to 9"),
        ("synthesize", {"text": "Hi.", "speed": "fast"}, "speed must be a whole number"),
        ("synthesize", {"text": "Hi.", "temperature": 9}, "temperature must be a number"),
        ("synthesize", {"text": "Hi.", "file": "../out.wav"}, "leads out of the output folder"),
        ("synthesize", {"text": "Hi.", "file": str(outside / "x.wav")}, "absolute path"),
        ("synthesize", {"text": "Hi.", "file": "escape/x.wav"}, "through a link"),
        ("synthesize", {"text": "Hi.", "file": "NUL.wav"}, "reserves for a device"),
        ("synthesize", {"text": "Hi.", "file": "x.exe"}, "must end in .wav"),
        ("synthesize", {"text": 42}, "The text must be a string."),
        ("synthesize", {"txt": "Hi."}, "no argument 'txt'"),
        ("synthesize", {}, "needs the text"),
        ("render_book", {"text": "Hi.", "book": "tale.md"}, "one of the two"),
        ("render_book", {"book": "../outside/secret.txt"}, "inside the allowed books folder"),
        ("render_book", {"book": str(outside / "secret.txt")}, "inside the allowed books"),
        ("render_book", {"book": "leak.txt"}, "inside the allowed books folder"),
        ("render_book", {"text": "Hi.", "folder": "escape/book"}, "through a link"),
        ("render_book", {"text": "Hi.", "format": "aiff"}, "format must be one of"),
        ("speak", {"text": "Hi."}, "There is no tool 'speak'"),
    ]

    async def body() -> None:
        async with connected(private_home, output, "--books", str(shelf)) as client:
            for tool, arguments, said in bad:
                text = sentence(await client.call_tool(tool, arguments))
                assert said in text, (tool, arguments, text)
            first = facts(
                await client.call_tool("synthesize", {"text": "Hi.", "file": "a.wav", **NO_REFINE})
            )
            taken = await client.call_tool("synthesize", {"text": "Hi.", "file": "a.wav"})
            assert "already in the output folder" in sentence(taken)
            again = facts(
                await client.call_tool(
                    "synthesize", {"text": "Hi.", "file": "a.wav", "overwrite": True, **NO_REFINE}
                )
            )
            assert again["path"] == first["path"]
            book = facts(await client.call_tool("render_book", {"book": "tale.md", **NO_REFINE}))
            assert book["name"] == "tale" and len(book["chapter_files"]) == 1
        async with connected(private_home, tmp_path / "plain") as client:
            no_books = await client.call_tool("render_book", {"book": str(shelf / "tale.md")})
            assert "--books" in sentence(no_books)
        assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]
        assert half_written(output) == []

    anyio.run(body)


def test_two_calls_at_once_and_a_render_s_progress_and_cancel(
    private_home: Path, tmp_path: Path
) -> None:
    """Two syntheses at once run one after the other; a cancelled synthesis leaves no file and
    no temp file; a call made while a book renders is one sentence; the render reports each
    segment as MCP progress, stops on the client's cancel with nothing half-written, and the
    same call later finishes it from what was kept."""
    output = tmp_path / "out"
    render = {"text": BOOK, "title": "Parts", **NO_REFINE}

    async def body() -> None:
        async with connected(private_home, output) as client:
            done: list[dict[str, Any]] = []

            async def speak(text: str) -> None:
                done.append(
                    facts(await client.call_tool("synthesize", {"text": text, **NO_REFINE}))
                )

            async with anyio.create_task_group() as both:
                both.start_soon(speak, "First call.")
                both.start_soon(speak, "Second call.")
            assert len(done) == 2 and len({d["path"] for d in done}) == 2
            # The one that waited, waited for the other's run.
            assert max(d["waited_seconds"] for d in done) >= 0.5 * min(
                d["wall_seconds"] for d in done
            )

            begun = anyio.Event()

            async def first(_done: float, _total: float | None, _message: str | None) -> None:
                begun.set()

            with anyio.fail_after(CALL_SECONDS):
                async with anyio.create_task_group() as speaking:
                    # Long enough that its decode lasts seconds: the cancel lands within it.
                    long = "This sentence takes its time to say, word by word. " * 6
                    cancelled = {"text": long, "file": "cut.wav", **NO_REFINE}
                    speaking.start_soon(
                        lambda: client.call_tool("synthesize", cancelled, progress_callback=first)
                    )
                    await begun.wait()  # the plan is made: the decode has begun
                    speaking.cancel_scope.cancel()
            still = facts(await client.call_tool("synthesize", {"text": "Still.", **NO_REFINE}))
            assert Path(still["path"]).is_file() and not (output / "cut.wav").exists()
            assert half_written(output) == []  # the cancelled synthesis left no temp file

            steps: list[tuple[float, float | None]] = []
            started = anyio.Event()

            async def progress(done: float, total: float | None, _message: str | None) -> None:
                steps.append((done, total))
                if done >= 1:
                    started.set()

            async with anyio.create_task_group() as rendering:

                async def run() -> None:
                    await client.call_tool("render_book", render, progress_callback=progress)
                    raise AssertionError("the render finished before it was cancelled")

                rendering.start_soon(run)
                with anyio.fail_after(CALL_SECONDS):
                    await started.wait()
                busy = await client.call_tool("synthesize", {"text": "Now?"})
                assert "A book render is using the engine" in sentence(busy)
                status = facts(await client.call_tool("model_status", {}))
                assert status["busy_with"] == "render_book"
                rendering.cancel_scope.cancel()
            assert steps and steps[-1][1] == 4.0 and steps[-1][0] < 4

            after = facts(await client.call_tool("synthesize", {"text": "After.", **NO_REFINE}))
            assert Path(after["path"]).is_file()  # served: the cancelled render let go
            folder = output / "Parts"
            assert half_written(output) == [] and not (folder / "chapters.json").exists()
            for chapter in folder.glob("*.flac"):
                assert sf.info(chapter).frames > 0  # any chapter file there is whole

            steps.clear()
            with anyio.fail_after(CALL_SECONDS):
                result = await client.call_tool("render_book", render, progress_callback=progress)
            book = facts(result)
            assert book["segments_kept"] >= 1 and book["segments_made"] + book["segments_kept"] == 4
            assert len(book["chapter_files"]) == 4 and (folder / "chapters.json").is_file()
            assert book["demo_weights"] is True
            assert [s for s, _ in steps] == sorted(s for s, _ in steps) and steps[-1] == (4.0, 4.0)
        assert half_written(output) == []

    anyio.run(body)


def test_a_client_that_leaves_mid_render_leaves_nothing_half_written(
    private_home: Path, tmp_path: Path
) -> None:
    """The client goes away (its end of stdin closes) while a book renders, and then a client
    stops the next server with SIGTERM (as a client's shutdown does) mid-render: each time the
    server stops the render cleanly and exits itself, leaving no temp file; a new server over
    the same folder serves the next call and finishes the render from the segments kept."""
    output = tmp_path / "out"
    # Eight chapters: the first server may finish a few after the client leaves, and the second
    # must still have more than one to make when SIGTERM comes.
    longer = "\n\n".join(f"Chapter {n}\nHi, {n}." for n in range(1, 9))
    render = {"text": longer, "title": "Parts", **NO_REFINE}

    async def interrupted(log: Path, terminate: bool) -> None:
        """A render stopped mid-way: the client leaves, or SIGTERM comes (`terminate`)."""
        started, kept = anyio.Event(), list[float]()

        async def progress(done: float, total: float | None, _message: str | None) -> None:
            kept.append(done)  # the first is the plan's: the segments kept from before
            if kept[0] < done < (total or 0):
                started.set()  # a segment made by this server, and more to come

        async def render_in_a_session() -> None:
            async with connected(private_home, output, log=log) as client:
                with contextlib.suppress(MCPError):  # the server went away: the point
                    await client.call_tool("render_book", render, progress_callback=progress)

        with anyio.fail_after(CALL_SECONDS):
            async with anyio.create_task_group() as session:
                session.start_soon(render_in_a_session)
                await started.wait()
                if terminate:
                    (server,) = [
                        child
                        for child in psutil.Process().children(recursive=True)
                        if "mcp" in child.cmdline() and str(output) in child.cmdline()
                    ]
                    server.send_signal(signal.SIGTERM)
                else:
                    session.cancel_scope.cancel()  # the client's side closes: stdin's end
        said = log.read_text(encoding="utf-8")
        assert "MCP server stopped" in said, said[-2000:]  # it ended itself, not killed
        assert half_written(output) == []

    async def body() -> None:
        await interrupted(tmp_path / "left.log", terminate=False)
        await interrupted(tmp_path / "terminated.log", terminate=True)
        async with connected(private_home, output) as client:
            after = facts(await client.call_tool("synthesize", {"text": "Next.", **NO_REFINE}))
            assert Path(after["path"]).is_file()
            with anyio.fail_after(CALL_SECONDS):
                book = facts(await client.call_tool("render_book", render))
            assert book["segments_kept"] >= 2 and len(book["chapter_files"]) == 8
            assert book["segments_made"] + book["segments_kept"] == 8

    anyio.run(body)


def test_a_model_that_cannot_load_is_one_sentence_for_every_tool(
    private_home: Path, tmp_path: Path
) -> None:
    """The server serves while its model fails to load: each tool that needs the model says
    why in one sentence, model_status says it failed, and the tools that do not still work."""
    weights = tmp_path / "weights"
    weights.mkdir()

    async def body() -> None:
        async with connected(private_home, tmp_path / "out", "--model", str(weights)) as client:
            said = [
                sentence(await client.call_tool(tool, {"text": "Hi.", **NO_REFINE}))
                for tool in ("synthesize", "render_book")
            ]
            status = facts(await client.call_tool("model_status", {}))
            assert status["state"] == "failed" and said == [status["error"]] * 2, said
            assert str(weights) in status["error"]
            assert facts(await client.call_tool("list_speakers", {}))["speakers"] == []
        assert not (tmp_path / "out" / "Text").exists()

    anyio.run(body)
