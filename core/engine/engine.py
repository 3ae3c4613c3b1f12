"""The synthesis engine: the small public face of core. It loads a ChatTTS model on a device
and precision, plans jobs, and runs them through the pipeline (pipeline.py) with progress,
per-job cancel tokens and live metrics."""

import logging
import time
from collections.abc import Callable, Iterator
from dataclasses import replace

import numpy as np

from chattts_studio.core import SAMPLE_RATE, seeds
from chattts_studio.core.engine import takes
from chattts_studio.core.engine.cancel import CancelToken
from chattts_studio.core.engine.chattts.chat import ChatModel
from chattts_studio.core.engine.decoder_pool import DecoderPool, cuda_rows
from chattts_studio.core.engine.devices import check_precision, resolve_device
from chattts_studio.core.engine.engine_choice import EngineKind, check_engine
from chattts_studio.core.engine.loading import (
    LoadedModel,
    LoadProgress,
    load_fresh,
    seconds_since,
    switch_in_place,
    verified_info,
)
from chattts_studio.core.engine.metrics import LiveMetrics, reset_peak
from chattts_studio.core.engine.pipeline import (
    JobContext,
    ModelTexts,
    Producer,
    Settings,
    Unit,
    release_memory,
    start_live,
    with_backoff,
)
from chattts_studio.core.engine.quiet import quiet_libraries
from chattts_studio.core.engine.request import (
    AUTO_BATCH_MAX,
    AudioChunk,
    JobPlan,
    JobSummary,
    Precision,
    RefineSettings,
    SegmentRestarted,
    SegmentResult,
    SynthesisRequest,
    auto_batch_size,
    join_clips,
)
from chattts_studio.core.errors import Cancelled, ModelError
from chattts_studio.core.messages import QT_TRANSLATE_NOOP, Sentence
from chattts_studio.core.text.prepare import Segment, split_segments
from chattts_studio.core.voices.clone import check_transcript
from chattts_studio.core.voices.voice import Voice

quiet_libraries()

log = logging.getLogger("chattts_studio")
Listener = Callable[[AudioChunk | SegmentRestarted], None]


