"""The synthesize tool: a text of up to the speech API's length into one audio file in the
output folder (written atomically, through the synthesize service), answered with its path,
its duration and, for a short result, the audio itself."""

import secrets
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mcp import types

from chattts_studio.core import SAMPLE_RATE
from chattts_studio.core.engine.cancel import CancelToken
from chattts_studio.core.engine.request import SynthesisRequest
from chattts_studio.core.mcp.arguments import Arguments, BadArgument
from chattts_studio.core.mcp.folders import OutputFolder, PathRefused
from chattts_studio.core.mcp.progress import ProgressFeed, reported
from chattts_studio.core.mcp.replies import AUDIO_TYPES, answered
from chattts_studio.core.mcp.settings import (
    VOICE_ARGUMENTS,
    VoiceAsk,
    read_voice,
    request_for,
    voice_schema,
    writes_files,
)
from chattts_studio.core.mcp.slot import EngineSlot
from chattts_studio.core.serve.limits import ServeLimits

if TYPE_CHECKING:
    from mcp.server.context import ServerRequestContext

    from chattts_studio.core.engine.engine import Engine
    from chattts_studio.core.engine.request import SegmentResult
    from chattts_studio.core.services.synthesize import FileWritten

TOOL = "synthesize"
MOST_CHARS = ServeLimits().max_input_chars  # the speech API's own limit
MOST_INLINE_SECONDS = 30.0  # a result this short comes back as audio content too
MOST_INLINE_BYTES = 2 * 2**20
ARGUMENTS = ("text", "file", "overwrite", "include_audio", *VOICE_ARGUMENTS)


def definition() -> types.Tool:
    return types.Tool(
        name=TOOL,
        title="Synthesize speech",
        description=(
            "Speak a text (Chinese and/or English, up to "
            f"{MOST_CHARS} characters) with ChatTTS into an audio file in the server's output "
            "folder. Returns the file's path and duration, and for results up to "
            f"{MOST_INLINE_SECONDS:.0f} s the audio itself; reports progress by segment. For "
            "a longer text or a book, use render_book. ChatTTS control tokens such as [laugh] "
            "and [uv_break] may be used."
        ),
        input_schema={
            "type": "object",
            "properties": {
                "text": {
                    "type": "string",
                    "minLength": 1,
                    "maxLength": MOST_CHARS,
                    "description": "What to say.",
                },
                "file": {
                    "type": "string",
                    "description": "The file's name inside the output folder, ending in .wav, "
                    ".flac, .ogg or .mp3 (folders allowed: talks/intro.wav). Default: a new "
                    "speech-DATE-TIME-XXXX.wav.",
                },
                "overwrite": {
                    "type": "boolean",
                    "default": False,
                    "description": "Replace a file of that name; without it, an existing "
                    "file is an error.",
                },
                "include_audio": {
                    "type": "boolean",
                    "default": True,
                    "description": "Also return the audio itself when it is at most "
                    f"{MOST_INLINE_SECONDS:.0f} s long.",
                },
                **voice_schema(refine_default=True),
            },
            "required": ["text"],
            "additionalProperties": False,
        },
        annotations=writes_files("Synthesize speech", idempotent=False),
    )


@dataclass(frozen=True)
class SpeechAsk:
    text: str
    file: str | None
    overwrite: bool
    include_audio: bool
    voice: VoiceAsk


def read(arguments: dict[str, object] | None) -> SpeechAsk:
    args = Arguments(TOOL, arguments, ARGUMENTS)
    text = args.text("text", MOST_CHARS, " (the speech API's); render_book takes longer texts")
    if text is None:
        raise BadArgument("synthesize needs the text to speak.")
    return SpeechAsk(
        text=text,
        file=args.name("file"),
        overwrite=args.flag("overwrite", False),
        include_audio=args.flag("include_audio", True),
        voice=read_voice(args, refine_default=True),
    )


