"""The synthesis engine: loads a ChatTTS model on a device and precision, and turns requests
into audio segment by segment, with progress, cancel and live metrics."""

import contextlib
import logging
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np
import torch

from . import SAMPLES_PER_STEP, models
from .decode import Job
from .devices import Device, Precision, check_precision, resolve_device
from .errors import Cancelled, DeviceError, ModelError, SpeakerError
from .metrics import LiveMetrics, memory_snapshot, reset_peak
from .quiet import quiet_libraries
from .request import AudioChunk, JobSummary, SegmentResult, SynthesisRequest, join_clips
from .text import NUMBER_READERS, Segment, split_segments

quiet_libraries()

log = logging.getLogger("chattts_studio")
LoadProgress = Callable[[str, float], None]  # (stage, fraction 0..1)


class _CancelContext:
    """Stands in for ChatTTS's GPT.Context: its generate loop asks get() after every step."""

    def __init__(self, event: threading.Event) -> None:
        self._event = event

    def get(self) -> bool:
        return self._event.is_set()

    def set(self, value: bool) -> None:
        # Chat.infer calls set(False) as it starts: a cancel meant for an earlier job must not
        # stop it (the bench and anyone calling infer directly rely on this).
        if value:
            self._event.set()
        else:
            self._event.clear()


@dataclass(frozen=True)
class LoadedModel:
    info: models.ModelInfo
    device: Device
    precision: Precision
    compiled: bool
    load_seconds: float


