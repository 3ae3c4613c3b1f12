"""ChatModel's speakers: a seed's speaker, a recording encoded for cloning, and the checks that
a speaker or a sample suits this model."""

import numpy as np
import torch

from chattts_studio.core.engine.chattts import voice_checks
from chattts_studio.core.engine.chattts.parts import ChatParts
from chattts_studio.core.engine.decode import host_reads
from chattts_studio.core.errors import ModelError, SpeakerError
from chattts_studio.core.messages import QT_TRANSLATE_NOOP, Sentence
from chattts_studio.core.voices.speaker_codec import encode_prompt, encode_speaker
from chattts_studio.core.voices.voice import Voice


class ChatVoices(ChatParts):
    def sample_speaker(self, seed: int) -> str:
        """The speaker of a seed: the same string on every device (drawn on the CPU)."""
        speaker = self._chat.speaker
        generator = torch.Generator().manual_seed(int(seed))
        std, mean = speaker.std.float().cpu(), speaker.mean.float().cpu()
        sample = torch.randn(speaker.dim, generator=generator) * std + mean
        return encode_speaker(sample)  # Speaker._encode's string, without its GIL stall

    def encode_sample(self, wav: np.ndarray) -> str:
        """A 24 kHz mono clip encoded by the DVAE encoder into ChatTTS's sample string, exactly
        as `Chat.sample_audio_speaker` does (on the DVAE's device)."""
        dvae = self._chat.dvae
        if getattr(dvae, "encoder", None) is None or dvae.vq_layer is None:
            raise ModelError(
                Sentence(
                    QT_TRANSLATE_NOOP(
                        "core", "This model has no {part} encoder, so it cannot clone a voice."
                    ),
                    part="DVAE",
                )
            )
        device = next(dvae.parameters()).device
        audio = torch.from_numpy(np.ascontiguousarray(wav, dtype=np.float32)).to(device)
        with torch.inference_mode():
            codes = dvae.sample_audio(audio)
        # Speaker.encode_prompt's string, without its GIL stall.
        return encode_prompt(host_reads.codes(codes))

    def sample_codes(self, sample: str) -> torch.Tensor:
        """A sample string's codes [num_vq, frames] (int32), decoded with a bound."""
        return voice_checks.sample_codes(self.num_vq, sample)

    def check_sample(self, sample: str) -> int:
        """The sample's length in frames; SpeakerError when this model cannot read it."""
        return voice_checks.check_sample(self.num_vq, self.num_codes, sample)

    def check_speaker(self, embedding: str) -> str:
        """The embedding, stripped, when this model can use it; SpeakerError otherwise."""
        return voice_checks.check_speaker(self.hidden_size, embedding)

    def checked_voice(self, voice: Voice) -> Voice:
        """The voice checked against this model, its transcript normalised as the model reads
        text (numbers read out): what goes into the prompt. SpeakerError when unusable."""
        embedding = self.check_speaker(voice.embedding) if voice.embedding else ""
        transcript = ""
        if voice.sample:
            self.check_sample(voice.sample)
            transcript = self.normalize(voice.transcript.strip())
            if not transcript.strip():
                raise SpeakerError(
                    QT_TRANSLATE_NOOP(
                        "core", "A cloned voice needs the transcript of its recording."
                    )
                )
        elif not embedding:
            raise SpeakerError(
                QT_TRANSLATE_NOOP("core", "The voice has neither a speaker embedding nor a sample.")
            )
        return Voice(embedding, voice.sample, transcript)
