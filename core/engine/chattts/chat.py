"""The one place that touches ChatTTS's internals: untyped and private, so the rest of core reaches
them only through `ChatModel`, typed. If ChatTTS changes, this file, parts.py, audio.py and
voices.py change with it.
"""

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

import torch

from chattts_studio.core import model_imports
from chattts_studio.core.engine.cancel import CancelToken
from chattts_studio.core.engine.chattts.audio import ChatVocoder
from chattts_studio.core.engine.chattts.voices import ChatVoices
from chattts_studio.core.engine.request import RefineSettings, SpeakerLike
from chattts_studio.core.errors import ModelError
from chattts_studio.core.messages import QT_TRANSLATE_NOOP, Sentence
from chattts_studio.core.voices.voice import Voice

if TYPE_CHECKING:
    from chattts_studio.core.engine.onnxrt.session import OrtStep
    from chattts_studio.core.engine.onnxrt.vocoder import OrtVocoder

StepHook = Callable[[torch.Tensor], None]  # the GPT's output hidden states of one forward


class RefineSteps(Protocol):
    """A refine pass run a step at a time (decode/text_pass.py's RefineRun)."""

    def step(self) -> bool: ...

    @property
    def ids(self) -> list[torch.Tensor]: ...


# A refine pass on the studio's own decode pieces (decode/text_pass.py's refine_with): the model,
# each text's prompt embedding, stock's RefineTextParams and the token in.
TextPass = Callable[["ChatModel", list[torch.Tensor], Any, CancelToken], RefineSteps]


def _voice(speaker: SpeakerLike) -> Voice:
    return speaker if isinstance(speaker, Voice) else Voice(embedding=speaker)


class _CancelContext:
    """Stands in for ChatTTS's GPT.Context: its generate loop asks get() after every step.
    It reads the running job's token; Chat.infer's set(False) at the start of a call clears
    nothing (a token is per job), and interrupt()'s set(True) cancels the running job."""

    def __init__(self) -> None:
        self.token: CancelToken | None = None

    def get(self) -> bool:
        return self.token is not None and self.token.cancelled

    def set(self, value: bool) -> None:
        if value and self.token is not None:
            self.token.cancel()


@dataclass(frozen=True)
class StockSettings:
    """ChatTTS's own generate loop, as `_infer_code` runs it."""

    speaker: SpeakerLike
    speed: int
    temperature: float
    top_p: float
    top_k: int
    max_steps: int
    min_steps: int


