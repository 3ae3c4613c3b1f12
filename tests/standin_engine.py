"""A stand-in engine for the window's logic tests, in the style of Picard's MockTagger: the
real Engine with its model and its producer replaced, so a window loads, synthesizes and
auditions in milliseconds through the real core/services op bodies.

What it keeps of the real Engine: planning (settings checked, the text split, the batch and
the voice resolved: Engine.plan), the voice and speaker checks, the cancel tokens and the
synthesize() wrapper that keeps last_summary. Its model is a ChatVoices over a few sizes (real
speaker strings and checks); its audio is a deterministic tone, not speech: each segment is its
expected GPT steps long (SAMPLES_PER_STEP a step, as the real loop makes), its pitch from the
voice (standin_audio). Nothing is read from disk but a model folder's manifest."""

import zlib
from collections.abc import Iterator
from types import SimpleNamespace

import numpy as np
import torch

from chattts_studio.core import SAMPLE_RATE, SAMPLES_PER_STEP
from chattts_studio.core.engine.cancel import CancelToken
from chattts_studio.core.engine.chattts.voices import ChatVoices
from chattts_studio.core.engine.devices import check_precision, resolve_device
from chattts_studio.core.engine.engine import Engine, Listener
from chattts_studio.core.engine.engine_choice import check_engine
from chattts_studio.core.engine.loading import LoadedModel, LoadProgress
from chattts_studio.core.engine.pipeline import start_live
from chattts_studio.core.engine.request import (
    AUTO_BATCH_MAX,
    AudioChunk,
    JobPlan,
    JobSummary,
    SegmentResult,
    SynthesisRequest,
    join_clips,
)
from chattts_studio.core.errors import ModelError, StudioError
from chattts_studio.core.text.prepare import Segment
from chattts_studio.core.voices.speaker_codec import encode_prompt
from chattts_studio.core.voices.voice import Voice
from chattts_studio.core.weights import models

OFFICIAL_HIDDEN = 768  # ChatTTS's GPT width: a speaker of a model without demo sizes
NUM_VQ, NUM_CODES = 4, 626  # ChatTTS's codebooks and codes per codebook (EOS included)
RTF = 0.1  # the compute time each segment reports, as a share of its audio's length
FAILURE = "The stand-in engine failed as the test asked."


def standin_audio(segment: Segment, voice: Voice) -> np.ndarray:
    """A segment's stand-in audio: a quiet sine of `segment.expected_steps` GPT steps, its
    pitch (200-599 Hz) fixed by the voice. The same segment and voice give the same samples."""
    samples = segment.expected_steps * SAMPLES_PER_STEP
    pitch = 200 + zlib.crc32(voice.key().encode()) % 400
    t = np.arange(samples, dtype=np.float64) / SAMPLE_RATE
    return (0.1 * np.sin(2 * np.pi * pitch * t)).astype(np.float32)


class StandinModel(ChatVoices):
    """What Engine's speaker and voice code reads of a loaded model: its width, codebooks and
    speaker statistics (std 1, mean 0), so seeds give real speaker strings of that width."""

    def __init__(self, hidden_size: int) -> None:
        speaker = SimpleNamespace(
            dim=hidden_size, std=torch.ones(hidden_size), mean=torch.zeros(hidden_size)
        )
        self._chat = SimpleNamespace(
            speaker=speaker,
            gpt=SimpleNamespace(num_vq=NUM_VQ, num_audio_tokens=NUM_CODES),
            config=SimpleNamespace(gpt=SimpleNamespace(hidden_size=hidden_size)),
        )

    def normalize(self, text: str) -> str:
        return text.strip()

    def encode_sample(self, wav: np.ndarray) -> str:
        """A recording's sample string: codes counting up, a frame per 512 samples (as the
        DVAE makes), so the real sample checks accept it."""
        frames = max(1, len(wav) // 512)
        codes = np.arange(NUM_VQ * frames).reshape(NUM_VQ, frames) % (NUM_CODES - 1)
        return encode_prompt(codes)

    def unload(self) -> None:
        pass


class StandinEngine(Engine):
    """The real Engine around a StandinModel and a tone for audio (see the module). Set
    `fail_at` to a segment's index to make a synthesis fail there with a StudioError."""

    def __init__(self) -> None:
        super().__init__()
        self.fail_at: int | None = None

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
        """Engine.load's inner step: the real choice of device, precision and engine (and their
        refusals); the model's name resolved, its files never read."""
        target = resolve_device(device)
        chosen = check_precision(target, precision)
        kind = check_engine(target, chosen, engine)
        info = models.resolve(model)
        if not info.random_weights and not info.folder.is_dir():
            raise ModelError(f"Model '{model}' is not downloaded (stand-in engine).")
        self.live.start("loading")
        report("loading", 0.5)
        cancel.check()
        hidden = ((info.dims or {}).get("gpt") or {}).get("hidden_size", OFFICIAL_HIDDEN)
        self.model = StandinModel(int(hidden))  # type: ignore[assignment]
        self.loaded = LoadedModel(info, target, chosen, compile, 0.0, kind)
        self.live.device = target.id
        self.live.update(stage="idle")
        report("ready", 1.0)
        return self.loaded

    def unload(self) -> None:
        self.model = None
        self.loaded = None

    def max_rows(self) -> int:
        return AUTO_BATCH_MAX  # no KV cache to fit, on any device

    def _synthesize(
        self, plan: JobPlan, listener: Listener | None, cancel: CancelToken
    ) -> Iterator[SegmentResult]:
        """What Engine.synthesize runs: each segment's tone in text order, streamed first as
        one final chunk when there is a listener; cancel is checked before each segment."""
        segments = list(plan.segments)
        random = self.loaded is not None and self.loaded.info.random_weights
        start_live(self.live, segments, 1, plan.request.refine_text, plan.batch_size, random)
        made, seconds = 0, 0.0
        try:
            for segment in segments:
                cancel.check()
                if segment.index == self.fail_at:
                    raise StudioError(FAILURE)
                audio = standin_audio(segment, plan.voice_at(segment.index))
                if listener is not None:
                    listener(AudioChunk(segment.index, audio, True))
                result = SegmentResult(
                    segment.index,
                    len(segments),
                    segment.shown,
                    audio,
                    segment.expected_steps,
                    RTF * len(audio) / SAMPLE_RATE,
                    plan.batch_size,
                    speaker=plan.name_at(segment.index),
                )
                made += 1
                seconds += result.audio_seconds
                self.live.update(segments_done=made, audio_seconds=seconds)
                yield result
            cancel.check()
        finally:
            steps = round(seconds * SAMPLE_RATE / SAMPLES_PER_STEP)
            self.last_summary = JobSummary(
                made, seconds, RTF * seconds, steps, 0.0 if made else None, None, plan.batch_size
            )
        self.live.update(stage="done", compute_seconds=RTF * seconds)

    def audition(
        self,
        request: SynthesisRequest,
        speakers: list[str] | list[Voice],
        cancel: CancelToken | None = None,
    ) -> list[np.ndarray]:
        """Each speaker's tone for the request's segments, joined with its pauses."""
        plan = self.plan(request)
        voices = [self.check_voice(s if isinstance(s, Voice) else Voice(s)) for s in speakers]
        token = self._start(cancel)
        try:
            clips = []
            for voice in voices:
                token.check()
                audio = [standin_audio(segment, voice) for segment in plan.segments]
                clips.append(join_clips(audio, request.pause_seconds))
        finally:
            self._running = None
        seconds = sum(len(clip) for clip in clips) / SAMPLE_RATE
        self.live.update(stage="done", compute_seconds=RTF * seconds)
        return clips