class Engine:
    """Owns one ChatTTS model. Use it from one thread at a time; cancel() and live.snapshot()
    are safe from any thread. Each job has its own CancelToken (made by the caller when it
    queues the job, or here); cancel() cancels the job running now, if any."""

    def __init__(self) -> None:
        self.model: ChatModel | None = None
        self.loaded: LoadedModel | None = None
        self.live = LiveMetrics()
        self.last_summary: JobSummary | None = None
        self._running: CancelToken | None = None
        # On CUDA the decode step runs as CUDA graphs; off for comparison (bench) or if a
        # driver misbehaves. No effect elsewhere.
        self.cuda_graphs = True
        # On CUDA, finished segments vocoded on a second stream while the GPT steps on: off
        # until a GPU run checks it (the bench measures it on and off).
        self.vocoder_stream = False
        # Rows join the running batch as their text is ready, the first alone until its first
        # audio; False: the first batch refined and started together (the bench's baseline).
        self.head_first = True
        # Decoders (KV caches, CUDA graphs) kept across jobs for the loaded model.
        self.decoders = DecoderPool()

    @property
    def cancelled(self) -> bool:
        """Whether the job running now was asked to stop."""
        token = self._running
        return token is not None and token.cancelled

    def cancel(self) -> None:
        token = self._running
        if token is not None:
            token.cancel()

    def _start(self, cancel: CancelToken | None) -> CancelToken:
        token = cancel or CancelToken()
        self._running = token
        token.check()  # cancelled while it waited: nothing to undo
        return token

    # -- loading ---------------------------------------------------------------------------
    def load(
        self,
        model: str = "demo",
        device: str | None = None,
        precision: str = "fp32",
        compile: bool = False,
        progress: LoadProgress | None = None,
        cancel: CancelToken | None = None,
        engine: str = "torch",
    ) -> LoadedModel:
        """Verify (building demo weights if needed) and load a model. Raises StudioError
        subclasses for anything the user can fix, Cancelled when cancelled. `engine`: torch,
        onnx or auto (see engine_choice.py); the front ends pass auto, their default."""
        report = progress or (lambda _stage, _fraction: None)
        token = self._start(cancel)
        try:
            return self._load(model, device, precision, compile, report, token, engine)
        finally:
            self._running = None

    def _load(
        self,
        model: str,
        device: str | None,
        precision: str,
        compile: bool,
        report: LoadProgress,
        cancel: CancelToken,
        engine: str,
    ) -> LoadedModel:
        target = resolve_device(device)
        chosen = check_precision(target, precision)
        kind = check_engine(target, chosen, engine)
        started = time.perf_counter()
        self.live.start("loading")

        info = verified_info(model, report, cancel)
        current = self.loaded
        if (
            self.model is not None
            and current is not None
            and current.info == info
            and current.device == target
            and current.compiled == compile
        ):
            self.decoders.clear()  # their caches and graphs are in the old dtype
            was = (current.precision, current.engine)
            try:
                switch_in_place(self.model, info, was, chosen, kind, report, cancel)
            except BaseException:
                # The switch left the GPT in fp32 on torch (loading.switch_in_place): say so,
                # never the precision and engine it had before.
                self.loaded = replace(current, precision=Precision.FP32, engine=EngineKind.TORCH)
                raise
        else:
            self.unload()
            self.model = load_fresh(info, target, compile, chosen, kind, report, cancel)
            self.model.on_vocoded = self.live.vocoded
            self.live.device = target.id  # only now: a failed switch keeps the old device's
        self.loaded = LoadedModel(info, target, chosen, compile, seconds_since(started), kind)
        self.live.update(stage="idle")
        report("ready", 1.0)
        return self.loaded

    def unload(self) -> None:
        self.decoders.clear()
        if self.model is not None:
            device = self.loaded.device.id if self.loaded else "cpu"
            self.model.unload()
            self.model = None
            self.loaded = None
            release_memory(device)

    def max_rows(self) -> int:
        """The most decoder rows for this device: on CUDA as many KV caches as free memory
        holds (up to decoder_pool.MAX_ROWS); elsewhere the fixed automatic batch."""
        model, loaded = self._require()
        if loaded.device.kind != "cuda":
            return AUTO_BATCH_MAX
        return cuda_rows(model, self.decoders)

    def _require(self) -> tuple[ChatModel, LoadedModel]:
        if self.model is None or self.loaded is None:
            raise ModelError(QT_TRANSLATE_NOOP("core", "No model is loaded."))
        return self.model, self.loaded

    def _random(self) -> bool:
        """Whether the loaded weights are random (demo): they never say EOS."""
        return self._require()[1].info.random_weights

    # -- speakers --------------------------------------------------------------------------
    def speaker_dim(self) -> int:
        return self._require()[0].hidden_size

    def sample_speaker(self, seed: int) -> str:
        """The speaker of a seed: the same string on every device (drawn on the CPU)."""
        return self._require()[0].sample_speaker(seed)

    def check_speaker(self, embedding: str) -> str:
        return self._require()[0].check_speaker(embedding)

    def check_voice(self, voice: Voice) -> Voice:
        """The voice checked against this model, as the prompt takes it (SpeakerError when
        unusable)."""
        return self._require()[0].checked_voice(voice)

    def resolve_voice(self, request: SynthesisRequest) -> Voice:
        """The request's voice: its library voice, else its embedding, else its seed's."""
        if request.voice is not None:
            return self.check_voice(request.voice)
        if request.speaker:
            return Voice(embedding=self.check_speaker(request.speaker))
        return Voice(embedding=self.sample_speaker(request.seed))

    def clone_voice(self, audio: np.ndarray, transcript: str) -> Voice:
        """A voice from a 24 kHz clip (clone.py checks it) and its transcript: the clip
        encoded by the DVAE encoder, as ChatTTS's `sample_audio_speaker` does."""
        model = self._require()[0]
        transcript = check_transcript(transcript)
        return Voice(sample=model.encode_sample(audio), transcript=transcript)

    # -- planning --------------------------------------------------------------------------
    def plan(self, request: SynthesisRequest) -> JobPlan:
        """The job as it will run: validated settings, its segments (the job's only split,
        after the pronunciation dictionary; the first sentence a segment of its own, for an
        early first audio), the batch size for this device, the voice."""
        from chattts_studio.core.text.lexicon import Lexicon

        request.validate()
        _model, loaded = self._require()
        lexicon = Lexicon(request.lexicon) if request.lexicon else None
        segments = tuple(split_segments(request.text, request.segment_size, lexicon, True))
        batch = request.batch_size or auto_batch_size(loaded.device.id, len(segments))
        if not request.batch_size and loaded.device.kind == "cuda":
            batch = max(1, min(self.max_rows(), len(segments)))  # rows from free memory
        voice = self.resolve_voice(request)
        return JobPlan(request, segments, batch, voice.embedding, voice)

    def _model_texts(
        self, request: SynthesisRequest, segments: list[Segment], batch: int, cancel: CancelToken
    ) -> ModelTexts:
        """Normalised (numbers read out, characters ChatTTS cannot say dropped) and, when
        asked, refined by the text pass (ChatModel.refine) a batch at a time, as decoding
        reaches them."""
        model, loaded = self._require()
        refine = None
        if request.refine_text:
            refine = RefineSettings(
                f"[oral_{request.oral}][laugh_{request.laugh}][break_{request.break_level}]",
                request.top_p,
                request.top_k,
            )
        random_weights = loaded.info.random_weights
        return ModelTexts(
            model, segments, refine, batch, cancel, self.live, random_weights, self.head_first
        )

    def _context(
        self, request: SynthesisRequest, cancel: CancelToken, count: int, stream: bool
    ) -> JobContext:
        model, loaded = self._require()
        settings = Settings(
            request.temperature, request.top_p, request.top_k, request.speed, request.seed
        )
        return JobContext(
            model,
            settings,
            cancel,
            self.live,
            loaded.device.id,
            count,
            stream,
            loaded.info.random_weights,
            self.cuda_graphs,
            self.vocoder_stream,
            self.decoders,
            self.head_first,
        )

    # -- takes -----------------------------------------------------------------------------
    def make_takes(
        self,
        orders: list[takes.TakeOrder],
        cancel: CancelToken,
        on_take: Callable[[takes.MadeTake], None],
        rows: takes.TakeRows | None = None,
        on_step: Callable[[int], None] | None = None,
    ) -> takes.TakeRows:
        """Every order's take as a row of one exact batch, each handed to `on_take` as soon as
        its audio exists (core/engine/takes.py); returns the shape used, which a take records
        to be made again at it."""
        return takes.make_takes(self, orders, cancel, on_take, rows, on_step)

    def take_rows(self, count: int, product_rows: int | None = None) -> takes.TakeRows:
        """The shape for `count` takes; `product_rows` to make takes again as they were made."""
        return takes.rows_for(self, count, product_rows)

    # -- synthesis -------------------------------------------------------------------------
    def synthesize(
        self,
        job: JobPlan | SynthesisRequest,
        listener: Listener | None = None,
        cancel: CancelToken | None = None,
    ) -> Iterator[SegmentResult]:
        """Yield each segment's result in text order. With a listener, playable audio goes to
        it as soon as it exists (chunks of the segment that plays next, then each segment), and
        a segment that starts again after out of memory is announced. Raises Cancelled after
        the last finished segment when cancelled, StudioError subclasses for bad input."""
        plan = job if isinstance(job, JobPlan) else self.plan(job)
        token = self._start(cancel)
        try:
            yield from self._synthesize(plan, listener, token)
        except Cancelled:
            self.live.update(stage="cancelled", compute_seconds=self.live.elapsed())
            raise
        finally:
            self._running = None

    def _synthesize(
        self, plan: JobPlan, listener: Listener | None, cancel: CancelToken
    ) -> Iterator[SegmentResult]:
        from chattts_studio.core.engine.producers import fast_events, stock_events

        request, segments = plan.request, list(plan.segments)
        _, loaded = self._require()
        reset_peak(loaded.device.id)
        start_live(self.live, segments, 1, request.refine_text, plan.batch_size, self._random())
        started = time.perf_counter()
        first_audio: float | None = None
        produced, steps, audio_seconds, peak, batch = 0, 0, 0.0, 0, plan.batch_size
        streamed: dict[int, int] = {}  # samples streamed of each unfinished segment
        try:
            seeds.seed_text_passes(request.seed)  # same request and seed, same audio
            texts = self._model_texts(request, segments, plan.batch_size, cancel)
            units = [
                Unit(seg.index, seg, plan.voice_at(seg.index), texts, plan.name_at(seg.index))
                for seg in segments
            ]
            ctx = self._context(request, cancel, len(segments), listener is not None)
            producer: Producer = fast_events if request.decoder == "fast" else stock_events
            for event in with_backoff(producer, ctx, units, plan.batch_size):
                if first_audio is None and not isinstance(event, SegmentRestarted):
                    first_audio = time.perf_counter() - started
                    self.live.update(first_audio_seconds=first_audio)
                if not isinstance(event, SegmentResult):
                    # Audio made so far counts from the first chunk (the job's live RTF).
                    if isinstance(event, AudioChunk):
                        streamed[event.index] = streamed.get(event.index, 0) + len(event.audio)
                    else:
                        streamed.pop(event.index, None)
                    self.live.update(
                        audio_seconds=audio_seconds + sum(streamed.values()) / SAMPLE_RATE
                    )
                    if listener is not None:
                        listener(event)
                    continue
                produced += 1
                steps += event.steps
                batch = event.batch_size
                audio_seconds += event.audio_seconds
                streamed.pop(event.index, None)
                self.live.update(audio_seconds=audio_seconds + sum(streamed.values()) / SAMPLE_RATE)
                if event.memory is not None:
                    peak = max(peak, event.memory.peak or event.memory.in_use)
                if event.hit_cap:
                    self.live.update(
                        note=Sentence(
                            QT_TRANSLATE_NOOP(
                                "core", "segment {number} reached the step cap: it may be cut short"
                            ),
                            number=event.index + 1,
                        )
                    )
                yield event
            cancel.check()
        finally:
            wall = time.perf_counter() - started
            # Every GPT step the job ran counts, also those of a segment cut short by cancel.
            steps = max(steps, self.live.snapshot().steps_done)
            self.last_summary = JobSummary(
                produced, audio_seconds, wall, steps, first_audio, peak or None, batch
            )
        self.live.update(stage="done", compute_seconds=wall)

    def audition(
        self,
        request: SynthesisRequest,
        speakers: list[str] | list[Voice],
        cancel: CancelToken | None = None,
    ) -> list[np.ndarray]:
        """The request's text read by each speaker, all speakers as rows of one batched pass
        (continuous batching over speaker x segment); one joined audio per speaker."""
        from chattts_studio.core.engine.producers import fast_events

        plan = self.plan(request)
        voices = [self.check_voice(s if isinstance(s, Voice) else Voice(s)) for s in speakers]
        token = self._start(cancel)
        segments = list(plan.segments)
        count = len(segments)
        try:
            start_live(
                self.live,
                segments,
                len(speakers),
                request.refine_text,
                plan.batch_size,
                self._random(),
            )
            seeds.seed_text_passes(request.seed)
            texts = self._model_texts(request, segments, plan.batch_size, token)
            units = [
                Unit(k * count + seg.index, seg, voice, texts)
                for k, voice in enumerate(voices)
                for seg in segments
            ]
            ctx = self._context(request, token, len(units), False)
            batch = max(1, min(plan.batch_size * len(speakers), len(units), 16))
            audio = {
                event.index: event.audio
                for event in with_backoff(fast_events, ctx, units, batch)
                if isinstance(event, SegmentResult)
            }
        except Cancelled:
            self.live.update(stage="cancelled")
            raise
        finally:
            self._running = None
        self.live.update(stage="done", compute_seconds=self.live.elapsed())
        return [
            join_clips([audio[k * count + i] for i in range(count)], request.pause_seconds)
            for k in range(len(speakers))
        ]
