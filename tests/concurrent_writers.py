"""Many processes changing the speaker library and the pronunciation dictionary at once (issue
20, item 6). Spawned writers import this module: it imports core only, never Qt or torch."""

import json
import multiprocessing
from pathlib import Path
from typing import Any

from chattts_studio.core.text.lexicon import LexiconStore
from chattts_studio.core.voices.speakers import SpeakerLibrary

WRITERS = 12


ADDS = 5  # per writer, of each kind


EMB = "豆" * 40  # any valid-looking embedding: the library never decodes one on add


def embedding(writer: int, k: int) -> str:
    return f"{EMB}{writer:02d}{k:02d}"


def add_many(library_path: str, lexicon_path: str, writer: int, start: Any) -> None:
    """One writer: its stores opened first (each holds its own, soon stale, copy), then, once
    every writer is ready, ADDS dictionary entries and ADDS speakers as fast as it can."""
    library = SpeakerLibrary(Path(library_path))
    store = LexiconStore(Path(lexicon_path))
    start.wait()
    for k in range(ADDS):
        store.add(f"w{writer}x{k}", f"read {writer} {k}")
        library.add(f"speaker {writer}-{k}", embedding(writer, k), seed=k)


def run_writers(library: Path, lexicon: Path) -> None:
    spawn = multiprocessing.get_context("spawn")  # a fresh interpreter: no fork of pytest
    start = spawn.Manager().Event()
    writers = [
        spawn.Process(target=add_many, args=(str(library), str(lexicon), n, start))
        for n in range(WRITERS)
    ]
    for process in writers:
        process.start()
    start.set()
    for process in writers:
        process.join(timeout=120)
    assert [p.exitcode for p in writers] == [0] * WRITERS


def every_name(library: Path) -> set[str]:
    return {s["name"] for s in json.loads(library.read_text(encoding="utf-8"))["speakers"]}


def every_word(lexicon: Path) -> set[str]:
    return {e["word"] for e in json.loads(lexicon.read_text(encoding="utf-8"))["entries"]}


EXPECTED_NAMES = {f"speaker {n}-{k}" for n in range(WRITERS) for k in range(ADDS)}


EXPECTED_WORDS = {f"w{n}x{k}" for n in range(WRITERS) for k in range(ADDS)}
