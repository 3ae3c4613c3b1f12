"""OpenAI's server-sent events for speech (`stream_format: "sse"`), as its API sends them: one
`data: {json}` line and a blank line per event, no `event:` line, no `[DONE]`.

`speech.audio.delta` events carry base64 pieces of the response_format's file (joined, byte for
byte the body without events; flac comes whole in one), then `speech.audio.done` the usage.
Captions come as our own `speech.captions` event just before it. A failure after the first event
is an `error` event holding OpenAI's error object, then a close without the chunked body's end,
so no client takes a cut stream for a whole one."""

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
