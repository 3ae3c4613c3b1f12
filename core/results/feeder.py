"""Playing a ResultStore: one continuous Player stream fed from the file by its own thread, at most
`lookahead` samples ahead, so a long result plays in a few MB; it follows the store while the job
runs.
"""

import threading
from collections.abc import Callable

from chattts_studio.core import SAMPLE_RATE
from chattts_studio.core.audio.player import Player
from chattts_studio.core.errors import StudioError
from chattts_studio.core.results.result_store import BLOCK, ResultStore

LOOKAHEAD = 30 * SAMPLE_RATE  # queued ahead of the device: 2.9 MB, room for a slow disk
POLL_SECONDS = 0.005


class StoreFeeder:
    def __init__(
        self, player: Player, store: ResultStore, start: int, lookahead: int = LOOKAHEAD
    ) -> None:
        self.player = player
        self.store = store
        self.fed = max(0, start)  # the next sample to hand to the player
        self.lookahead = lookahead
        self.ended = False  # the stream was told it ends (its last sample is `fed`)
        self.lost = False  # the player stopped taking audio (stopped, or its device lost)
        self._cap: int | None = None
        self._complete = threading.Event()
        self._quit = threading.Event()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        # Opening an output stream (and closing the one before) can take 50-100 ms in
        # PortAudio/ALSA: it happens on the feeder's thread, never on the caller's (the UI's).
        self.opening = False  # the stream is being opened
        self.error: StudioError | None = None  # why it could not be opened
        self._ticket: int | None = None  # the player's, for the stream this feeder opens

    def open(self) -> None:
        """Start the stream with its first block, on the feeder's thread; a failure to open
        ends the feeder with `error` set (`opening` is true until then)."""
        self.opening = True
        self._ticket = self.player.expect_stream()
        self._thread = threading.Thread(target=self._run, name="store-feeder", daemon=True)
        self._thread.start()

    def _open(self) -> bool:
        try:
            first = self.store.read(self.fed, self.fed + min(self.lookahead, BLOCK))
            if not self.player.open_stream(SAMPLE_RATE, first, self.fed, ticket=self._ticket):
                self.lost = True  # stopped (or superseded) while it opened
                return False
        except StudioError as exc:
            self.error, self.lost = exc, True
            return False
        except Exception:  # the store went away (cleared from the history): nothing plays
            self.lost = True
            return False
        finally:
            self.opening = False
            self.player.settle(self._ticket)
        self.fed += len(first)
        return True

    @property
    def alive(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def finish(self, cap: int | None = None) -> None:
        """Nothing more comes: end after the store's last sample, or after `cap`."""
        with self._lock:
            if cap is not None:
                self._cap = cap if self._cap is None else min(self._cap, cap)
            self._complete.set()

    def cut(self, samples: int, change: Callable[[], object]) -> int:
        """Drop what was queued after `samples` (a segment made again) while `change` (the
        store's own cut) runs with the feeding paused; return where the stream now ends:
        `samples`, or further when that much was already heard."""
        with self._lock:
            change()
            ends = self.player.truncate(samples)
            self.fed = min(self.fed, max(samples, ends))
            return ends

    def stop(self) -> None:
        """Stop feeding (the player itself is the caller's to stop); waits for the thread."""
        self._quit.set()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=2.0)

    def _run(self) -> None:
        if not self._open():
            return
        try:
            self._feed()
        except Exception:  # the store went away (cleared from the history): the stream ends
            self.lost = True
            self.player.end_of_stream()

    def _feed(self) -> None:
        while not self._quit.is_set():
            with self._lock:
                end = self.store.length if self._cap is None else min(self._cap, self.store.length)
                ahead = self.fed - self.player.position
                if self.fed < end and ahead < self.lookahead:
                    size = min(end - self.fed, self.lookahead - ahead, BLOCK)
                    block = self.store.read(self.fed, self.fed + size)
                    if not self.player.feed(block):
                        self.lost = True
                        return
                    self.fed += len(block)
                    continue
                if self.fed >= end and self._complete.is_set():
                    self.player.end_of_stream()
                    self.ended = True
                    return
                if not self.player.playing:
                    self.lost = True
                    return
            self._quit.wait(POLL_SECONDS)
