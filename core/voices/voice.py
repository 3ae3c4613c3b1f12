"""A voice as the model is conditioned on it: a speaker embedding, a cloned sample, or both.

Kept free of heavy imports: the speaker library (which the window imports before torch) and
requests carry voices around as plain strings."""

import hashlib
from dataclasses import dataclass

# OpenAI's voice names, so clients (and blends, in every front end) that only know them work:
# each is a fixed seed's speaker.
OPENAI_VOICES = {
    name: 1000 + i
    for i, name in enumerate(
        "alloy ash ballad coral echo fable onyx nova sage shimmer verse marin cedar".split()
    )
}


@dataclass(frozen=True)
class Voice:
    """What ChatTTS's InferCodeParams call `spk_emb`, `spk_smp` and `txt_smp`.

    - `embedding`: the 150-character speaker string (a seed's speaker, or one pasted in).
    - `sample`: a reference recording encoded by the DVAE encoder (ChatTTS's `encode_prompt`
      string of its [num_vq, frames] codes); its codes follow the text in the prompt.
    - `transcript`: what is said in the sample; it precedes the text in the prompt.
    A cloned voice has a sample and a transcript and usually no embedding."""

    embedding: str = ""
    sample: str = ""
    transcript: str = ""

    @property
    def cloned(self) -> bool:
        return bool(self.sample)

    def key(self) -> str:
        """A short stable id of the voice (preview file names, render settings, dedupe)."""
        data = "\0".join((self.embedding, self.sample, self.transcript)).encode()
        return hashlib.sha256(data).hexdigest()[:16]
