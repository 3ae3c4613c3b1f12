"""Playing audio on the default output device (sounddevice's callback stream): a whole buffer,
or one continuous stream fed as audio comes."""

import threading
import time
from collections import deque
from typing import Any

import numpy as np

from chattts_studio.core import SAMPLE_RATE
from chattts_studio.core.errors import AudioError
from chattts_studio.core.messages import QT_TRANSLATE_NOOP


def _sounddevice() -> Any:
    try:
        import sounddevice as sd
    except OSError:
        raise AudioError(
            QT_TRANSLATE_NOOP(
                "core",
                "Audio playback needs the PortAudio library (libportaudio2); the audio "
                "can still be saved.",
            )
        ) from None
    return sd


def output_available() -> str | None:
    """None when a default output device exists, else the sentence explaining why not."""
    try:
        sd = _sounddevice()
        sd.query_devices(kind="output")
    except AudioError as exc:
        return str(exc)
    except Exception:
        return QT_TRANSLATE_NOOP(
            "core", "No audio output device is available; the audio can still be saved."
        )
    return None


class Player:
    """Plays audio on the default output device through one callback stream at a time.

    A whole buffer: play(audio, rate, start). Audio that grows while it plays (a run that
    streams): open_stream(rate), then feed(chunk) as pieces come, then end_of_stream(); it is
    ONE output stream, so there is no gap between pieces. While a growing stream waits for more
    (an underrun) it plays silence, counts the underrun and keeps going; it stops after its last
    sample once end_of_stream() says nothing more comes. truncate(n) drops what is queued after
    sample n and not yet played.

    `position` is the next sample to be played: an index into play()'s buffer, or for a stream
    `start` plus the samples fed and played since it opened (silence is not counted).
    stop(), play() and the stream calls may come from any thread; the audio callback only
    copies from the queue under a lock that no caller holds for long."""

    def __init__(self) -> None:
        self._stream: Any = None  # a sounddevice.OutputStream
        self._lock = threading.Lock()
        self._done = threading.Event()
        self._done.set()
        # Cleared while another thread opens a stream the caller already counts as playing
        # (expect_stream): `playing` is true and wait() waits for it.
        self._settled = threading.Event()
        self._settled.set()
        # Bumped by expect_stream(), play() and stop(): a stream expected under an older
        # ticket was superseded, so it is not opened (or is closed at once if it just was).
        self._ticket = 0
        self._stop_exception: type[BaseException] = Exception
        self._queue: deque[np.ndarray] = deque()  # what is still to play, in order
        self._offset = 0  # samples of _queue[0] already played
        self._origin = 0  # position of the stream's first sample
        self._played = 0  # samples played since the stream opened
        self._end = 0  # samples queued since the stream opened (played ones included)
        self._ended = True  # nothing more will be fed: stop after the last sample
        self._starving = False
        self._underruns = 0
        self._silences: list[list[int]] = []  # [samples played, silent frames inserted there]

    @property
    def position(self) -> int:
        return self._origin + self._played

    @property
    def playing(self) -> bool:
        return not self._settled.is_set() or not self._done.is_set()

    def expect_stream(self) -> int:
        """A stream is about to be opened on another thread (opening can take 50-100 ms, too
        long for a UI thread): count as playing until it is open or has failed (settle()).
        The ticket goes to open_stream(): a stop() or play() meanwhile voids it."""
        with self._lock:
            self._ticket += 1
            self._settled.clear()
            return self._ticket

    def settle(self, ticket: int | None = None) -> None:
        """The expected stream is open, or will not be (a voided ticket settles nothing)."""
        with self._lock:
            if ticket is None or ticket == self._ticket:
                self._settled.set()

    @property
    def underruns(self) -> int:
        """How many times the current (or last) stream ran out of audio before its end."""
        return self._underruns

    @property
    def silences(self) -> list[tuple[int, int]]:
        """Where underruns put silence into the output: (position, frames), in order."""
        with self._lock:
            return [(self._origin + at, frames) for at, frames in self._silences]

    def play(self, audio: np.ndarray, sample_rate: int = SAMPLE_RATE, start: int = 0) -> None:
        """Play a whole buffer from `start`; stops whatever played before."""
        data = np.ascontiguousarray(audio, dtype=np.float32)
        start = max(0, min(int(start), len(data)))
        self._void_expected()
        self._start(sample_rate, data[start:], start, ended=True)

    def open_stream(
        self,
        sample_rate: int = SAMPLE_RATE,
        audio: np.ndarray | None = None,
        start: int = 0,
        ticket: int | None = None,
    ) -> bool:
        """Start one continuous stream that plays what feed() queues (`audio` first, if
        given); `start` is the position of its first sample. Stops whatever played before.
        False, and nothing plays, when `ticket` (from expect_stream) was voided meanwhile: a
        stream nobody would end must not play silence for ever."""
        first = np.zeros(0, dtype=np.float32) if audio is None else _samples(audio)
        return self._start(sample_rate, first, max(0, int(start)), ended=False, ticket=ticket)

    def feed(self, chunk: np.ndarray) -> bool:
        """Queue audio at the end of the open stream; False (nothing queued) when no stream
        is open to take it (stopped, ended, lost, or a whole buffer plays)."""
        data = _samples(chunk)  # copied here, never in the audio callback
        with self._lock:
            if self._ended or self._done.is_set():
                return False
            if len(data):
                self._queue.append(data)
                self._end += len(data)
        return True

    def end_of_stream(self) -> None:
        """Nothing more comes: the stream stops after its last queued sample."""
        with self._lock:
            self._ended = True

    def truncate(self, n: int) -> int:
        """Drop what is queued after position n and not yet played; return where the stream
        now ends (n, or the position reached when n was already played)."""
        with self._lock:
            keep = max(int(n) - self._origin, self._played)
            excess = self._end - keep
            while excess > 0 and self._queue:
                tail = self._queue[-1]
                unplayed = len(tail) - (self._offset if len(self._queue) == 1 else 0)
                if unplayed <= excess:
                    self._queue.pop()
                    excess -= unplayed
                    if not self._queue:
                        self._offset = 0
                else:
                    self._queue[-1] = tail[: len(tail) - excess]
                    excess = 0
            self._end = min(self._end, keep)
            return self._origin + self._end

    def wait(self, timeout: float | None = None) -> bool:
        deadline = None if timeout is None else time.monotonic() + timeout
        if not self._settled.wait(timeout):
            return False
        left = None if deadline is None else max(0.0, deadline - time.monotonic())
        finished = self._done.wait(left)
        if finished:
            self._close()
        return finished

    def stop(self) -> None:
        """Stop what plays now, and void a stream expected but not open yet."""
        self._void_expected()
        self._halt()

    def _void_expected(self) -> None:
        with self._lock:
            self._ticket += 1
        self._settled.set()

    def _halt(self) -> None:
        stream = self._stream
        if stream is not None:
            try:
                stream.abort()
            except Exception:
                pass  # a device that vanished cannot be stopped twice
        with self._lock:
            self._ended = True
            self._queue = deque()
            self._offset = 0
        self._done.set()
        self._close()

    def _start(
        self,
        sample_rate: int,
        first: np.ndarray,
        origin: int,
        ended: bool,
        ticket: int | None = None,
    ) -> bool:
        with self._lock:
            if ticket is not None and ticket != self._ticket:
                return False
        self._halt()
        sd = _sounddevice()
        problem = output_available()
        if problem:
            raise AudioError(problem)
        self._stop_exception = sd.CallbackStop
        with self._lock:
            self._queue = deque([first] if len(first) else [])
            self._offset = 0
            self._origin = origin
            self._played = 0
            self._end = len(first)
            self._ended = ended
            self._starving = False
            self._underruns = 0
            self._silences = []
            self._done.clear()
        try:
            stream = sd.OutputStream(
                samplerate=sample_rate,
                channels=1,
                dtype="float32",
                callback=self._callback,
                finished_callback=self._done.set,
            )
            stream.start()
        except Exception as exc:
            with self._lock:
                self._ended = True
            self._done.set()
            raise AudioError(
                f"Cannot play audio: {str(exc).splitlines()[0]}. The audio can still be saved."
            ) from None
        with self._lock:
            voided = ticket is not None and ticket != self._ticket
            if voided:
                self._ended = True
                self._queue = deque()
            else:
                self._stream = stream
        if voided:  # stopped while it opened: the stop could not reach it
            stream.abort()
            stream.close()
            self._done.set()
            return False
        return True

    def _callback(self, outdata: np.ndarray, frames: int, _time: object, _status: object) -> None:
        """PortAudio's thread: copy the next frames from the queue, silence when it is empty.
        No allocation beyond a view or two, and the lock is only ever held briefly."""
        out = outdata[:, 0]
        filled = 0
        with self._lock:
            queue = self._queue
            while filled < frames and queue:
                head = queue[0]
                take = min(frames - filled, len(head) - self._offset)
                out[filled : filled + take] = head[self._offset : self._offset + take]
                filled += take
                self._offset += take
                if self._offset >= len(head):
                    queue.popleft()
                    self._offset = 0
            self._played += filled
            if filled == frames:
                self._starving = False
                return
            out[filled:] = 0.0
            if self._ended:
                raise self._stop_exception()
            if filled:
                self._starving = False
            if not self._played:
                return  # nothing fed yet: the stream has not started to speak
            if not self._starving:
                self._starving = True
                self._underruns += 1
                self._silences.append([self._played, 0])
            self._silences[-1][1] += frames - filled

    def _close(self) -> None:
        stream, self._stream = self._stream, None
        if stream is not None:
            try:
                stream.close()
            except Exception:
                pass


def _samples(audio: np.ndarray) -> np.ndarray:
    """A private mono float32 copy."""
    return np.array(audio, dtype=np.float32).reshape(-1)