def fresh_name(output: OutputFolder) -> str:
    """A name no file has: the time, and a few random letters for another server (another
    assistant's) writing in the same folder in the same second."""
    while True:
        name = f"{time.strftime('speech-%Y%m%d-%H%M%S')}-{secrets.token_hex(2)}.wav"
        if not (output.root / name).exists() and not (output.root / name).is_symlink():
            return name


def target_for(output: OutputFolder, name: str | None, overwrite: bool) -> Path:
    """Where the audio goes: a new name, or the one given when it is an audio file's name
    inside the output folder that is free (or may be replaced)."""
    from chattts_studio.core.audio.output import check_output_path

    name = name if name is not None else fresh_name(output)
    if Path(name.replace("\\", "/")).suffix.lower() not in AUDIO_TYPES:
        raise PathRefused(f"{name[:80]!r} must end in .wav, .flac, .ogg or .mp3.")
    target = output.place(name, "speech.wav")
    if target.is_dir():
        raise PathRefused(f"{name!r} is a folder in the output folder; give a file name.")
    if (target.exists() or target.is_symlink()) and not overwrite:
        raise PathRefused(
            f"{name!r} is already in the output folder; give another file name, or set "
            "overwrite to true."
        )
    check_output_path(target)
    return target


def speak(
    engine: "Engine",
    request: SynthesisRequest,
    output: OutputFolder,
    ask: SpeechAsk,
    feed: ProgressFeed,
    token: CancelToken,
) -> "FileWritten":
    """The request's audio into its file, atomically, on the engine's turn (in its worker
    thread). The file is placed again here, where calls take turns: a name another call has
    written meanwhile is refused (or, unnamed, the next free one taken)."""
    from chattts_studio.core.services.synthesize import plan_synthesis, synthesize_to_file

    target = target_for(output, ask.file, ask.overwrite)
    plan = plan_synthesis(engine, request)
    demo = bool(engine.loaded and engine.loaded.info.random_weights)
    note = " (random demo weights: noise, not speech)" if demo else ""
    tags = {"software": "ChatTTS Studio", "comment": f"ChatTTS Studio{note}"}
    total = len(plan.segments)
    feed.set(0, total, f"0/{total} segments")

    def made(result: "SegmentResult") -> None:
        feed.set(result.index + 1, total, f"{result.index + 1}/{total} segments")

    return synthesize_to_file(engine, plan, target, tags=tags, cancel=token, on_segment=made)


async def call(
    slot: EngineSlot,
    output: OutputFolder,
    arguments: dict[str, object] | None,
    ctx: "ServerRequestContext[Any, Any]",
) -> types.CallToolResult:
    """Every argument, the text, the speaker and the file checked before the engine is asked."""
    from chattts_studio.core.text.prepare import check_text

    ask = read(arguments)
    check_text(ask.text)
    request = request_for(ask.text, ask.voice)
    target_for(output, ask.file, ask.overwrite)  # a wrong name is said before any wait
    feed = ProgressFeed()
    written, turn = await reported(
        feed,
        ctx,
        slot,
        lambda: slot.run(
            TOOL, lambda engine, token: speak(engine, request, output, ask, feed, token)
        ),
    )
    target = written.path
    loaded = slot.loaded
    demo = bool(loaded and loaded.info.random_weights)
    inline = (
        ask.include_audio
        and written.seconds <= MOST_INLINE_SECONDS
        and target.stat().st_size <= MOST_INLINE_BYTES
    )
    name = target.relative_to(output.root).as_posix()
    summary = f"Wrote {name} ({written.seconds:.1f} s of audio) in {output.root}."
    facts = {
        "path": str(target),
        "file": name,
        "duration_seconds": round(written.seconds, 3),
        "sample_rate": SAMPLE_RATE,
        "segments": written.summary.segments if written.summary else None,
        "wall_seconds": round(written.summary.wall_seconds, 3) if written.summary else None,
        "speaker": ask.voice.speaker or f"seed {request.seed}",
        "model": loaded.info.label if loaded else "",
        "waited_seconds": round(turn.waited_seconds, 3),
        "audio_included": inline,
    }
    return answered(summary, facts, demo=demo, audio=target if inline else None)
