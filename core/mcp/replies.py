"""What a tool call answers: a sentence for the person, the same facts as JSON, the audio itself for
a short result; an error is one sentence with is_error set. Demo-weight audio says so.
"""

import base64
import json
from pathlib import Path
from typing import Any

from mcp import types

DEMO_NOTE = (
    "Demo weights are in use: the audio is noise, not speech (random weights, for trying the "
    "app); load the official weights for a voice."
)
AUDIO_TYPES = {
    ".wav": "audio/wav",
    ".flac": "audio/flac",
    ".ogg": "audio/ogg",
    ".mp3": "audio/mpeg",
}


def refused(sentence: str) -> types.CallToolResult:
    """An error result: one sentence, which the assistant reads to correct its call."""
    text = " ".join(sentence.split()) or "The call failed."
    return types.CallToolResult(
        content=[types.TextContent(text=text)], structured_content={"error": text}, is_error=True
    )


def answered(
    summary: str, facts: dict[str, Any], demo: bool | None = None, audio: Path | None = None
) -> types.CallToolResult:
    """A result: `summary` (with the demo note when `demo`), the facts as JSON, and the
    file at `audio` inlined as audio content."""
    if demo is not None:
        facts = {**facts, "demo_weights": demo}
        if demo:
            summary = f"{summary} {DEMO_NOTE}"
            facts["note"] = DEMO_NOTE
    content: list[types.ContentBlock] = [
        types.TextContent(text=summary),
        types.TextContent(text=json.dumps(facts, ensure_ascii=False)),
    ]
    if audio is not None:
        data = base64.b64encode(audio.read_bytes()).decode("ascii")
        content.append(types.AudioContent(data=data, mime_type=AUDIO_TYPES[audio.suffix.lower()]))
    return types.CallToolResult(content=content, structured_content=facts)
