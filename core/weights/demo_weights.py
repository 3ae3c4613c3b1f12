"""Random-init ChatTTS checkpoints in the official layout, loaded by ChatTTS's real loader: they
cost what real weights cost but make noise. `demo` is tiny (tests, a first try); `demo-full` has
the real dimensions.
"""

import json
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np
import pybase16384 as b14
import torch
from safetensors.torch import save_file

from chattts_studio.core import model_imports

model_imports.ensure()  # before transformers and ChatTTS: see core/model_imports.py
from ChatTTS.config import config as cc  # noqa: E402

SPECIAL_TOKENS = (
    "[Sasr] [Pasr] [Easr] [Stts] [Ptts] [Etts] [Sbreak] [Pbreak] [Ebreak] [uv_break] [v_break] "
    "[lbreak] [llbreak] [undefine] [laugh] [spk_emb] [empty_spk] [music] [pure]".split()
    + [f"[break_{i}]" for i in range(8)]
    + [f"[laugh_{i}]" for i in range(3)]
    + [f"[oral_{i}]" for i in range(10)]
    + [f"[speed_{i}]" for i in range(10)]
)
BASE_VOCAB_SIZE = 21128


def tiny_spk_stat(hidden: int) -> str:
    """ChatTTS's speaker statistics string (std then mean, float16) for a GPT of this width."""
    rng = np.random.default_rng(7)
    std = np.full(hidden, 1.0, dtype=np.float16)
    mean = rng.normal(0.0, 0.1, hidden).astype(np.float16)
    return str(b14.encode_to_string(np.concatenate([std, mean]).tobytes()))


def build_config(dims: dict[str, Any] | None) -> cc.Config:
    """A fresh ChatTTS Config (never the shared class-level defaults edited in place)."""
    if not dims:
        return cc.Config(
            path=cc.Path(),
            decoder=cc.Decoder(),
            dvae=cc.DVAE(
                encoder=cc.Decoder(idim=512, odim=1024, hidden=256, n_layer=12, bn_dim=128),
                decoder=cc.Decoder(idim=512, odim=512, hidden=256, n_layer=12, bn_dim=128),
                vq=cc.VQ(),
            ),
            gpt=cc.GPT(),
            embed=cc.Embed(),
            vocos=cc.Vocos(
                feature_extractor=cc.FeatureExtractor(init_args=cc.FeatureExtractorInitArgs()),
                backbone=cc.Backbone(init_args=cc.BackboneInitArgs()),
                head=cc.FourierHead(init_args=cc.FourierHeadInitArgs()),
            ),
        )
    gpt = cc.GPT(**dims["gpt"])
    vocos = dims["vocos"]
    return cc.Config(
        path=cc.Path(),
        decoder=cc.Decoder(**dims["decoder"]),
        dvae=cc.DVAE(
            encoder=cc.Decoder(**dims["dvae_encoder"]),
            decoder=cc.Decoder(**dims["dvae_decoder"]),
            vq=cc.VQ(dim=dims["vq_dim"]),
        ),
        gpt=gpt,
        embed=cc.Embed(hidden_size=gpt.hidden_size),
        vocos=cc.Vocos(
            feature_extractor=cc.FeatureExtractor(init_args=cc.FeatureExtractorInitArgs()),
            backbone=cc.Backbone(
                init_args=cc.BackboneInitArgs(
                    dim=vocos["dim"],
                    intermediate_dim=vocos["intermediate_dim"],
                    num_layers=vocos["num_layers"],
                )
            ),
            head=cc.FourierHead(init_args=cc.FourierHeadInitArgs(dim=vocos["dim"])),
        ),
        spk_stat=tiny_spk_stat(gpt.hidden_size),
    )