class ChatModel(ChatVocoder, ChatVoices):
    """A loaded ChatTTS `Chat` with typed access to the parts Studio uses."""

    def __init__(self, chat: Any) -> None:
        self._chat = chat
        self._context = _CancelContext()
        chat.context = self._context
        self._step_hooks: list[StepHook] = []
        chat.gpt.gpt.register_forward_hook(self._on_forward)
        # What runs the decoder's one-position steps instead of torch: ONNX Runtime's session
        # of the exported step (Engine.load with engine onnx); None: torch.
        self.decode_step: OrtStep | None = None
        # And the vocoder's DVAE decoder and Vocos (up to its ISTFT) the same way, on the CPU.
        self.vocoder_front: OrtVocoder | None = None
        # The refine pass that runs on `decode_step` when one is loaded (set by loading.py,
        # which may import the decode package: this module may not, the package imports it).
        self.text_pass: TextPass | None = None

    # -- loading ---------------------------------------------------------------------------
    @classmethod
    def load(
        cls,
        folder: str,
        config: Any,
        device: torch.device,
        compile: bool,
        name: str,
    ) -> "ChatModel":
        """ChatTTS's own loader for the files in `folder`. Studio has verified every file's
        sha256 just before (or knows it unchanged since, see hashcache.py), so ChatTTS's
        second check (`load(source='custom')` hashes all 1.1 GB again) is skipped: its
        `_load` is what `load` calls after that check."""
        import os
        from dataclasses import asdict

        model_imports.ensure()
        import ChatTTS

        chat = ChatTTS.Chat(logging.getLogger("ChatTTS"))
        chat.config = config
        assets = {k: os.path.join(folder, v) for k, v in asdict(chat.config.path).items()}
        try:
            ok = chat._load(device=device, compile=compile, **assets)
        except (RuntimeError, OSError, ValueError, KeyError) as exc:
            reason = str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__
            raise ModelError(
                Sentence(
                    QT_TRANSLATE_NOOP("core", "Model '{name}' could not be loaded: {reason}"),
                    name=name,
                    reason=reason,
                )
            ) from None
        if ok is False:
            raise ModelError(
                Sentence(
                    QT_TRANSLATE_NOOP("core", "Model '{name}' could not be loaded by ChatTTS."),
                    name=name,
                )
            )
        return cls(chat)

    def unload(self) -> None:
        self._step_hooks.clear()
        self._chat.unload()

    def register_numbers(self, readers: Mapping[str, Callable[[str], str]]) -> None:
        for lang, reader in readers.items():
            self._chat.normalizer.register(lang, reader)
        # The normalizer is numba code compiled on first use (2-3 s): pay it while loading,
        # not in the first job's time to first audio.
        self.normalize("你好！[uv_break]Hello 1。")

    def restore_gpt(self, gpt_folder: str) -> None:
        """The GPT in fp32 from its own file again, as ChatTTS builds it (after a cast to a
        lower precision or int8, which cannot be undone in memory); the decoder, vocoder,
        tokenizer, embeddings and normalizer stay as they are: a precision switch costs one
        0.8 GB read, not a whole load."""
        model_imports.ensure()
        from transformers import LlamaModel

        gpt: Any = LlamaModel.from_pretrained(gpt_folder)
        gpt = gpt.to(self.gpt_device)
        del gpt.embed_tokens  # ChatTTS embeds with its own Embed module
        gpt.register_forward_hook(self._on_forward)
        self._chat.gpt.gpt = gpt

    def cast_gpt(self, dtype: torch.dtype) -> None:
        """The GPT is 90% of the work; ChatTTS casts its inputs to the GPT's dtype and its
        outputs back to fp32, so the decoder and vocoder stay fp32 (FFT needs it on CPU)."""
        self._chat.gpt.gpt.to(dtype)

    def quantize_gpt(self) -> None:
        """Dynamic int8 for the GPT's linear layers: batch-1 decode on a CPU is bound by
        reading the weights, and int8 reads 4x less."""
        torch.ao.quantization.quantize_dynamic(
            self._chat.gpt.gpt, {torch.nn.Linear}, dtype=torch.qint8, inplace=True
        )

    # -- what the decoder needs (devices and sizes: parts.py) ------------------------------
    def code_embeddings(self) -> list[torch.nn.Module]:
        return list(self._chat.gpt.emb_code)

    def code_heads(self) -> torch.Tensor:
        """The four weight-normed code heads, materialised once as one [vq*codes, hidden]."""
        import torch.nn.utils.parametrize as P

        with P.cached():
            return torch.cat([h.weight for h in self._chat.embed.head_code]).detach()

    def gpt_weights(self) -> list[torch.Tensor]:
        """Every matrix one decode step reads (the bench's weight-read floor)."""
        weights = [m.weight for m in self.gpt.modules() if isinstance(m, torch.nn.Linear)]
        return [*weights, self.code_heads()]

    def on_step(self, hook: StepHook) -> Callable[[], None]:
        """Call `hook` after each GPT forward (stock generate and our loop); returns a remover."""
        self._step_hooks.append(hook)
        return lambda: self._step_hooks.remove(hook) if hook in self._step_hooks else None

    def _on_forward(self, _module: object, _args: object, output: Any) -> None:
        if not self._step_hooks:
            return
        hidden = output[0] if isinstance(output, tuple) else output.last_hidden_state
        for hook in list(self._step_hooks):
            hook(hidden)

    # -- text ------------------------------------------------------------------------------
    def refine(
        self,
        texts: list[str],
        settings: RefineSettings,
        cancel: CancelToken,
        stock: bool = False,
        on_step: Callable[[], None] | None = None,
    ) -> list[str]:
        """ChatTTS's text pass (adds [uv_break], [laugh], fillers) for a batch of texts, run to
        its end (RefinePass). `on_step` is called after each of the pass's steps."""
        run = RefinePass(self, texts, settings, cancel, stock, on_step)
        while not run.step():
            pass
        return run.texts()

    def refine_params(self, texts: list[str], settings: RefineSettings) -> Any:
        """Stock's RefineTextParams for refining `texts` (a fresh object: stock mutates them)."""
        model_imports.ensure()
        from ChatTTS import Chat

        return Chat.RefineTextParams(
            prompt=settings.prompt,
            top_P=settings.top_p,
            top_K=settings.top_k,
            max_new_token=max(2 * len(t) + 16 for t in texts),
            min_new_token=1,
            show_tqdm=False,
            ensure_non_empty=False,
        )

    def refine_prompt(self, text: str, prompt: str) -> torch.Tensor:
        """The refine pass's input embedding of one text [1, n, hidden], as `_refine_text`
        makes a batch's (one text: no padding)."""
        input_ids, _, text_mask = self._chat.tokenizer.encode(
            self._chat.speaker.decorate_text_prompts([text], prompt),
            self.num_vq,
            device=self._chat.device_gpt,
        )
        with torch.inference_mode():
            emb: torch.Tensor = self._chat.embed(input_ids, text_mask)
        return emb

    def text_embedding(self) -> torch.nn.Embedding:
        embedding: torch.nn.Embedding = self._chat.embed.emb_text
        return embedding

    def text_head(self) -> torch.Tensor:
        """The weight-normed text head materialised [text tokens, hidden] (as stock's step
        computes it under parametrize.cached)."""
        import torch.nn.utils.parametrize as P

        with P.cached():
            weight: torch.Tensor = self._chat.embed.head_text.weight.detach()
        return weight

    @property
    def text_eos(self) -> int:
        """The text pass's end token ([Ebreak])."""
        return int(self._chat.tokenizer.eos_token)

    def prompt_ids(
        self, text: str, speed: int, speaker: SpeakerLike
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Input ids and text mask for one segment, as `_infer_code` makes them: with a cloned
        voice, the transcript precedes the text ('[Stts][empty_spk]{transcript}{text}[Ptts]'
        when it has no embedding) and the sample's codes follow it, masked as audio."""
        voice = _voice(speaker)
        input_ids, _, text_mask = self._chat.tokenizer.encode(
            self._chat.speaker.decorate_code_prompts(
                [text], f"[speed_{speed}]", voice.transcript or None, voice.embedding or None
            ),
            self.num_vq,
            prompt=self.sample_codes(voice.sample) if voice.sample else None,
            device=self._chat.device_gpt,
        )
        return input_ids, text_mask

    def embed(self, ids: tuple[torch.Tensor, torch.Tensor], speaker: SpeakerLike) -> torch.Tensor:
        """The GPT's input embedding [1, prompt, hidden] with the speaker applied (a voice
        without an embedding has none to apply: ChatTTS skips it too)."""
        input_ids, text_mask = ids
        emb: torch.Tensor = self._chat.embed(input_ids, text_mask)
        voice = _voice(speaker)
        if voice.embedding:
            self._chat.speaker.apply(
                emb,
                voice.embedding,
                input_ids,
                self._chat.tokenizer.spk_emb_ids,
                self._chat.device_gpt,
            )
        return emb

    def text_ids(self, text: str) -> list[int]:
        """The tokenizer's ids of plain text (tests compare prompts with it)."""
        ids = self._chat.tokenizer._tokenizer.encode(text, add_special_tokens=False)
        return [int(i) for i in ids]

    def stock_codes(
        self, texts: list[str], settings: StockSettings, cancel: CancelToken
    ) -> tuple[list[torch.Tensor], list[torch.Tensor]]:
        """ChatTTS's own generate loop for a batch: (codes, hidden states) per row."""
        model_imports.ensure()
        from ChatTTS import Chat

        voice = _voice(settings.speaker)
        params = Chat.InferCodeParams(
            prompt=f"[speed_{settings.speed}]",
            spk_emb=voice.embedding or None,
            spk_smp=voice.sample or None,
            txt_smp=voice.transcript or None,
            temperature=settings.temperature,
            top_P=settings.top_p,
            top_K=settings.top_k,
            max_new_token=settings.max_steps,
            min_new_token=settings.min_steps,
            show_tqdm=False,
            ensure_non_empty=False,
        )
        with self.job(cancel):
            out = next(self._chat._infer_code(list(texts), False, self._chat.device, True, params))
        ids, hiddens = list(out.ids), list(out.hiddens)
        out.destroy()
        return ids, hiddens

    def infer(self, texts: list[str], stream: bool, **params: Any) -> Any:
        """`Chat.infer` exactly as ChatTTS's README uses it (the bench's stock side)."""
        model_imports.ensure()
        from ChatTTS import Chat

        code = Chat.InferCodeParams(show_tqdm=False, ensure_non_empty=False, **params)
        return self._chat.infer(
            texts, skip_refine_text=True, split_text=False, stream=stream, params_infer_code=code
        )

    def job(self, cancel: CancelToken) -> "_Bound":
        """ChatTTS's generate loops stop when `cancel` is set while inside this context."""
        return _Bound(self._context, cancel)


def text_normalizer(readers: Mapping[str, Callable[[str], str]]) -> Callable[[str], str]:
    """ChatTTS's own normalizer (numbers through `readers`, characters it cannot say dropped,
    homophones replaced) without a model: what a loaded model's `normalize` does, for a preview
    of the text the model will read."""
    import os

    model_imports.ensure()
    import ChatTTS
    from ChatTTS.norm import Normalizer

    quiet = logging.getLogger("chattts_studio.normalizer")
    quiet.setLevel(logging.ERROR)  # its "found invalid characters" warnings are expected
    folder = os.path.dirname(ChatTTS.__file__)
    normalizer = Normalizer(os.path.join(folder, "res", "homophones_map.json"), quiet)
    for lang, reader in readers.items():
        normalizer.register(lang, reader)
    return lambda text: str(normalizer(text, True, True, None))


class _Bound:
    def __init__(self, context: _CancelContext, token: CancelToken) -> None:
        self._context, self._token = context, token

    def __enter__(self) -> None:
        self._context.token = self._token

    def __exit__(self, *_exc: object) -> None:
        self._context.token = None


class RefinePass:
    """ChatTTS's text pass over a batch of texts, a step at a time. With the exported step
    (ONNX Runtime) it runs on the studio's own decode pieces (decode/text_pass.py: stock's
    sampling, about 2x faster on the CPU, tested equal to stock), so a decoder can step between
    its steps; otherwise, or when `stock`, ChatTTS's own loop runs whole at the first step.
    `on_step` is called after each of the pass's own steps (its progress)."""

    def __init__(
        self,
        model: ChatModel,
        texts: list[str],
        settings: RefineSettings,
        cancel: CancelToken,
        stock: bool = False,
        on_step: Callable[[], None] | None = None,
    ) -> None:
        self.model, self.texts_in, self.cancel, self.on_step = model, texts, cancel, on_step
        self.params = model.refine_params(texts, settings)
        self.limit: int = self.params.max_new_token
        self.steps: RefineSteps | None = None
        if model.decode_step is not None and model.text_pass is not None and not stock:
            prompts = [model.refine_prompt(t, settings.prompt) for t in texts]
            self.steps = model.text_pass(model, prompts, self.params, cancel)
        self.ids: list[torch.Tensor] | None = None

    def step(self) -> bool:
        """One step of the pass (all of it on ChatTTS's loop); True once it is over."""
        if self.ids is not None:
            return True
        if self.steps is not None:
            done = self.steps.step()
            if self.on_step is not None:
                self.on_step()
            if done:
                self.ids = self.steps.ids
            return done
        chat, on_step = self.model._chat, self.on_step
        remove = self.model.on_step(lambda _hidden: on_step()) if on_step else None
        try:
            with self.model.job(self.cancel):
                refined = chat._refine_text(self.texts_in, chat.device, self.params)
        finally:
            if remove is not None:
                remove()
        self.ids = list(refined.ids)
        refined.destroy()
        return True

    def texts(self) -> list[str]:
        """The refined texts (once step() said the pass is over)."""
        assert self.ids is not None, "the pass has not ended"
        tokenizer = self.model._chat.tokenizer
        break_0 = tokenizer.break_0_ids
        return [str(t) for t in tokenizer.decode([i[i.less(break_0)] for i in self.ids])]
