"""Progress of a long command (render, synth, project) on stderr, one look for all of them: tqdm's
bar on a terminal, and elsewhere (a log, a pipe, CI) one plain line per update, so the log reads
as a history."""

import contextlib
import signal
import sys
import time
from collections.abc import Iterator
from typing import Any, TextIO

from chattts_studio.core.messages import clock


class CommandProgress:
    def __init__(self, unit: str, stream: TextIO | None = None) -> None:
        self.unit = unit  # what is counted, plural ("segments", "takes")
        self.stream = stream or sys.stderr
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self._bar: Any = None

    def show(self, done: int, total: int, facts: str) -> None:
        """`done` of `total` units, and the facts after them (audio made, RTF, time left)."""
        if not self.tty:
            print(f"  {done}/{total} {self.unit}, {facts}", file=self.stream, flush=True)
            return
        if self._bar is None:
            from tqdm import tqdm

            self._bar = tqdm(
                total=total,
                initial=done,
                postfix=facts,
                file=self.stream,
                dynamic_ncols=True,
                mininterval=0.2,
                bar_format="{bar:24} {n_fmt}/{total_fmt} " + self.unit + "{postfix}",
            )
            return
        self._bar.total = total
        self._bar.n = done
        self._bar.set_postfix_str(facts, refresh=False)
        self._bar.refresh()

    def line(self, text: str) -> None:
        """A line of its own (a warning, a summary), above the bar when there is one."""
        if self._bar is not None:
            self._bar.write(text, file=self.stream)
        else:
            print(text, file=self.stream, flush=True)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None


def facts(audio_seconds: float, rtf: float | None, seconds_left: float | None) -> str:
    """The facts every long command shows: audio made, RTF, time left."""
    speed = f"RTF {rtf:.2f}" if rtf is not None else "RTF -"
    return f"{clock(audio_seconds)} of audio, {speed}, {clock(seconds_left)} left"


class TakesProgress:
    """Takes made so far, the audio they hold, RTF and time left (a bar on a terminal)."""

    def __init__(self) -> None:
        self.view = CommandProgress("takes")
        self.started = time.perf_counter()
        self.audio = 0.0

    def __call__(self, made: int, asked: int, seconds: float) -> None:
        self.audio += seconds
        if not made:
            return
        elapsed = time.perf_counter() - self.started
        rtf = elapsed / self.audio if self.audio else None
        self.view.show(made, asked, facts(self.audio, rtf, elapsed / made * (asked - made)))
        if made == asked:
            self.view.close()


@contextlib.contextmanager
def interrupt_cancels() -> Iterator[Any]:
    """A cancel token that Ctrl+C sets while the block runs; Ctrl+C's former handler after."""
    from chattts_studio.core.engine.cancel import CancelToken

    token = CancelToken()
    previous = signal.signal(signal.SIGINT, lambda *_: token.cancel())
    try:
        yield token
    finally:
        signal.signal(signal.SIGINT, previous)


def cancel_on_interrupt() -> Any:
    """A cancel token that Ctrl+C sets (the command then stops cleanly, keeping what it made)."""
    from chattts_studio.core.engine.cancel import CancelToken

    token = CancelToken()
    signal.signal(signal.SIGINT, lambda *_: token.cancel())
    return token
