"""One `soak --output-rss ... --through store` run in its own process: a text's audio through the
window's result store as the result panel drives it, then exported as Save does. The parent
measures its peak RSS.
"""

import argparse
import sys
import time
from pathlib import Path

import numpy as np

from chattts_studio.core import SAMPLE_RATE
from chattts_studio.core.audio.stream_writer import AudioStreamWriter, pause_samples
from chattts_studio.core.engine.request import AudioChunk, SegmentRestarted, SynthesisRequest
from chattts_studio.core.results.result_store import ResultStore

# Speech per character when the store is fed noise: 100,000 characters is about 3.5 hours
# of speech, and the engine's chunks are 24 GPT steps of 512 samples.
SYNTHETIC_SECONDS_PER_CHAR = 0.126
CHUNK_SAMPLES = 24 * 512
SEGMENT_CHARS = 50


class StoreDriver:
    """The result panel's use of the store, without Qt."""

    def __init__(self, store: ResultStore, pause_seconds: float = 0.25) -> None:
        self.store = store
        self.pause = pause_samples(pause_seconds)
        self.current = 0
        self.starts: dict[int, int] = {}

    def chunk(self, index: int, audio: np.ndarray) -> None:
        if index > self.current:
            self.store.append_silence(self.pause)
            self.current = index
        self.starts.setdefault(index, self.store.length)
        self.store.append(audio)

    def restart(self, index: int) -> None:
        start = self.starts.pop(index, None)
        if start is not None:
            self.store.truncate(start)

    def segment(self, index: int) -> None:
        self.store.mark_segment(index, self.starts.get(index, self.store.length), self.store.length)


def _synthetic(driver: StoreDriver, chars: int) -> int:
    rng = np.random.default_rng(0)
    total = round(chars * SYNTHETIC_SECONDS_PER_CHAR * SAMPLE_RATE)
    per_segment = round(SEGMENT_CHARS * SYNTHETIC_SECONDS_PER_CHAR * SAMPLE_RATE)
    index = done = 0
    while done < total:
        size = min(per_segment, total - done)
        for first in range(0, size, CHUNK_SAMPLES):
            piece = rng.uniform(-0.5, 0.5, min(CHUNK_SAMPLES, size - first))
            driver.chunk(index, piece.astype(np.float32))
        driver.segment(index)
        done += size
        index += 1
    return index


def _engine(driver: StoreDriver, chars: int, args: argparse.Namespace) -> int:
    from chattts_studio.core.benchmarks.texts import mixed_text
    from chattts_studio.core.engine.engine import Engine

    engine = Engine()
    engine.load(args.model, args.device, "fp32")
    extra = {"decoder": args.decoder} if args.decoder else {}
    request = SynthesisRequest(
        mixed_text(chars), refine_text=False, segment_size=SEGMENT_CHARS, batch_size=16, **extra
    )

    def listen(event: AudioChunk | SegmentRestarted) -> None:
        if isinstance(event, SegmentRestarted):
            driver.restart(event.index)
        else:
            driver.chunk(event.index, event.audio)

    segments = 0
    for result in engine.synthesize(request, listen):
        driver.segment(result.index)  # the worker keeps the figures, never the audio
        segments += 1
        del result
    engine.unload()
    return segments


def store_run(chars: int, args: argparse.Namespace) -> int:
    folder = Path(args.output_rss)
    folder.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    store = ResultStore.create(folder)
    driver = StoreDriver(store)
    if args.source == "synthetic":
        segments = _synthetic(driver, chars)
    else:
        segments = _engine(driver, chars, args)
    store.finish({"characters": chars})
    with AudioStreamWriter(folder / "export.flac", pause_seconds=0.0) as out:
        for block in store.blocks():
            out.write(block)
    seconds = store.length / SAMPLE_RATE
    store.delete()
    print(
        f"{chars} characters ({args.source}): {segments} segments, {seconds:.0f} s of audio "
        f"stored and exported in {time.perf_counter() - started:.0f} s",
        file=sys.stderr,
    )
    return 0
