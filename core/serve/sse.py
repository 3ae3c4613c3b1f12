"""OpenAI's server-sent events for speech (`stream_format: "sse"`), as its API sends them: one
`data: {json}` line and a blank line per event, no `event:` line, no `[DONE]`:

    data: {"type": "speech.audio.delta", "audio": "<base64 of the response_format's bytes>"}
    data: {"type": "speech.audio.done", "usage": {"input_tokens": .., "output_tokens": ..,
           "total_tokens": ..}}

The deltas' audio joined is the response_format's file, byte for byte what the same request
without events sends. Formats that stream send a delta as each piece is encoded; flac (its
encoder rewrites its header at the end) sends one delta with the whole file.

Captions with events: one `speech.captions` event (our own type; OpenAI's clients skip types
they do not know) just before `speech.audio.done`, with the captions in the asked format.

A failure after the first event: an `error` event, then the connection closes without the
chunked body's end. The event is {"type": "error", "error": {message, type, param, code}}:
`type` so that clients that switch on it see it, and OpenAI's error object inside, the shape
every other error of this API has (and the one OpenAI's stream readers raise on when they find
an "error" key). The unfinished close then tells a client that skips unknown events too that
the audio is not whole: never a clean short stream.
"""

import base64
import json
from typing import Any

from chattts_studio.core.engine.batch.tickets import Finished
from chattts_studio.core.serve.audio import Encoder
from chattts_studio.core.serve.captions import captions
from chattts_studio.core.serve.stream import Framing, usage
from chattts_studio.core.text.prepare import Segment

MEDIA_TYPE = "text/event-stream"


def event(body: dict[str, Any]) -> bytes:
    return b"data: " + json.dumps(body, ensure_ascii=False).encode() + b"\n\n"


class SpeechEvents(Framing):
    media_type = MEDIA_TYPE

    def __init__(self, captions_kind: str | None = None) -> None:
        self.captions_kind = captions_kind

    def audio(self, data: bytes) -> bytes:
        return event({"type": "speech.audio.delta", "audio": base64.b64encode(data).decode()})

    def end(
        self, input_chars: int, done: Finished, segments: list[Segment], encoder: Encoder
    ) -> bytes:
        out = b""
        if self.captions_kind:
            out = event(
                {
                    "type": "speech.captions",
                    "format": self.captions_kind,
                    "captions": captions(self.captions_kind, segments, encoder.spans),
                }
            )
        return out + event({"type": "speech.audio.done", "usage": usage(input_chars, done)})

    def failure(self, message: str) -> bytes:
        error = {"message": message, "type": "server_error", "param": None, "code": None}
        return event({"type": "error", "error": error})
