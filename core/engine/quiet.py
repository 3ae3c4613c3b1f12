"""Keeps ChatTTS's and transformers' chatter (tqdm bars, warnings about random weights,
deprecation notices about arguments ChatTTS passes) out of the user's terminal; the app
reports progress itself. The CLI and the window both call quiet_libraries() at start."""

import logging
import os
import sys
import warnings

from chattts_studio.core import model_imports

# ChatTTS 0.2 passes `past_key_values` to transformers' LlamaModel, which warns on every call
# (about ten times a synthesis); nothing a user can act on.
DEPRECATION_NOTICES = (r".*`?past_key_values`? is deprecated",)


def quiet_libraries() -> None:
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")  # transformers' bars too
    # Read by transformers as it is imported. The window calls this before its worker imports
    # the engine: importing transformers here would delay the window by half a second.
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    logging.getLogger("ChatTTS").setLevel(logging.ERROR)
    for pattern in DEPRECATION_NOTICES:
        warnings.filterwarnings("ignore", message=pattern, category=FutureWarning)
    if "transformers" in sys.modules:  # already imported (or by another thread now): told directly
        model_imports.ensure()
        from transformers.utils import logging as hf_logging

        hf_logging.set_verbosity_error()
        hf_logging.disable_progress_bar()
