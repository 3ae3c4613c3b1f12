"""The history of this session's results: each with when, what, how it ended, who spoke,
its settings, device and precision, and its figures; selected, it is the result again. A
part of ResultPanel."""

import time
from dataclasses import dataclass

from core import SAMPLE_RATE

from .jobs import SynthesisOutcome
from .notices import figure, plural


@dataclass(frozen=True)
class HistoryEntry:
    outcome: SynthesisOutcome
    made: float  # time.time()
    cancelled: bool = False
    failed: bool = False  # an error stopped the run; these are the segments it finished

    @property
    def partial(self) -> bool:
        """The kept start of a segment cut short by cancel is part of it."""
        return any(r.partial for r in self.outcome.results)

    def title(self) -> str:
        """Two lines: when, what and how it ended; then who, with which settings, on what, and
        its figures (a cancelled or failed run has them too)."""
        request = self.outcome.job.request
        text = request.text.strip().replace("\n", " ")
        state = " · cancelled" if self.cancelled else ""
        state = " · stopped by an error" if self.failed else state
        if self.partial:
            state += " · last segment partial"
        loaded = self.outcome.loaded
        engine = f"{loaded.device.id} {loaded.precision.value}" if loaded else "-"
        summary = self.outcome.summary
        seconds = len(self.outcome.audio) / SAMPLE_RATE
        figures = f"{seconds:.1f} s of audio"
        if summary is not None:
            figures += (
                f", RTF {figure(summary.rtf)}, {plural(summary.steps, 'step')} in "
                f"{summary.wall_seconds:.1f} s"
            )
        return (
            f"{time.strftime('%H:%M:%S', time.localtime(self.made))} · "
            f"{text[:40]}{'…' if len(text) > 40 else ''}{state}\n"
            f"{self.outcome.job.speaker_label} · generation seed {request.seed}, "
            f"T {request.temperature:g}, segment {request.segment_size} · {engine} · {figures}"
        )


class ResultHistory:
    """Mixed into ResultPanel (its history list, result and player)."""

    def _remember(self, outcome: SynthesisOutcome, cancelled: bool, failed: bool) -> None:
        entry = HistoryEntry(outcome, time.time(), cancelled, failed)
        self.history.append(entry)
        title = entry.title()
        self.history_list.blockSignals(True)
        self.history_list.addItem(title)
        self.history_list.item(len(self.history) - 1).setToolTip(title)
        self.history_list.setCurrentRow(len(self.history) - 1)
        self.history_list.blockSignals(False)

    def select_history(self, row: int) -> None:
        if 0 <= row < len(self.history) and not self.running:
            self.stop()
            outcome = self.history[row].outcome
            self.results = list(outcome.results)
            self.pause_seconds = outcome.job.request.pause_seconds
            self._set_audio(outcome.audio)  # joined once, by the worker
