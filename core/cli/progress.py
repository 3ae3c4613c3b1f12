"""Progress of a long command (render, synth, project) on stderr, one look for all of them.

On a terminal it is tqdm's bar, redrawn in place (tqdm sizes it to the terminal, limits how
often it redraws, and keeps lines written above it clear of it). Anywhere else (a log file, a
pipe, CI, the tests) each update is one plain line, so the log reads as a history.
"""

import sys
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
