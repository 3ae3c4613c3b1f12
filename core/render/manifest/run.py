"""Rendering a manifest: every item to one audio file, through one continuous batch.

Each item is one exact Batcher request seeded from the item's seed, so its audio is the same bits
whatever shares the batch: alone, among thousands, or on a Ray worker (cluster.py). Only the device
kind and torch's thread count change them besides the settings, so the same files come from the
same --threads here as --ray-cpus-per-actor there. The driver plans, writes every file and journal
line (item_store.py) and the output manifest; ItemRenderer makes the audio bytes, and ItemWorker is
a Ray worker's body around it."""

import io
import queue
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import soundfile as sf

from chattts_studio.core import SAMPLE_RATE
from chattts_studio.core.engine.cancel import CancelToken
from chattts_studio.core.errors import Cancelled, StudioError
from chattts_studio.core.render.manifest.item_store import ItemEntry, ManifestStore, item_key
from chattts_studio.core.render.manifest.items import WorkItem, speaker_id
from chattts_studio.core.render.segment_store import digest

if TYPE_CHECKING:
    from chattts_studio.core.engine.batch.tickets import Delivery, Ticket
    from chattts_studio.core.engine.engine import Engine
    from chattts_studio.core.engine.engine_choice import EngineKind
    from chattts_studio.core.engine.loading import LoadedModel

ITEM_FORMATS = ("flac", "wav", "mp3", "ogg")
_SOUNDFILE = {
    "flac": ("FLAC", "PCM_16"),
    "wav": ("WAV", "PCM_16"),
    "mp3": ("MP3", "MPEG_LAYER_III"),
    "ogg": ("OGG", "VORBIS"),
}


@dataclass(frozen=True)
class ManifestOptions:
    format: str = "flac"
    pause: float = 0.25  # seconds of silence between an item's segments
    segment_size: int = 50
    speed: int = 5  # ChatTTS's [speed_N]
    slots: int = 16  # decoder rows (segments decoded side by side)

    def settings(self, model: str) -> str:
        """A hash of everything besides an item's own fields that shapes its file; `model` is
        model_identity(): the weights and the precision they run at."""
        return digest("manifest", model, self.format, self.pause, self.segment_size, self.speed)


def model_identity(loaded: "LoadedModel", engine: "EngineKind | None" = None) -> str:
    """What of the loaded model shapes an item's bits: its weights (by the hashes their
    verification checked), the precision the GPT runs at and the engine that runs its steps
    (`engine`: the workers', when not the loaded model's). Not the model's name or folder: a
    folder moved or named another way keeps its items, other weights under the same name do
    not. torch's identity is what it was before there were engines: older renders resume."""
    from chattts_studio.core.engine.engine_choice import EngineKind
    from chattts_studio.core.weights.models import weights_identity

    parts = [weights_identity(loaded.info), loaded.precision.value]
    kind = engine or loaded.engine
    if kind is not EngineKind.TORCH:
        parts.append(kind.value)
    return digest("model", *parts)


@dataclass(frozen=True)
class ItemResult:
    """One item made: its encoded file, sent back to the driver."""

    id: str
    data: bytes
    samples: int
    compute_seconds: float  # its share of the decoder's time (rows busy beside it split it)


def encode(audio: np.ndarray, fmt: str) -> bytes:
    """The item's file, in memory (FLAC and WAV are the same bytes for the same samples)."""
    container, subtype = _SOUNDFILE[fmt]
    buffer = io.BytesIO()
    data = np.clip(np.asarray(audio, dtype=np.float32), -1.0, 1.0)
    sf.write(buffer, data, SAMPLE_RATE, format=container, subtype=subtype)
    return buffer.getvalue()


class ItemRenderer:
    """Owns `engine`'s model through one Batcher while it lives; close() when done."""

    def __init__(self, engine: "Engine", options: ManifestOptions) -> None:
        from chattts_studio.core.engine.batch.batcher import Batcher

        self.options = options
        self.window = max(4, options.slots * 4)  # requests submitted at a time
        self.batcher = Batcher(
            engine,
            slots=options.slots,
            segment_size=options.segment_size,
            max_waiting=self.window * 4,  # render() may run on two threads at once
            exact=True,
        )
        self._shares: dict[int, float] = {}  # ticket id -> compute seconds so far
        self._last = 0.0  # when the last step ended; 0: the batch was idle since
        self._active = 0  # render() calls running
        self._guard = threading.Lock()
        self.batcher.step_listeners.append(self._on_step)
        self.batcher.start()

    def _on_step(self, ids: list[int]) -> None:
        now = time.perf_counter()
        if ids and self._last:
            share = (now - self._last) / len(ids)
            for ticket_id in ids:
                self._shares[ticket_id] = self._shares.get(ticket_id, 0.0) + share
        self._last = now

    def close(self) -> None:
        self.batcher.close()

    def render(
        self,
        items: Iterable[WorkItem],
        on_result: Callable[[ItemResult], None],
        cancel: CancelToken | None = None,
    ) -> None:
        """Make every item, calling on_result (on this thread) as each is finished; up to
        `window` items are in the batch's queue at a time, in the order given."""
        from chattts_studio.core.engine.batch.tickets import Failed, Finished, SpeechOrder

        events: queue.Queue[tuple[str, Delivery]] = queue.Queue()
        pending = list(items)
        tickets: dict[str, Ticket] = {}
        parts: dict[str, list[np.ndarray]] = {}
        last_index: dict[str, int] = {}
        pause = np.zeros(round(self.options.pause * SAMPLE_RATE), dtype=np.float32)

        with self._guard:
            if not self._active:
                self._last = 0.0  # idle time before this call is no item's
            self._active += 1

        def deliverer(item_id: str) -> Callable[["Delivery"], None]:
            return lambda d: events.put((item_id, d))

        try:
            while pending or tickets:
                while pending and len(tickets) < self.window:
                    item = pending.pop(0)
                    order = SpeechOrder(item.text, item.speaker, item.seed, self.options.speed)
                    tickets[item.id] = self.batcher.submit(order, deliverer(item.id))
                    parts[item.id], last_index[item.id] = [], -1
                if cancel is not None and cancel.cancelled:
                    raise Cancelled()
                try:
                    item_id, d = events.get(timeout=0.2)
                except queue.Empty:
                    continue
                if isinstance(d, Failed):
                    raise StudioError(f"The item {item_id!r} could not be made: {d.error}")
                ticket = tickets[item_id]
                if isinstance(d, Finished):
                    del tickets[item_id]
                    audio = np.concatenate(parts.pop(item_id) or [np.zeros(0, np.float32)])
                    share = self._shares.pop(ticket.id, 0.0)
                    data = encode(audio, self.options.format)
                    on_result(ItemResult(item_id, data, len(audio), share))
                    continue
                if d.index != last_index[item_id] and last_index[item_id] >= 0 and len(pause):
                    parts[item_id].append(pause)
                last_index[item_id] = d.index
                parts[item_id].append(np.asarray(d.audio, dtype=np.float32).reshape(-1))
        finally:
            for ticket in tickets.values():
                ticket.cancel()
            with self._guard:
                self._active -= 1


