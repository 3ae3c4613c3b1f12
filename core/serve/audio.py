"""Audio bytes for the speech API, made as the audio comes: a WAV header that says "length
unknown" (as OpenAI streams it), raw PCM, and soundfile's encoders into a growing buffer."""

import struct

import numpy as np
import soundfile as sf

from chattts_studio.core import SAMPLE_RATE
from chattts_studio.core.engine.request import AudioChunk

CONTENT_TYPES = {
    "mp3": "audio/mpeg",
    "opus": "audio/ogg",
    "wav": "audio/wav",
    "pcm": "audio/pcm",
    "flac": "audio/flac",
}
UNKNOWN_SIZE = 0xFFFFFFFF  # what a streamed WAV's size fields hold: players read to the end


def wav_header() -> bytes:
    """16-bit mono PCM at 24 kHz, RIFF and data sizes unknown."""
    fmt = struct.pack("<HHIIHH", 1, 1, SAMPLE_RATE, SAMPLE_RATE * 2, 2, 16)
    return (
        b"RIFF" + struct.pack("<I", UNKNOWN_SIZE) + b"WAVE"
        + b"fmt " + struct.pack("<I", len(fmt)) + fmt
        + b"data" + struct.pack("<I", UNKNOWN_SIZE)
    )  # fmt: skip


def pcm16(audio: np.ndarray) -> bytes:
    """Little-endian signed 16-bit, as OpenAI's pcm format (clipped, rounded)."""
    data = np.clip(np.asarray(audio, dtype=np.float32), -1.0, 1.0)
    return np.round(data * 32767.0).astype("<i2").tobytes()


_MP3_KBPS = {
    1: (0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320),  # MPEG-1
    2: (0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160),  # MPEG-2 and 2.5
}
_MP3_RATES = {3: (44100, 48000, 32000), 2: (22050, 24000, 16000), 0: (11025, 12000, 8000)}


def without_info_frame(data: bytes) -> bytes:
    """MP3 bytes without LAME's leading Xing/Info frame. The encoder reserves it blank and
    fills it in only at the end; a stream cannot go back, and decoders that read the blank
    frame stop early. Without it players (ffmpeg, browsers) play every frame, plus the
    encoder's delay (~70 ms). libsndfile alone sizes such a VBR stream from its first frame's
    rate and may stop early: decode streamed MP3 with ffmpeg or PyAV."""
    if len(data) < 4 or data[0] != 0xFF or (data[1] & 0xE0) != 0xE0:
        return data
    version = (data[1] >> 3) & 3
    bitrate = _MP3_KBPS[1 if version == 3 else 2][data[2] >> 4] * 1000
    rate = _MP3_RATES.get(version, (0, 0, 0))[(data[2] >> 2) & 3] if version != 1 else 0
    if not bitrate or not rate:
        return data
    length = (144 if version == 3 else 72) * bitrate // rate + ((data[2] >> 1) & 1)
    frame = data[:length]
    # Before the end it is still blank: LAME reserves the frame and fills it in at close.
    placeholder = not any(frame[4:]) or b"Xing" in frame or b"Info" in frame
    return data[length:] if placeholder else data


class _Sink:
    """A file for libsndfile. Each take() drops what it returns (it went to the client): a
    long stream holds only what was written since. A later write before that point (LAME
    rewrites its first frame at close) is dropped too: the client has those bytes already.
    FLAC's encoder rewrites its header at the end: it is never taken from, only read whole
    (bounded by the longest input)."""

    def __init__(self) -> None:
        self.data = bytearray()  # the file's bytes from `base` on
        self.base = 0
        self.pos = 0

    def write(self, chunk: bytes) -> int:
        written, start = len(chunk), self.pos
        self.pos += written
        if start < self.base:  # gone to the client already: only the part after it stays
            chunk, start = chunk[self.base - start :], self.base
        if chunk:
            self.data[start - self.base : start - self.base + len(chunk)] = chunk
        return written

    def seek(self, offset: int, whence: int = 0) -> int:
        base = {0: 0, 1: self.pos, 2: self.base + len(self.data)}[whence]
        self.pos = base + offset
        return self.pos

    def tell(self) -> int:
        return self.pos

    def read(self, size: int = -1) -> bytes:
        end = self.base + len(self.data) if size < 0 else self.pos + size
        start = max(self.pos, self.base)
        out = bytes(self.data[start - self.base : max(start, end) - self.base])
        self.pos = start + len(out)
        return out

    def take(self) -> bytes:
        """What was written since the last take()."""
        out = bytes(self.data)
        self.base += len(self.data)
        self.data = bytearray()
        return out


class Encoder:
    """One response's bytes: add() each chunk in order, finish() once at the end. Segments
    after the first start after `pause_seconds` of silence (as the app joins them)."""

    def __init__(self, fmt: str, pause_seconds: float) -> None:
        self.fmt = fmt
        self.pause = np.zeros(round(pause_seconds * SAMPLE_RATE), dtype=np.float32)
        self.streams = fmt != "flac"
        self.segment = -1
        self.started = False
        self.samples = 0
        # (segment index, first sample, end sample) of each segment as joined: the captions'
        # times, from the real boundaries.
        self.spans: list[tuple[int, int, int]] = []
        self._sink: _Sink | None = None
        self._file: sf.SoundFile | None = None
        if fmt in ("mp3", "opus", "flac"):
            self._sink = _Sink()
            kind = {"mp3": ("MP3", "MPEG_LAYER_III"), "opus": ("OGG", "OPUS")}
            container, subtype = kind.get(fmt, ("FLAC", "PCM_16"))
            self._file = sf.SoundFile(self._sink, "w", SAMPLE_RATE, 1, subtype, format=container)

    def add(self, chunk: AudioChunk) -> bytes:
        audio = chunk.audio
        if chunk.index != self.segment:
            if self.segment >= 0 and len(self.pause):
                audio = np.concatenate([self.pause, audio])
            self.segment = chunk.index
            first = self.samples + len(audio) - len(chunk.audio)
            self.spans.append((chunk.index, first, first))
        index, first, _ = self.spans[-1]
        self.spans[-1] = (index, first, self.samples + len(audio))
        out = b""
        if not self.started:
            self.started = True
            out = wav_header() if self.fmt == "wav" else b""
        self.samples += len(audio)
        if self._file is None:
            return out + pcm16(audio)
        if len(audio):
            self._file.write(np.clip(audio, -1.0, 1.0))
        assert self._sink is not None
        return out + (self._take() if self.streams else b"")

    def _take(self) -> bytes:
        assert self._sink is not None
        first = self._sink.base == 0
        data = self._sink.take()
        return without_info_frame(data) if first and data and self.fmt == "mp3" else data

    def finish(self) -> bytes:
        out = b"" if self.started or self.fmt != "wav" else wav_header()
        self.started = True
        if self._file is None or self._sink is None:
            return out
        self._file.close()
        self._file = None
        if not self.streams:
            return bytes(self._sink.data)
        return out + self._take()
