"""The two tools that only read: the speaker library (each voice with its preview clip's path, read
afresh each call) and the model's status (which weights, on which device, and the server's folders
and limits).
"""

import os
from pathlib import Path
from typing import Any

from mcp import types

from chattts_studio.core.mcp.arguments import Arguments
from chattts_studio.core.mcp.folders import BookFolders, OutputFolder, inside
from chattts_studio.core.mcp.replies import DEMO_NOTE, answered
from chattts_studio.core.mcp.slot import EngineSlot

LIST_SPEAKERS = "list_speakers"
MODEL_STATUS = "model_status"
READ_ONLY = types.ToolAnnotations(
    read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)


def definitions() -> list[types.Tool]:
    nothing: dict[str, Any] = {"type": "object", "properties": {}, "additionalProperties": False}
    return [
        types.Tool(
            name=LIST_SPEAKERS,
            title="List speakers",
            description=(
                "The voices in the speaker library, by name, for synthesize's and "
                "render_book's speaker argument; each with the seed it came from (if any), "
                "whether it was cloned from a recording, and its preview clip's path."
            ),
            input_schema=nothing,
            annotations=READ_ONLY,
        ),
        types.Tool(
            name=MODEL_STATUS,
            title="Model status",
            description=(
                "Which ChatTTS weights are loaded (official, or demo weights that make noise), "
                "on which device and precision, or why none could be; the output folder, the "
                "allowed books folders and the text limits."
            ),
            input_schema=nothing,
            annotations=READ_ONLY,
        ),
    ]


def preview_path(library_folder: Path, relative: str) -> str | None:
    """A preview clip's path when the clip is there inside the library's folder (a damaged
    library naming a file elsewhere gets none)."""
    if not relative:
        return None
    clip = Path(os.path.realpath(library_folder / relative))
    if not inside(clip, Path(os.path.realpath(library_folder))) or not clip.is_file():
        return None
    return str(clip)


def list_speakers(arguments: dict[str, Any] | None) -> types.CallToolResult:
    from chattts_studio.core.voices.speakers import SpeakerLibrary

    Arguments(LIST_SPEAKERS, arguments, ())
    library = SpeakerLibrary()
    speakers = [
        {
            "name": entry.name,
            "seed": entry.seed,
            "cloned": entry.cloned,
            "note": entry.note,
            "preview": preview_path(library.path.parent, entry.preview),
        }
        for entry in library.entries
    ]
    names = ", ".join(e.name for e in library.entries[:20]) + ("…" if len(speakers) > 20 else "")
    summary = (
        f"The speaker library has {len(speakers)} voice(s): {names}."
        if speakers
        else "The speaker library is empty: give synthesize a seed for a voice (the same seed, "
        "the same voice), or keep voices in the app's Speaker tab."
    )
    if library.problem:
        summary = f"{summary} {library.problem}"
    facts = {"library": str(library.path), "speakers": speakers, "problem": library.problem}
    return answered(summary, facts)


def model_status(
    slot: EngineSlot,
    output: OutputFolder,
    books: BookFolders,
    limits: dict[str, int],
    arguments: dict[str, Any] | None,
) -> types.CallToolResult:
    Arguments(MODEL_STATUS, arguments, ())
    loaded = slot.loaded
    facts: dict[str, Any] = {
        "state": slot.state,
        "model": slot.spec.model,
        "output_folder": str(output.root),
        "books_folders": [str(r) for r in books.roots],
        "max_characters": limits,
        "busy_with": slot.running or None,
    }
    if loaded is not None:
        info = loaded.info
        facts |= {
            "weights": info.kind,
            "label": info.label,
            "demo_weights": info.random_weights,
            "device": loaded.device.id,
            "precision": loaded.precision.value,
            "engine": loaded.engine.value,
            "load_seconds": round(loaded.load_seconds, 2),
        }
        summary = f"Loaded: {info.label} on {loaded.device.id}, {loaded.precision.value}."
        if info.random_weights:
            summary = f"{summary} {DEMO_NOTE}"
    elif slot.state == "failed":
        facts["error"] = slot.error
        summary = f"No model is loaded: {slot.error}"
    else:
        facts["stage"] = slot.stage
        summary = f"The model {slot.spec.model} is loading ({slot.stage}); tools wait for it."
    return answered(summary, facts)