class ItemWorker:
    """The body of one Ray worker: one loaded model, one continuous batch; `render` makes a
    chunk of items and sends their encoded files back to the driver."""

    def __init__(
        self,
        model: str,
        precision: str,
        options: ManifestOptions,
        cpus: int,
        gpu: bool,
        engine: str = "torch",
    ) -> None:
        """`engine`: auto, torch or onnx (render --engine, whose auto is onnx on a CPU worker
        with ONNX Runtime installed, torch on a GPU); torch, the library's default, when not
        given."""
        from chattts_studio.core.engine.engine import Engine

        if not gpu:
            import torch

            torch.set_num_threads(max(1, cpus))
        self.engine = Engine()
        self.engine.load(model, None if gpu else "cpu", precision, engine=engine)
        self.renderer = ItemRenderer(self.engine, options)

    def render(self, items: list[WorkItem]) -> list[ItemResult]:
        results: list[ItemResult] = []
        self.renderer.render(items, results.append)
        return results

    def where(self) -> str:
        import socket

        return socket.gethostname()


def item_file(item: WorkItem, options: ManifestOptions) -> str:
    return f"{item.id}.{options.format}"


class ManifestJob:
    """The driver's side of one render: what to make, and every result written exactly once."""

    def __init__(
        self,
        items: list[WorkItem],
        folder: Path,
        options: ManifestOptions,
        model: "LoadedModel",
        engine: "EngineKind | None" = None,
    ) -> None:
        """`model`: the driver's loaded model, the one whose weights and precision the items
        are made with (here, or on workers that load the same); `engine`: the workers' engine
        when they run another than the driver's."""
        self.items = items
        self.folder = Path(folder)
        self.options = options
        self.settings = options.settings(model_identity(model, engine))
        self.store = ManifestStore(self.folder)
        self.keys = {
            i.id: item_key(i.text, speaker_id(i.speaker), i.seed, self.settings) for i in items
        }
        self.kept: list[str] = []
        self.written: set[str] = set()  # ids written by this run
        self.duplicates = 0  # results that came again for an item already written (re-queued)

    def pending(self) -> list[WorkItem]:
        """With the store open: the items to make, largest first (so the batch, or the cluster,
        ends with small ones and no worker waits long on a last big item)."""
        todo, self.kept = [], []
        for item in self.items:
            if self.store.find(item.id, self.keys[item.id], item_file(item, self.options)):
                self.kept.append(item.id)
            else:
                todo.append(item)
        return sorted(todo, key=lambda i: -i.est_seconds)

    def accept(self, result: ItemResult) -> ItemEntry | None:
        """Write one result (file, then journal line); a second result for the same item is
        dropped (a re-queued chunk that had finished after all)."""
        if result.id in self.written:
            self.duplicates += 1
            return None
        self.written.add(result.id)
        seconds = result.samples / SAMPLE_RATE
        rtf = result.compute_seconds / seconds if seconds and result.compute_seconds else None
        item_file_name = f"{result.id}.{self.options.format}"
        return self.store.add(
            result.id, self.keys[result.id], item_file_name, result.data, result.samples, rtf
        )

    def finish(self) -> Path:
        missing = [i.id for i in self.items if i.id not in self.store.entries]
        if missing:
            raise StudioError(f"{len(missing)} item(s) were not made, the first {missing[0]!r}.")
        return self.store.write_output([i.id for i in self.items])


def render_local(
    job: ManifestJob,
    engine: "Engine",
    cancel: CancelToken | None = None,
    on_item: Callable[[ItemEntry], None] | None = None,
) -> int:
    """Make the job's pending items here, in one continuous batch; with the store open.
    Returns how many were made."""
    pending = job.pending()
    if not pending:
        return 0
    renderer = ItemRenderer(engine, job.options)
    lock = threading.Lock()
    made = 0

    def written(result: ItemResult) -> None:
        nonlocal made
        with lock:
            entry = job.accept(result)
        if entry is not None:
            made += 1
            if on_item is not None:
                on_item(entry)

    try:
        renderer.render(pending, written, cancel)
    finally:
        renderer.close()
    return made
