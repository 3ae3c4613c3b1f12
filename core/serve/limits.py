"""How much the speech API takes: the input's length, the body's size (from the fields' own
limits), connections, keep-alive, and what one streaming client may hold (stream.py)."""

from dataclasses import dataclass, field

from chattts_studio.core.serve.request import MAX_INSTRUCTIONS
from chattts_studio.core.serve.stream import StreamLimits


@dataclass(frozen=True)
class ServeLimits:
    max_input_chars: int = 4096  # OpenAI's own limit
    # None: the largest body the other limits allow (body_limit); a fixed 64 KiB refused
    # documented inputs (an 8-part embedding blend with 4,096 CJK characters is ~67 KB).
    max_body_bytes: int | None = None
    pause_seconds: float = 0.25  # silence between segments, as the app joins them
    # Connections and requests uvicorn takes at once (beyond: 503); None: 64 + the slots.
    max_connections: int | None = None
    keep_alive_seconds: int = 5  # an idle kept-alive connection is closed after this
    # Audio held for one client and how long it may read nothing (core/serve/stream.py).
    stream: StreamLimits = field(default_factory=StreamLimits)


# Bytes one character may take in a JSON body: \uXXXX, twice for a surrogate pair.
JSON_CHAR_BYTES = 12
OTHER_FIELDS_BYTES = 4096  # model, format, numbers, flags, the JSON's own punctuation


def body_limit(max_input_chars: int, max_voice: int) -> int:
    """The largest body a request within every field's limit can be: the input, the
    instructions and the voice at their longest, each character escaped, and the rest."""
    chars = max_input_chars + MAX_INSTRUCTIONS + max_voice
    return chars * JSON_CHAR_BYTES + OTHER_FIELDS_BYTES