def _write_tokenizer(folder: Path) -> None:
    """A BERT-Chinese shaped WordPiece tokenizer: 21128 entries, then ChatTTS's 50 specials."""
    from tokenizers import Tokenizer, decoders, normalizers, pre_tokenizers
    from tokenizers.models import WordPiece
    from transformers import BertTokenizerFast  # type: ignore[attr-defined]

    vocab = ["[PAD]", *[f"[unused{i}]" for i in range(1, 100)], "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    vocab += [chr(c) for c in range(33, 127)]
    vocab += [f"##{c}" for c in "abcdefghijklmnopqrstuvwxyz0123456789"]
    vocab += list("，。、！？；：“”‘’（）《》【】…—「」『』～·")
    seen = set(vocab)
    code = 0x4E00
    while len(vocab) < BASE_VOCAB_SIZE:
        if chr(code) not in seen:
            vocab.append(chr(code))
        code += 1
    model = WordPiece({tok: i for i, tok in enumerate(vocab)}, unk_token="[UNK]")
    tok = Tokenizer(model)
    tok.normalizer = normalizers.BertNormalizer(lowercase=True, handle_chinese_chars=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.decoder = decoders.WordPiece()
    fast = BertTokenizerFast(
        tokenizer_object=tok,
        unk_token="[UNK]",
        pad_token="[PAD]",
        cls_token="[CLS]",
        sep_token="[SEP]",
        mask_token="[MASK]",
    )
    fast.add_special_tokens({"additional_special_tokens": SPECIAL_TOKENS})
    assert len(fast) == BASE_VOCAB_SIZE + len(SPECIAL_TOKENS)
    fast.save_pretrained(str(folder))
    for extra in ("vocab.txt", "added_tokens.json", "chat_template.jinja"):
        (folder / extra).unlink(missing_ok=True)
    # transformers 5 no longer writes this file, and ChatTTS's layout (and hash map) wants it.
    (folder / "special_tokens_map.json").write_text(
        json.dumps(
            {
                "unk_token": "[UNK]",
                "sep_token": "[SEP]",
                "pad_token": "[PAD]",
                "cls_token": "[CLS]",
                "mask_token": "[MASK]",
                "additional_special_tokens": SPECIAL_TOKENS,
            },
            indent=2,
        )
    )


def _state(module: torch.nn.Module) -> dict[str, torch.Tensor]:
    return {k: v.detach().contiguous().clone() for k, v in module.state_dict().items()}


def build(
    folder: Path,
    dims: dict[str, Any] | None,
    seed: int = 1234,
    progress: Callable[[str], None] | None = None,
) -> None:
    """Write a random-init checkpoint in ChatTTS's layout under folder/asset."""
    from ChatTTS.model import DVAE, Embed
    from transformers import LlamaConfig, LlamaModel
    from vocos import Vocos
    from vocos.pretrained import instantiate_class

    say = progress or (lambda _msg: None)
    cfg = build_config(dims)
    asset = folder / "asset"
    (asset / "gpt").mkdir(parents=True, exist_ok=True)
    (asset / "tokenizer").mkdir(parents=True, exist_ok=True)
    torch.manual_seed(seed)

    say("tokenizer")
    _write_tokenizer(asset / "tokenizer")

    say("vocoder")
    vocos = Vocos(
        feature_extractor=instantiate_class(args=(), init=asdict(cfg.vocos.feature_extractor)),
        backbone=instantiate_class(args=(), init=asdict(cfg.vocos.backbone)),
        head=instantiate_class(args=(), init=asdict(cfg.vocos.head)),
    )
    save_file(_state(vocos), str(asset / "Vocos.safetensors"))
    del vocos

    say("DVAE")
    dvae = DVAE(
        decoder_config=asdict(cfg.dvae.decoder),
        encoder_config=asdict(cfg.dvae.encoder),
        vq_config=asdict(cfg.dvae.vq),
        dim=cfg.dvae.decoder.idim,
    )
    save_file(_state(dvae), str(asset / "DVAE.safetensors"))
    del dvae

    say("decoder")
    decoder = DVAE(decoder_config=asdict(cfg.decoder), dim=cfg.decoder.idim)
    save_file(_state(decoder), str(asset / "Decoder.safetensors"))
    del decoder

    say("embeddings")
    embed = Embed(
        cfg.embed.hidden_size,
        cfg.embed.num_audio_tokens,
        cfg.embed.num_text_tokens,
        cfg.embed.num_vq,
    )
    save_file(_state(embed), str(asset / "Embed.safetensors"))
    del embed

    say("GPT")
    gpt_cfg = cfg.gpt
    llama_config = LlamaConfig(
        hidden_size=gpt_cfg.hidden_size,
        intermediate_size=gpt_cfg.intermediate_size,
        num_attention_heads=gpt_cfg.num_attention_heads,
        num_hidden_layers=gpt_cfg.num_hidden_layers,
        max_position_embeddings=gpt_cfg.max_position_embeddings,
        vocab_size=8,  # ChatTTS deletes embed_tokens after loading; keep it negligible
        use_cache=False,
    )
    gpt = LlamaModel(llama_config)
    state = {k: v for k, v in _state(gpt).items() if not k.startswith("embed_tokens")}
    del gpt
    llama_config.save_pretrained(str(asset / "gpt"))
    save_file(state, str(asset / "gpt" / "model.safetensors"), metadata={"format": "pt"})