class Engine:
    """Owns one ChatTTS `Chat`. Use it from one thread at a time; cancel() and live.snapshot()
    are safe from any thread."""

    def __init__(self) -> None:
        self.chat: object | None = None
        self.loaded: LoadedModel | None = None
        self.live = LiveMetrics()
        self._cancel = threading.Event()
        self._cancel_stale = False  # set when a job ended cancelled
        self._batch_rows: list[int] = []  # step caps of the batch being decoded
        self._batch_step = 0
        self.last_summary: JobSummary | None = None
        self._on_chunk: Callable[[AudioChunk], None] | None = None
        self._job_started = 0.0
        self._first_audio: float | None = None

    # -- loading ---------------------------------------------------------------------------
    def load(
        self,
        model: str = "demo",
        device: str | None = None,
        precision: str = "fp32",
        compile: bool = False,
        progress: LoadProgress | None = None,
    ) -> LoadedModel:
        """Verify (building demo weights if needed) and load a model. Raises StudioError
        subclasses for anything the user can fix, Cancelled when cancelled."""

        report = progress or (lambda _stage, _fraction: None)
        with self._job():
            return self._load(model, device, precision, compile, report)

    def _load(
        self, model: str, device: str | None, precision: str, compile: bool, report: LoadProgress
    ) -> LoadedModel:
        import ChatTTS

        target = resolve_device(device)
        chosen = check_precision(target, precision)
        started = time.perf_counter()
        self.live.device = target.id
        self.live.start("loading")

        def verify_progress(done: int, total: int) -> None:
            report("verifying", done / total if total else 0.0)

        info = models.ensure(
            model, verify_progress, self._cancel.is_set, log=lambda msg: report(msg, 0.0)
        )
        if self._cancel.is_set():
            raise Cancelled()
        self.unload()
        report("loading", 0.5)
        chat = ChatTTS.Chat(logging.getLogger("ChatTTS"))
        from .demo_weights import build_config

        chat.config = build_config(info.dims)
        chat.sha256_map = models.hashes_for(info)
        try:
            ok = chat.load(
                source="custom",
                custom_path=str(info.folder),
                device=target.torch_device(),
                compile=compile,
            )
        except (RuntimeError, OSError, ValueError, KeyError) as exc:
            raise ModelError(
                f"Model '{info.name}' could not be loaded: {str(exc).splitlines()[0][:200]}"
            ) from None
        if not ok:
            raise ModelError(
                f"Model '{info.name}' failed ChatTTS's own file check; verify it "
                "with 'chattts-studio-cli model verify'."
            )
        if self._cancel.is_set():  # ChatTTS's own load cannot be interrupted; stop after it
            chat.unload()
            raise Cancelled()
        if chosen is Precision.INT8:
            # Batch-1 decode on a CPU is bound by reading the GPT's weights: int8 reads 4x less.
            torch.ao.quantization.quantize_dynamic(
                chat.gpt.gpt,  # type: ignore[attr-defined]
                {torch.nn.Linear},
                dtype=torch.qint8,
                inplace=True,
            )
        elif chosen is not Precision.FP32:
            # The GPT is 90% of the work; ChatTTS casts its inputs to the GPT's dtype and its
            # outputs back to fp32, so the decoder and vocoder stay fp32 (FFT needs it on CPU).
            chat.gpt.gpt.to(chosen.dtype)  # type: ignore[attr-defined]
        for lang, reader in NUMBER_READERS.items():
            chat.normalizer.register(lang, reader)  # type: ignore[attr-defined]
        # ChatTTS's normalizer is numba code compiled on first use (2-3 s): pay it while
        # loading, not in the first job's time to first audio.
        chat.normalizer("你好！[uv_break]Hello 1。", True, True, None)  # type: ignore[attr-defined]
        chat.context = _CancelContext(self._cancel)  # type: ignore[attr-defined]
        chat.gpt.gpt.register_forward_hook(self._on_gpt_step)  # type: ignore[attr-defined]
        if target.kind == "cuda":
            torch.cuda.empty_cache()  # drop what loading left in the cache
        self.chat = chat
        self.loaded = LoadedModel(info, target, chosen, compile, time.perf_counter() - started)
        self.live.update(stage="idle")
        report("ready", 1.0)
        return self.loaded

    def unload(self) -> None:
        if self.chat is not None:
            self.chat.unload()  # type: ignore[attr-defined]
            self.chat = None
            self.loaded = None
            import gc

            gc.collect()
            if torch.cuda.is_available():
                torch.cuda.empty_cache()

    def cancel(self) -> None:
        """Ask the running job to stop (from any thread). A cancel that comes between two
        jobs stops the next one: it was meant for a job the caller had already queued."""
        self._cancel.set()

    def reset_cancel(self) -> None:
        """Forget any cancel: for a caller that knows the next job was not cancelled (the
        window's worker numbers its jobs)."""
        self._cancel.clear()
        self._cancel_stale = False

    @contextlib.contextmanager
    def _job(self) -> Iterator[None]:
        """One load, synthesis or audition, for the cancel bookkeeping below."""
        self._begin_job()
        try:
            yield
        finally:
            self._end_job()

    def _begin_job(self) -> None:
        # Only a cancel left over from the previous job is cleared, never a fresh one.
        if self._cancel_stale:
            self._cancel.clear()
        self._cancel_stale = False

    def _end_job(self) -> None:
        self._cancel_stale = self._cancel.is_set()

    @property
    def cancelled(self) -> bool:
        return self._cancel.is_set()

    def _require(self) -> tuple[object, LoadedModel]:
        if self.chat is None or self.loaded is None:
            raise ModelError("No model is loaded.")
        return self.chat, self.loaded

    # -- speakers --------------------------------------------------------------------------
    def speaker_dim(self) -> int:
        chat, _ = self._require()
        return int(chat.config.gpt.hidden_size)  # type: ignore[attr-defined]

    def sample_speaker(self, seed: int) -> str:
        """The speaker of a seed: the same string on every device (drawn on the CPU)."""
        from ChatTTS.model.speaker import Speaker

        chat, _ = self._require()
        speaker = chat.speaker  # type: ignore[attr-defined]
        generator = torch.Generator().manual_seed(int(seed))
        std, mean = speaker.std.float().cpu(), speaker.mean.float().cpu()
        sample = torch.randn(speaker.dim, generator=generator) * std + mean
        return str(Speaker._encode(sample))

    def check_speaker(self, embedding: str) -> str:
        from ChatTTS.model.speaker import Speaker

        try:
            values = Speaker._decode(embedding.strip())
        except Exception:
            raise SpeakerError("The speaker is not a valid ChatTTS speaker embedding.") from None
        if values.size != self.speaker_dim() or not np.isfinite(values).all():
            raise SpeakerError(
                f"The speaker embedding has {values.size} values but this model "
                f"needs {self.speaker_dim()}; pick a speaker made with it."
            )
        return embedding.strip()

    # -- synthesis -------------------------------------------------------------------------
    def plan(self, request: SynthesisRequest) -> list[Segment]:
        request.validate()
        return split_segments(request.text, request.segment_size)

    def _on_gpt_step(self, _module: object, _args: object, _output: object) -> None:
        if not self._batch_rows:
            return
        step = self._batch_step
        self._batch_step += 1
        self.live.add_steps(sum(1 for cap in self._batch_rows if cap > step))

    def synthesize(
        self, request: SynthesisRequest, on_chunk: Callable[[AudioChunk], None] | None = None
    ) -> Iterator[SegmentResult]:
        """Yield each segment's result in text order. Raises Cancelled after the last finished
        segment when cancelled, and StudioError subclasses for bad input."""
        chat, loaded = self._require()
        segments = self.plan(request)
        speaker = (
            self.check_speaker(request.speaker)
            if request.speaker
            else self.sample_speaker(request.seed)
        )
        self._begin_job()
        device = loaded.device.id
        reset_peak(device)
        self.live.start("decode", len(segments), sum(s.step_cap for s in segments))
        started = time.perf_counter()
        self._job_started, self._first_audio = started, None
        # Chunks go to on_chunk as soon as they are playable: the segment that plays next is
        # streamed while it decodes (fast path); every segment arrives there, in order.
        self._on_chunk = on_chunk
        total_steps = 0
        peak = 0
        produced, audio_seconds = 0, 0.0
        producer = self._fast_results if request.decoder == "fast" else self._stock_results
        try:
            for result in producer(chat, loaded, request, speaker, segments):
                total_steps += result.steps
                if request.decoder == "stock" and on_chunk is not None:
                    on_chunk(AudioChunk(result.index, result.audio, True))
                self._note_first_audio()
                produced += 1
                audio_seconds += result.audio_seconds
                self.live.update(audio_seconds=audio_seconds)
                if result.memory is not None:
                    peak = max(peak, result.memory.peak or result.memory.in_use)
                yield result
        except Cancelled:
            self.live.update(stage="cancelled", compute_seconds=self.live.elapsed())
            raise
        finally:
            self._end_job()
            self._batch_rows = []
            wall = time.perf_counter() - started
            self.last_summary = JobSummary(
                produced, audio_seconds, wall, total_steps, self._first_audio, peak or None
            )
        self.live.update(stage="done", compute_seconds=wall)

    def audition(self, request: SynthesisRequest, speakers: list[str]) -> list[np.ndarray]:
        """The request's text read by each speaker, all speakers as rows of one batched pass
        (continuous batching over speaker x segment); one joined audio per speaker."""

        chat, loaded = self._require()
        segments = self.plan(request)
        speakers = [self.check_speaker(s) for s in speakers]
        with self._job():
            return self._audition(chat, loaded, request, segments, speakers)

    def _audition(
        self,
        chat: object,
        loaded: LoadedModel,
        request: SynthesisRequest,
        segments: list[Segment],
        speakers: list[str],
    ) -> list[np.ndarray]:
        from .decode import FastDecoder, Sampling

        self.live.start(
            "decode",
            len(segments) * len(speakers),
            sum(s.step_cap for s in segments) * len(speakers),
        )
        torch.manual_seed(request.seed * 1009)
        texts = self._model_texts(chat, request, segments)
        jobs = [
            job
            for k, speaker in enumerate(speakers)
            for job in self._jobs(
                chat,
                request,
                speaker,
                segments,
                texts,
                loaded.info.random_weights,
                k * len(segments),
            )
        ]
        slots = max(1, min(request.batch_size * len(speakers), len(jobs), 16))
        decoder = FastDecoder(chat, slots, max(j.length for j in jobs) + 1)
        sampling = Sampling(request.temperature, request.top_p, request.top_k)
        audio: dict[int, np.ndarray] = {}
        for job in decoder.run(jobs, sampling, self._cancel.is_set, self.live.add_steps):
            if job is not None:
                wav = chat._decode_to_wavs([torch.stack(job.hiddens)], True)[0]  # type: ignore[attr-defined]
                audio[job.key] = np.asarray(wav[: job.steps * SAMPLES_PER_STEP], np.float32)
        if self._cancel.is_set():
            self.live.update(stage="cancelled")
            raise Cancelled()
        self.live.update(stage="done", compute_seconds=self.live.elapsed())
        count = len(segments)
        return [
            join_clips([audio[k * count + i] for i in range(count)], request.pause_seconds)
            for k in range(len(speakers))
        ]

    def _stock_results(
        self,
        chat: object,
        loaded: LoadedModel,
        request: SynthesisRequest,
        speaker: str,
        segments: list[Segment],
    ) -> Iterator[SegmentResult]:
        """The reference path: ChatTTS's own generate loop, `batch size` segments at a time."""
        batch_size = request.batch_size
        pending = list(segments)
        batch_no = 0
        while pending:
            batch = pending[:batch_size]
            try:
                results = self._run_batch(
                    chat, loaded, request, speaker, batch, batch_no, len(segments)
                )
            except torch.OutOfMemoryError:
                batch_size = self._smaller_batch(batch_size)
                continue
            pending = pending[len(batch) :]
            batch_no += 1
            yield from results

    def _smaller_batch(self, batch_size: int) -> int:
        """After a CUDA out-of-memory error: half the batch, or give up at 1."""
        if batch_size == 1:
            raise DeviceError(
                "Out of memory even at batch size 1; lower the segment size or use another device."
            ) from None
        batch_size = max(1, batch_size // 2)
        if torch.cuda.is_available():
            torch.cuda.empty_cache()
        self.live.update(note=f"out of memory: batch size lowered to {batch_size}")
        return batch_size

    def _model_texts(
        self, chat: object, request: SynthesisRequest, segments: list[Segment]
    ) -> list[str]:
        """Normalised (numbers read out, characters ChatTTS cannot say dropped) and, when
        asked, refined by ChatTTS's text pass, `batch size` segments at a time."""
        c = chat
        texts = [c.normalizer(s.text, True, True, None) for s in segments]  # type: ignore[attr-defined]
        if not request.refine_text:
            return texts
        from ChatTTS import Chat

        self.live.update(stage="refine")
        refined_all: list[str] = []
        for start in range(0, len(texts), request.batch_size):
            chunk = texts[start : start + request.batch_size]
            params = Chat.RefineTextParams(
                prompt=f"[oral_{request.oral}][laugh_{request.laugh}][break_{request.break_level}]",
                top_P=request.top_p,
                top_K=request.top_k,
                max_new_token=max(2 * len(t) + 16 for t in chunk),
                min_new_token=1,
                show_tqdm=False,
                ensure_non_empty=False,
            )
            refined = c._refine_text(chunk, c.device, params)  # type: ignore[attr-defined]
            break_0 = c.tokenizer.break_0_ids  # type: ignore[attr-defined]
            refined_all += c.tokenizer.decode([i[i.less(break_0)] for i in refined.ids])  # type: ignore[attr-defined]
            refined.destroy()
            if self._cancel.is_set():
                raise Cancelled()
        self.live.update(stage="decode")
        return refined_all

    def _prompt_ids(
        self, chat: object, text: str, request: SynthesisRequest, speaker: str
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Input ids and text mask for one segment, as ChatTTS's _infer_code makes them."""
        c = chat
        input_ids, _, text_mask = c.tokenizer.encode(  # type: ignore[attr-defined]
            c.speaker.decorate_code_prompts([text], f"[speed_{request.speed}]", None, speaker),  # type: ignore[attr-defined]
            c.config.gpt.num_vq,  # type: ignore[attr-defined]
            device=c.device_gpt,  # type: ignore[attr-defined]
        )
        return input_ids, text_mask

    def _embed(
        self, chat: object, ids: tuple[torch.Tensor, torch.Tensor], speaker: str
    ) -> torch.Tensor:
        c = chat
        input_ids, text_mask = ids
        emb = c.embed(input_ids, text_mask)  # type: ignore[attr-defined]
        c.speaker.apply(emb, speaker, input_ids, c.tokenizer.spk_emb_ids, c.device_gpt)  # type: ignore[attr-defined]
        return emb

    def _prompt(
        self, chat: object, text: str, request: SynthesisRequest, speaker: str
    ) -> torch.Tensor:
        """The GPT's input embedding for one segment, exactly as ChatTTS's _infer_code builds it."""
        return self._embed(chat, self._prompt_ids(chat, text, request, speaker), speaker)

    def _jobs(
        self,
        chat: object,
        request: SynthesisRequest,
        speaker: str,
        segments: list[Segment],
        texts: list[str],
        random_weights: bool,
        key_base: int = 0,
    ) -> list[Job]:
        """Decode jobs whose embeddings are made only when a row takes them."""

        jobs = []
        for seg, text in zip(segments, texts, strict=True):
            ids = self._prompt_ids(chat, text, request, speaker)
            jobs.append(
                Job(
                    key_base + seg.index,
                    lambda ids=ids: self._embed(chat, ids, speaker),  # type: ignore[misc]
                    seg.step_cap,
                    seg.step_cap if random_weights else 1,
                    prompt_len=int(ids[0].shape[1]),
                )
            )
        return jobs

    def _fast_results(
        self,
        chat: object,
        loaded: LoadedModel,
        request: SynthesisRequest,
        speaker: str,
        segments: list[Segment],
    ) -> Iterator[SegmentResult]:
        """The fast path: Studio's decode loop with continuous batching, segments admitted in
        text order (so the next one to play is never starved), results handed back in text
        order. With a chunk callback, the segment that plays next is vocoded while it grows."""
        from .decode import FastDecoder, Sampling
        from .streaming import ChunkVocoder

        torch.manual_seed(request.seed * 1009)  # same request and seed, same audio
        texts = self._model_texts(chat, request, segments)
        random_weights = loaded.info.random_weights
        remaining = self._jobs(chat, request, speaker, segments, texts, random_weights)
        by_index = {seg.index: seg for seg in segments}
        max_len = max(j.length for j in remaining) + 1
        slots = min(request.batch_size, len(remaining))
        sampling = Sampling(request.temperature, request.top_p, request.top_k)
        finished: dict[int, SegmentResult] = {}
        streams: dict[int, ChunkVocoder] = {}
        on_chunk = self._on_chunk
        next_index = 0
        started = time.perf_counter()
        row_steps = [0]

        def on_step(rows: int) -> None:
            row_steps[0] += rows
            self.live.add_steps(rows)

        def send(index: int, audio: np.ndarray, final: bool) -> None:
            if on_chunk is not None:
                self._note_first_audio()
                on_chunk(AudioChunk(index, audio, final))

        self.live.update(stage="decode", segment=1, batch_size=slots)
        while remaining:
            try:
                decoder = FastDecoder(chat, slots, max_len)
                for job in decoder.run(remaining, sampling, self._cancel.is_set, on_step):
                    if job is None:  # a step went by: feed the segment that plays next
                        head = next((j for j in decoder.active if j and j.key == next_index), None)
                        if on_chunk is not None and head is not None:
                            stream = streams.setdefault(head.key, ChunkVocoder(chat))
                            if stream.ready(head.steps):
                                send(head.key, stream.chunk(head.hiddens, False), False)
                        continue
                    remaining.remove(job)
                    # A row's share of the wall time: its steps at the average cost so far.
                    per_step = (time.perf_counter() - started) / max(1, row_steps[0])
                    streamed = streams.get(job.key)
                    if streamed is not None:
                        send(job.key, streamed.chunk(job.hiddens, True), True)
                    finished[job.key] = self._vocode(
                        chat,
                        loaded,
                        job.hiddens,
                        by_index[job.key],
                        len(segments),
                        job.steps * per_step,
                        slots,
                        streamed.audio() if streamed is not None else None,
                    )
                    while next_index in finished:
                        result = finished.pop(next_index)
                        if next_index not in streams:
                            send(next_index, result.audio, True)
                        self.live.update(segment=min(next_index + 2, len(segments)))
                        yield result
                        next_index += 1
            except torch.OutOfMemoryError:
                decoder = None  # free its KV cache before trying smaller
                slots = self._smaller_batch(slots)
                for job in remaining:
                    job.hiddens.clear()
                    job.tokens.clear()
                    streams.pop(job.key, None)
                continue
            if self._cancel.is_set():
                raise Cancelled()

    def _note_first_audio(self) -> None:
        if self._first_audio is None:
            self._first_audio = time.perf_counter() - self._job_started
            self.live.update(first_audio_seconds=self._first_audio)

    def _vocode(
        self,
        chat: object,
        loaded: LoadedModel,
        hiddens: list[torch.Tensor],
        segment: Segment,
        count: int,
        compute: float,
        batch: int,
        streamed: np.ndarray | None = None,
    ) -> SegmentResult:
        """The segment's result; `streamed` is its audio when it was already sent in chunks."""
        began = time.perf_counter()
        if streamed is None:
            self.live.update(stage="vocoder")
            wav = chat._decode_to_wavs([torch.stack(hiddens)], True)[0]  # type: ignore[attr-defined]
            self.live.update(stage="decode")
        else:
            wav = streamed
        steps = len(hiddens)
        return SegmentResult(
            index=segment.index,
            segments=count,
            text=segment.text,
            audio=np.ascontiguousarray(wav[: steps * SAMPLES_PER_STEP], dtype=np.float32),
            steps=steps,
            compute_seconds=compute + time.perf_counter() - began,
            batch_size=batch,
            memory=memory_snapshot(loaded.device.id),
        )

    def _run_batch(
        self,
        chat: object,
        loaded: LoadedModel,
        request: SynthesisRequest,
        speaker: str,
        batch: list[Segment],
        batch_no: int,
        count: int,
    ) -> list[SegmentResult]:
        from ChatTTS import Chat

        c = chat  # ChatTTS has no type hints; keep the attribute noise in one place
        started = time.perf_counter()
        # One seed per batch, so the same request and seed give the same audio.
        torch.manual_seed(request.seed * 1009 + batch_no)
        self.live.update(segment=batch[0].index + 1, batch_size=len(batch))
        texts = self._model_texts(chat, request, batch)
        self.live.update(stage="decode")
        caps = [s.step_cap for s in batch]
        params = Chat.InferCodeParams(
            prompt=f"[speed_{request.speed}]",
            spk_emb=speaker,
            temperature=request.temperature,
            top_P=request.top_p,
            top_K=request.top_k,
            max_new_token=max(caps),
            # Random weights would stop at a random EOS; hold it off so demo audio has the
            # length speech of that text would have. Real weights end when the model says so.
            min_new_token=max(caps) if loaded.info.random_weights else 1,
            show_tqdm=False,
            ensure_non_empty=False,
        )
        self._batch_rows, self._batch_step = caps, 0
        try:
            generated = next(c._infer_code(list(texts), False, c.device, True, params))  # type: ignore[attr-defined]
        finally:
            self._batch_rows = []
        if self._cancel.is_set():
            generated.destroy()
            raise Cancelled()
        # Random weights never emit EOS: each row stops at its own cap, not the batch's.
        steps = [min(len(h), cap) for h, cap in zip(generated.hiddens, caps, strict=True)]
        hiddens = [h[:n] for h, n in zip(generated.hiddens, steps, strict=True)]
        self.live.update(stage="vocoder")
        wavs = c._decode_to_wavs(hiddens, True)  # type: ignore[attr-defined]
        generated.destroy()
        elapsed = time.perf_counter() - started
        memory = memory_snapshot(loaded.device.id)
        total = sum(steps) or 1
        self.live.update(stage="decode")
        return [
            SegmentResult(
                index=seg.index,
                segments=count,
                text=seg.text,
                audio=np.ascontiguousarray(wavs[row, : n * SAMPLES_PER_STEP], dtype=np.float32),
                steps=n,
                compute_seconds=elapsed * n / total,
                batch_size=len(batch),
                memory=memory,
            )
            for row, (seg, n) in enumerate(zip(batch, steps, strict=True))
        ]
