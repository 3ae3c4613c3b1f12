"""The vocoder off the GPT's critical path (decode/vocoding.py): finished units' audio queued on a
side stream while the decode steps go on, handed over when it exists.

No CUDA stream can be made here, so the side stream's two seams are replaced: `side_stream`
by a stand-in that counts the calls it would run on the second stream, and
`host_reads.audio_later` by audio that says it is ready only after a few asks (as a GPU's
event does while the vocoder runs). What is checked is everything the host decides: the same
audio, steps and order as vocoding at once, the steps going on while audio is in flight, and
nothing left flying when a job ends or is cancelled. tests/core/engine/test_fake_cuda.py runs
the same form on fake CUDA tensors; .ci/gpu/run.sh measures it on a card. Demo weights (random:
noise, never speech)."""

from dataclasses import dataclass, field

import numpy as np
import pytest
import torch
from side_seams import RecordedSide

from chattts_studio.core.engine.batch.batcher import Batcher
from chattts_studio.core.engine.batch.tickets import Delivery, Finished, SpeechOrder, collect
from chattts_studio.core.engine.cancel import CancelToken
from chattts_studio.core.engine.decode import host_reads, vocoding
from chattts_studio.core.engine.engine import Engine
from chattts_studio.core.engine.request import AudioChunk, SegmentResult, SynthesisRequest
from chattts_studio.core.errors import Cancelled

ASKS = 3  # a flight's audio is ready at its fourth ask
TEXT = "今天天气很好。我们去公园散步吧！然后回家吃饭，再看一会儿书。好的。晚安，明天见。"


@dataclass
class Flights:
    """What the stand-ins saw: calls run 'on the side stream', and each flight's asks."""

    side: RecordedSide = field(default_factory=RecordedSide)
    needed: int = ASKS  # asks before a flight says it is ready
    asks: list[int] = field(default_factory=list)  # per flight: ready() calls so far
    taken: list[bool] = field(default_factory=list)  # per flight: ready when its audio was read
    read: list[bool] = field(default_factory=list)  # per flight: result() called

    @property
    def entered(self) -> int:
        """Calls run 'on the side stream'."""
        return len(self.side.blocks)


@pytest.fixture
def flights(monkeypatch: pytest.MonkeyPatch) -> Flights:
    seen = Flights()

    def side_stream(device: torch.device, wanted: bool) -> RecordedSide | None:
        return seen.side if wanted else None

    def audio_later(wavs: torch.Tensor) -> host_reads.LaterAudio:
        host = host_reads.audio(wavs)  # made now; reported late
        n = len(seen.asks)
        seen.asks.append(0)
        seen.taken.append(False)
        seen.read.append(False)

        def ready() -> bool:
            seen.asks[n] += 1
            return seen.asks[n] > seen.needed

        def result() -> np.ndarray:
            seen.taken[n], seen.read[n] = seen.asks[n] > seen.needed, True
            return host

        return host_reads.LaterAudio(ready, result)

    monkeypatch.setattr(vocoding, "side_stream", side_stream)
    monkeypatch.setattr(host_reads, "audio_later", audio_later)
    return seen


def _request() -> SynthesisRequest:
    # Segments of different lengths (units of equal length share one call), two rows at a
    # time, so finished units wait for the vocoder while others still decode.
    return SynthesisRequest(TEXT, seed=4, refine_text=False, segment_size=8, batch_size=2)


def _run(engine: Engine, on: bool, cancel: CancelToken | None = None) -> list[SegmentResult]:
    engine.vocoder_stream = on
    try:
        return list(engine.synthesize(_request(), cancel=cancel))
    finally:
        engine.vocoder_stream = False


def test_queued_vocoding_gives_the_same_audio_in_order_while_the_steps_go_on(
    engine: Engine, flights: Flights
) -> None:
    now = _run(engine, False)
    assert flights.entered == 0  # the lever off: vocoded at once, as before
    queued = _run(engine, True)
    assert len(queued) == len(now) >= 4
    assert [r.index for r in queued] == list(range(len(now)))
    for a, b in zip(queued, now, strict=True):
        assert a.steps == b.steps and a.text == b.text
        assert np.array_equal(a.audio, b.audio)
    assert flights.entered == len(flights.asks) >= 2  # every call ran 'on the side stream'
    assert all(flights.read)  # nothing left flying
    # The loop stepped on while audio flew: a flight read only once it said it was ready,
    # after ASKS steps (one ask a step). Waiting for it at once would read none ready.
    assert any(flights.taken), flights.asks
    assert all(a > ASKS for a, t in zip(flights.asks, flights.taken, strict=True) if t)


