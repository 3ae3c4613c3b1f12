"""ChatTTS and the parts of transformers that it and the engine use, imported once, by one
thread, before any other thread touches them.

Why: transformers' lazy top-level module is not safe when two threads first import from it at
once: one of them gets an ImportError for a name that exists ("cannot import name
'LlamaModel'"). The window builds demo weights, loads the model and previews text on different
threads, so every module that imports transformers or ChatTTS calls `ensure()` first: the
first caller imports them all under one lock, the others wait and then find them imported.
"""

import importlib
import threading

_LOCK = threading.Lock()
_imported: list[bool] = []


def ensure() -> None:
    """Import transformers' names the product uses and ChatTTS, once (cheap afterwards)."""
    if _imported:
        return
    with _LOCK:
        if _imported:
            return
        import transformers
        from transformers import generation
        from transformers.models.llama import modeling_llama

        # Each name the product or ChatTTS takes from the lazy modules, resolved here once:
        # transformers keeps a resolved name, so later lookups never race.
        for module, name in (
            (transformers, "LlamaConfig"),
            (transformers, "LlamaModel"),
            (transformers, "BertTokenizerFast"),
            (generation, "TopKLogitsWarper"),
            (generation, "TopPLogitsWarper"),
            (modeling_llama, "apply_rotary_pos_emb"),
        ):
            getattr(module, name)
        importlib.import_module("ChatTTS")  # its modules take transformers' Llama, tokenizers

        _imported.append(True)
