"""What every side of ChatModel reads of the loaded ChatTTS `Chat`: where it runs and its
dimensions (chat.py's ChatModel, audio.py's vocoder and voices.py's speakers share it)."""

from typing import Any

import torch


class ChatParts:
    """The `Chat` (ChatTTS's, untyped) and typed access to its devices and sizes."""

    _chat: Any

    @property
    def gpt(self) -> Any:
        """The transformers LlamaModel (layers, rotary embedding, norm, config)."""
        return self._chat.gpt.gpt

    @property
    def device(self) -> torch.device:
        """Where the decoder, vocoder and sampling run."""
        return torch.device(self._chat.device)

    @property
    def gpt_device(self) -> torch.device:
        """Where the GPT runs (ChatTTS keeps it on the CPU on MPS)."""
        return torch.device(self._chat.device_gpt)

    @property
    def hidden_size(self) -> int:
        return int(self._chat.config.gpt.hidden_size)

    @property
    def num_vq(self) -> int:
        return int(self._chat.gpt.num_vq)

    @property
    def num_codes(self) -> int:
        """Audio codes per codebook, EOS included (the last one)."""
        return int(self._chat.gpt.num_audio_tokens)

    def normalize(self, text: str) -> str:
        """Numbers read out, characters ChatTTS cannot say dropped (its own normalizer)."""
        return str(self._chat.normalizer(text, True, True, None))