def test_on_the_cpu_the_lever_vocodes_on_a_thread_of_its_own_with_the_same_audio(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The real CPU side (no stand-ins): every finished unit vocoded on the 'vocoder' thread
    while the decode goes on, the same audio bit for bit as inline, the thread gone after."""
    import threading

    now = _run(engine, False)
    model = engine.model
    assert model is not None
    real = model.vocode_on_device
    threads: list[str] = []

    def recorded(hiddens: list[torch.Tensor]) -> torch.Tensor:
        threads.append(threading.current_thread().name)
        return real(hiddens)

    monkeypatch.setattr(model, "vocode_on_device", recorded)
    queued = _run(engine, True)
    assert threads and all(name.startswith("vocoder") for name in threads), threads
    assert [r.index for r in queued] == list(range(len(now)))
    assert all(np.array_equal(a.audio, b.audio) for a, b in zip(queued, now, strict=True))
    assert not any(t.name.startswith("vocoder") for t in threading.enumerate())


def test_a_vocoder_failure_beside_the_steps_is_the_jobs_error_and_leaves_no_thread(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The second call fails on the vocoder thread: the synthesis raises that error (as inline
    vocoding would), the calls still in flight are waited for, the thread is gone, and the
    next job runs."""
    import threading

    model = engine.model
    assert model is not None
    real = model.vocode_on_device
    calls = [0]

    def failing(hiddens: list[torch.Tensor]) -> torch.Tensor:
        calls[0] += 1
        if calls[0] == 2:
            raise RuntimeError("the vocoder broke")
        return real(hiddens)

    monkeypatch.setattr(model, "vocode_on_device", failing)
    with pytest.raises(RuntimeError, match="the vocoder broke"):
        _run(engine, True)
    assert not any(t.name.startswith("vocoder") for t in threading.enumerate())
    monkeypatch.undo()
    assert len(_run(engine, True)) >= 4


def test_a_cancel_with_audio_in_flight_leaves_nothing_flying(
    engine: Engine, flights: Flights, monkeypatch: pytest.MonkeyPatch
) -> None:
    cancel = CancelToken()
    real_flush = vocoding.VocodeQueue.flush

    def flush_then_cancel(self: vocoding.VocodeQueue) -> list[object]:
        out = real_flush(self)
        if self.flying:  # audio in flight: the user cancels now
            cancel.cancel()
        return out  # type: ignore[return-value]

    monkeypatch.setattr(vocoding.VocodeQueue, "flush", flush_then_cancel)
    with pytest.raises(Cancelled):
        _run(engine, True, cancel)
    assert flights.asks and all(flights.read)  # settled: waited for, then dropped
    assert not any(flights.taken)  # none was handed over as a result


def _served(engine: Engine, orders: list[SpeechOrder]) -> tuple[Batcher, list[list[Delivery]]]:
    """The orders through one speech-API batcher, all at once; what each got."""
    batcher = Batcher(engine, slots=4)
    batcher.segment_size = 6  # several segments a request, chunks of each
    batcher.start()
    try:
        together = [collect(batcher, order) for order in orders]
        for done, _ in together:
            assert done.wait(60)
    finally:
        batcher.close()
    return batcher, [got for _, got in together]


def test_the_speech_api_sends_side_stream_chunks_in_order_with_the_same_audio(
    engine: Engine, flights: Flights
) -> None:
    """The Batcher's form: each streamed chunk launched on the side stream from the batcher's
    own thread (no vocoder thread: on a card, kernels from another thread would break a graph
    capture), handed over once its audio exists, in the order it was planned; every request
    gets the audio it gets with the vocoder beside the steps (the CPU's thread)."""
    orders = [
        SpeechOrder("你好。今天天气很好。我们去公园。", engine.sample_speaker(1), 1),
        SpeechOrder("我们。去公园散步吧。", engine.sample_speaker(3), 3),
    ]
    plain, before = _served(engine, orders)
    assert plain._vocoding is not None and flights.entered == 0
    # Slow enough that several chunks of one segment fly at once: handed over out of
    # launch order, a segment's audio would come out shuffled.
    flights.needed = 40
    engine.vocoder_stream = True
    try:
        queued, after = _served(engine, orders)
    finally:
        engine.vocoder_stream = False
    assert queued._vocoding is None and not queued._flying
    for got, reference in zip(after, before, strict=True):
        assert isinstance(got[-1], Finished)
        chunks = [c for c in got if isinstance(c, AudioChunk)]
        indices = [c.index for c in chunks]
        assert indices == sorted(indices) and len(indices) > len(set(indices))  # chunked
        want = [c for c in reference if isinstance(c, AudioChunk)]
        assert [len(c.audio) for c in chunks] == [len(c.audio) for c in want]
        assert all(np.array_equal(a.audio, b.audio) for a, b in zip(chunks, want, strict=True))
    assert flights.entered == len(flights.asks) >= 4 and all(flights.read)
    assert any(flights.taken), flights.asks  # the steps went on while chunks flew
    assert all(a > 40 for a, t in zip(flights.asks, flights.taken, strict=True) if t)
