"""Takes: many segments' takes as rows of one exact batch on the loaded model, each from its
own seed, each the same bits whoever shares the batch. A row's bits depend on its random stream
(its own generator) and on the row count of its matrix products (a BLAS picks its kernels by
it), so a take records that count (`TakeRows.product_rows`) and is made again at it; the
vocoder runs on each take alone. docs/projects.md has the why and the costs."""

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

import numpy as np
import torch

from chattts_studio.core import SAMPLES_PER_STEP
from chattts_studio.core.engine.cancel import CancelToken
from chattts_studio.core.engine.decode.job import Job
from chattts_studio.core.engine.decode.slots import DecoderShape
from chattts_studio.core.engine.pipeline import out_of_memory, release_memory
from chattts_studio.core.engine.request import Sampling
from chattts_studio.core.errors import DeviceError, ModelError
from chattts_studio.core.messages import QT_TRANSLATE_NOOP, Sentence
from chattts_studio.core.text.prepare import step_cap
from chattts_studio.core.voices.voice import Voice

if TYPE_CHECKING:
    from chattts_studio.core.engine.chattts.chat import ChatModel
    from chattts_studio.core.engine.decoder_pool import DecoderPool
    from chattts_studio.core.engine.loading import LoadedModel

TAKE_CHUNK_ROWS = 4  # rows per product on the CPU when several takes are made together
MAX_CPU_ROWS = 16  # takes decoded side by side on the CPU


class Loaded(Protocol):
    """What takes need of the Engine that holds the model (engine.py calls in here)."""

    model: "ChatModel | None"
    loaded: "LoadedModel | None"
    decoders: "DecoderPool"
    cuda_graphs: bool

    def max_rows(self) -> int: ...


@dataclass(frozen=True)
class TakeOrder:
    """One take to make: what the model reads, in which voice, from which seed, sampled how
    and at which ChatTTS speed (0-9)."""

    key: int  # the caller's id
    model_text: str
    voice: Voice
    seed: int
    sampling: Sampling
    speed: int = 5


@dataclass
class MadeTake:
    order: TakeOrder
    audio: np.ndarray  # float32, 24 kHz, steps * 512 samples
    steps: int
    cap: int
    eos: bool
    compute_seconds: float


@dataclass(frozen=True)
class TakeRows:
    """The decoder's shape for a batch of takes: its slots and the row count of its products
    (what a take records as the row count it was made at)."""

    slots: int
    product_rows: int
    chunk_rows: int | None  # the CPU's exact chunks; None on a GPU (every slot steps)


def rows_for(engine: Loaded, count: int, product_rows: int | None = None) -> TakeRows:
    """The shape for `count` takes; `product_rows` to make takes again as they were made."""
    loaded = engine.loaded
    assert loaded is not None
    if loaded.device.kind == "cuda":
        slots = product_rows or max(1, min(count, engine.max_rows()))
        return TakeRows(slots, slots, None)
    chunk = product_rows or (1 if count == 1 else TAKE_CHUNK_ROWS)
    return TakeRows(max(1, min(count, MAX_CPU_ROWS)), chunk, chunk)


def _jobs(model: "ChatModel", orders: list[TakeOrder], random_weights: bool) -> list[Job]:
    """A decode job a take, its prompt made when the job takes its row."""
    jobs: list[Job] = []
    for key, order in enumerate(orders):
        cap = step_cap(order.model_text)
        job = Job(
            key,
            lambda: torch.zeros(0),
            cap,
            cap if random_weights else 1,  # demo weights never say EOS: held to the cap
            prompt_len=2 * len(order.model_text) + 32,  # the estimate; the cache grows
            seed=order.seed,
            sampling=order.sampling,
        )

        def embed(order: TakeOrder = order, job: Job = job) -> torch.Tensor:
            ids = model.prompt_ids(order.model_text, order.speed, order.voice)
            job.prompt_len = int(ids[0].shape[1])
            return model.embed(ids, order.voice)

        job.emb = embed
        jobs.append(job)
    return jobs


def make_takes(
    engine: Loaded,
    orders: list[TakeOrder],
    cancel: CancelToken,
    on_take: Callable[[MadeTake], None],
    rows: TakeRows | None = None,
    on_step: Callable[[int], None] | None = None,
) -> TakeRows:
    """Make every order's take, each handed to `on_take` as soon as its audio exists (so a
    caller can save it before the next is done). Returns the shape used. Raises Cancelled
    when cancelled (the takes handed over are whole), ModelError when a take's numbers went
    non-finite (the others were made), DeviceError (one sentence) when the device ran out of
    memory (the takes handed over are whole; the memory is given back)."""
    model, loaded = engine.model, engine.loaded
    if model is None or loaded is None:
        raise ModelError("No model is loaded.")
    shape = rows or rows_for(engine, len(orders))
    on_cuda = loaded.device.kind == "cuda"
    jobs = _jobs(model, orders, loaded.info.random_weights)
    failures: list[tuple[Job, Exception]] = []
    decoder = engine.decoders.decoder(
        model,
        DecoderShape(
            shape.slots,
            static=on_cuda,
            graphs=on_cuda and engine.cuda_graphs,
            exact=True,
            chunk_rows=shape.chunk_rows,
        ),
        max(j.length for j in jobs) + 1,
    )
    started = time.perf_counter()
    row_steps = [0]
    made_count = [0]

    def stepped(keys: list[int]) -> None:
        row_steps[0] += len(keys)
        if on_step is not None:
            on_step(len(keys))

    try:
        for ended in decoder.run(
            jobs,
            Sampling(0.3, 0.7, 20),  # every job brings its own
            lambda: cancel.cancelled,
            stepped,
            lambda job, exc: failures.append((job, exc)),
        ):
            if ended is None:
                continue
            order = orders[ended.key]
            audio = np.zeros(0, np.float32)
            if ended.steps:
                wav = model.vocode([torch.stack(ended.hiddens)])[0]
                audio = wav[: ended.steps * SAMPLES_PER_STEP]
            per_step = (time.perf_counter() - started) / max(1, row_steps[0])
            made = MadeTake(
                order,
                np.ascontiguousarray(audio, dtype=np.float32),
                ended.steps,
                ended.cap,
                ended.ended_by_eos,
                ended.steps * per_step,
            )
            ended.hiddens, ended.tokens = [], []
            on_take(made)
            made_count[0] += 1
    except (torch.OutOfMemoryError, RuntimeError) as exc:
        engine.decoders.discard(decoder)  # it raised: its state is unknown
        if not out_of_memory(exc):
            raise
        failed = True  # said below, once the failed frames are let go
    except BaseException:
        engine.decoders.discard(decoder)
        raise
    else:
        failed = False
    finally:
        engine.decoders.trim()
    if failed:
        # No retry at fewer rows: the row count is part of every take's record (see above).
        release_memory(loaded.device.id)
        raise DeviceError(
            Sentence(
                QT_TRANSLATE_NOOP(
                    "core",
                    "Out of memory making {count} takes at once ({done} made and kept); "
                    "make fewer takes at a time.",
                ),
                count=str(len(orders)),
                done=str(made_count[0]),
            )
        )
    cancel.check()
    if failures:
        raise ModelError(str(failures[0][1]))
    return shape
