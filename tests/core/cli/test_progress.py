"""Long commands' progress (core/cli/progress.py): tqdm's bar on a terminal, plain lines
elsewhere; synth and project report through it."""

import io
import os
import signal

import numpy as np

from chattts_studio.core.cli.progress import CommandProgress, facts, interrupt_cancels
from chattts_studio.core.engine.request import SegmentResult


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_plain_lines_off_a_terminal_and_one_bar_on_it() -> None:
    log, terminal = io.StringIO(), Terminal()
    for stream in (log, terminal):
        view = CommandProgress("takes", stream)
        view.show(1, 4, facts(30.0, 0.5, 45.0))
        view.line("  warning: something")
        view.show(4, 4, facts(120.0, 0.5, 0.0))
        view.close()
    assert log.getvalue().splitlines() == [
        "  1/4 takes, 0:30 of audio, RTF 0.50, 0:45 left",
        "  warning: something",
        "  4/4 takes, 2:00 of audio, RTF 0.50, 0:00 left",
    ]
    drawn = terminal.getvalue()
    # Redrawn in place (carriage returns, no line per update), the warning on a line of its own.
    assert drawn.count("\n") == 2 and drawn.count("\r") >= 3
    assert "1/4 takes, 0:30 of audio" in drawn and "4/4 takes, 2:00 of audio" in drawn
    assert "\r  warning: something\n" in drawn.replace(" " * 20, "")


def _result(index: int, hit_cap: bool = False) -> SegmentResult:
    audio = np.zeros(24000, np.float32)
    return SegmentResult(index, 3, "x", audio, 47, 0.5, 1, hit_cap=hit_cap)


def test_synth_moves_a_bar_on_a_terminal_and_says_each_segment_elsewhere(capsys) -> None:  # type: ignore[no-untyped-def]
    from chattts_studio.core.cli.synth import _Made, say_segment

    terminal = Terminal()
    view, made = CommandProgress("segments", terminal), _Made()
    say_segment(_result(0), view, made)
    say_segment(_result(1, hit_cap=True), view, made)
    view.close()
    drawn = terminal.getvalue()
    assert "2/3 segments, 0:02 of audio, RTF 0.50, 0:00 left" in drawn
    assert "warning: segment 2 reached the step cap" in drawn
    say_segment(_result(2))  # no terminal: the line it always printed
    assert "segment 3/3: 47 steps, 1.00 s audio, RTF 0.50" in capsys.readouterr().err


def test_ctrl_c_cancels_inside_the_block_and_its_old_handler_comes_back() -> None:
    before = signal.getsignal(signal.SIGINT)
    with interrupt_cancels() as token:
        assert not token.cancelled
        os.kill(os.getpid(), signal.SIGINT)  # Ctrl+C (Python runs the handler at once)
        assert token.cancelled
    assert signal.getsignal(signal.SIGINT) is before
