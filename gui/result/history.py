"""The history of results (a part of ResultPanel): when, what, how it ended, the settings and
figures; selected, it is the result again. Its audio stays on disk (core/results/history.py).
"""

import dataclasses
import time
from dataclasses import dataclass
from typing import Any

from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QPushButton

from chattts_studio.core import SAMPLE_RATE
from chattts_studio.core.atomic import os_error_reason
from chattts_studio.core.engine.request import JobSummary, SegmentResult, SynthesisRequest
from chattts_studio.core.results.history import (
    DEFAULT_LIMIT_BYTES,
    HistoryStore,
    leftover_sentence,
)
from chattts_studio.core.results.history import size_text as core_size_text
from chattts_studio.core.results.result_store import ResultStore
from chattts_studio.core.services.synthesize import SynthesisJob, SynthesisOutcome
from chattts_studio.core.voices.voice import Voice
from chattts_studio.gui.common.notices import figure, plural
from chattts_studio.gui.common.tasks import in_background
from chattts_studio.gui.i18n import core_text, translate
from chattts_studio.gui.result.base import ResultBase
from chattts_studio.gui.settings import Key, Settings

MB = 1 << 20
LIMIT_CHOICES_MB = (256, 512, 1024, 2048, 5120, 10240)
_RESULT_FIELDS = ("index", "segments", "text", "steps", "compute_seconds", "batch_size")


def saved_history_limit(settings: Settings) -> int:
    """The history's size limit in bytes, as the preferences hold it."""
    return max(1, settings.number(Key.HISTORY_LIMIT_MB)) * MB


def save_history_limit(settings: Settings, limit: int) -> None:
    settings.set(Key.HISTORY_LIMIT_MB, max(1, limit // MB))


def size_text(count: float) -> str:
    """chattts_studio.core.results.history.size_text in the interface's language ("0 bytes" is
    words)."""
    return core_text(core_size_text(count))


def figures_audio(samples: int) -> str:
    return translate("ResultHistory", "{seconds:.1f} s of audio").format(
        seconds=samples / SAMPLE_RATE
    )


@dataclass(frozen=True)
class HistoryEntry:
    outcome: SynthesisOutcome
    made: float  # time.time()
    cancelled: bool = False
    failed: bool = False  # an error stopped the run; these are the segments it finished
    store: ResultStore | None = None
    engine: str = "-"  # device and precision, e.g. "cpu fp32"

    @property
    def partial(self) -> bool:
        """The kept start of a segment cut short by cancel is part of it."""
        return any(r.partial for r in self.outcome.results)

    def title(self) -> str:
        """Two lines: when, what and how it ended; then who, with which settings, on what, and
        its figures (a cancelled or failed run has them too)."""
        job = self.outcome.job
        request = job.request
        text = request.text.strip().replace("\n", " ")
        states = []
        if self.failed:
            states.append(translate("ResultHistory", "stopped by an error"))
        elif self.cancelled:
            states.append(translate("ResultHistory", "cancelled"))
        if self.partial:
            states.append(translate("ResultHistory", "last segment partial"))
        summary = self.outcome.summary
        samples = self.store.length if self.store is not None else len(self.outcome.audio)
        figures = figures_audio(samples)
        if summary is not None:
            figures = translate("ResultHistory", "{audio}, RTF {rtf}, {steps} in {seconds:.1f} s")
            figures = figures.format(
                audio=figures_audio(samples),
                rtf=figure(summary.rtf),
                steps=plural(summary.steps, "step"),
                seconds=summary.wall_seconds,
            )
        # A seed speaker is named in today's language (the record keeps the words of its day).
        speaker = (
            translate("Speaker", "voice seed {seed}").format(seed=job.speaker_seed)
            if job.speaker_seed is not None
            else job.speaker_label
        )
        settings = translate(
            "ResultHistory", "generation seed {seed}, T {temperature:g}, segment {size}"
        ).format(seed=request.seed, temperature=request.temperature, size=request.segment_size)
        day = "%H:%M:%S" if time.time() - self.made < 20 * 3600 else "%Y-%m-%d %H:%M"
        what = f"{text[:40]}{'…' if len(text) > 40 else ''}"
        first = " · ".join([time.strftime(day, time.localtime(self.made)), what, *states])
        return f"{first}\n{speaker} · {settings} · {self.engine} · {figures}"

    def record(self) -> dict[str, Any]:
        """What the store keeps beside the audio to show and reuse the entry after a restart."""
        job, summary = self.outcome.job, self.outcome.summary
        return {
            "request": dataclasses.asdict(job.request),
            "speaker_seed": job.speaker_seed,
            "speaker_label": job.speaker_label,
            "speaker": self.outcome.speaker,
            "summary": dataclasses.asdict(summary) if summary else None,
            "results": [
                {f: getattr(r, f) for f in _RESULT_FIELDS}
                | {"hit_cap": r.hit_cap, "partial": r.partial}
                for r in self.outcome.results
            ],
            "made": self.made,
            "cancelled": self.cancelled,
            "failed": self.failed,
            "engine": self.engine,
        }

    @classmethod
    def reopen(cls, store: ResultStore) -> "HistoryEntry":
        """An entry kept by an earlier run of the app (KeyError/TypeError when damaged)."""
        info = store.info
        fields = {f.name for f in dataclasses.fields(SynthesisRequest)}
        kept = {k: v for k, v in info["request"].items() if k in fields}
        if isinstance(kept.get("voice"), dict):  # asdict() wrote the voice as a mapping
            kept["voice"] = Voice(**kept["voice"])
        kept["lexicon"] = tuple(tuple(pair) for pair in kept.get("lexicon", ()))
        request = SynthesisRequest(**kept)
        samples = store.samples()
        results = []
        for r in info["results"]:
            start, end = store.segments.get(int(r["index"]), (0, 0))
            results.append(SegmentResult(audio=samples[start:end], **r))
        summary = JobSummary(**info["summary"]) if info.get("summary") else None
        job = SynthesisJob(request, info.get("speaker_seed"), str(info.get("speaker_label", "")))
        outcome = SynthesisOutcome(job, results, summary, str(info.get("speaker", "")), None, store)
        return cls(
            outcome,
            float(info.get("made", store.made)),
            bool(info.get("cancelled")),
            bool(info.get("failed")),
            store,
            str(info.get("engine", "-")),
        )


class ResultHistory(ResultBase):
    """Mixed into ResultPanel (its history list, result and player)."""

    history_limit = DEFAULT_LIMIT_BYTES
    history: list[HistoryEntry]  # oldest first, made by panel.py

    def _build_usage(self) -> None:
        self.usage_label = QLabel()
        self.clear_button = QPushButton(self.tr("Clear"))
        self.clear_button.setToolTip(self.tr("Remove every result from the history and the disk"))
        self.limit_box = QComboBox()
        self.limit_box.setAccessibleName(self.tr("History size limit"))
        self.limit_box.setToolTip(
            self.tr("The most disk space the history may use; the oldest results go first")
        )
        for mb in LIMIT_CHOICES_MB:
            self.limit_box.addItem(self.tr("limit {0}").format(size_text(mb * MB)), mb * MB)
        self.usage_row = QHBoxLayout()
        self.usage_row.addWidget(self.usage_label, 1)
        self.usage_row.addWidget(self.limit_box)
        self.usage_row.addWidget(self.clear_button)
        self._usage = 0

    def _connect_usage(self) -> None:
        self.clear_button.clicked.connect(self.clear_history)
        self.limit_box.activated.connect(
            lambda row: self.set_history_limit(int(self.limit_box.itemData(row)))
        )

    # -- the entries -----------------------------------------------------------------------
    def restore_history(self) -> None:
        """The results kept by earlier runs of the app, oldest first; the newest shown."""
        for store in self.history_store.restore():
            try:
                entry = HistoryEntry.reopen(store)
            except (KeyError, TypeError, ValueError):
                store.delete()  # a record this version cannot read
                continue
            self._add_entry(entry)
        if self.history:
            self._show_entry(self.history[-1])
        self._update_usage()

    def _remember(self, outcome: SynthesisOutcome, cancelled: bool, failed: bool) -> None:
        loaded = outcome.loaded
        engine = f"{loaded.device.id} {loaded.precision.value}" if loaded else "-"
        entry = HistoryEntry(outcome, time.time(), cancelled, failed, outcome.store, engine)
        if entry.store is not None:
            try:
                entry.store.finish(entry.record())
            except OSError as exc:  # a full disk, a file held open (Windows): keep it shown
                self.message.emit(
                    self.tr(
                        "This result could not be kept in the history ({0}); it stays here "
                        "until the window closes. Save it to keep it."
                    ).format(core_text(os_error_reason(exc)))
                )
        self._add_entry(entry)
        self._trim_history()

    def _add_entry(self, entry: HistoryEntry) -> None:
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
            self._show_entry(self.history[row])

    def _show_entry(self, entry: HistoryEntry) -> None:
        self.store = entry.store
        self.results = list(entry.outcome.results)
        self.pause_seconds = entry.outcome.job.request.pause_seconds
        self.shown_text = entry.outcome.job.request.text if entry.outcome.results else ""
        self._show_audio()
        self.shown_changed.emit()

    # -- its size --------------------------------------------------------------------------
    def set_history_limit(self, limit: int) -> None:
        self.history_limit = max(MB, int(limit))
        row = self.limit_box.findData(self.history_limit)
        if row < 0:
            self.limit_box.addItem(
                self.tr("limit {0}").format(size_text(self.history_limit)), self.history_limit
            )
            row = self.limit_box.count() - 1
        self.limit_box.setCurrentIndex(row)
        self.history_limit_changed.emit(self.history_limit)
        self._trim_history()

    def _trim_history(self) -> None:
        """Drop the oldest results beyond the limit; the newest is always kept."""
        stores = [e.store for e in self.history if e.store is not None]
        keep = self.history[-1].store if self.history else None
        dropped = HistoryStore.over_limit(stores, self.history_limit, keep)
        if dropped:
            self._forget({id(s) for s in dropped})
        self._update_usage()

    def clear_history(self) -> None:
        """Every result goes, from the list and the disk (a run being made stays)."""
        self._forget({id(e.store) for e in self.history}, delete=False)  # clear() removes them
        running = self._running_store
        folder = self.history_store
        # Many large files: removed on the pool; the line says so once they are gone.
        # Another window clearing or starting at the same moment holds the history's lock for
        # a while: its one sentence is shown, nothing is deleted.
        in_background(
            lambda: folder.clear(running),
            lambda left: self._deleted(len(left)),
            lambda exc: self.message.emit(core_text(exc)),
            owner=self,
        )

    def _forget(self, stores: set[int], delete: bool = True) -> None:
        gone = [e for e in self.history if id(e.store) in stores]
        if not gone:
            return
        if self.store is not None and id(self.store) in stores and not self.running:
            self.stop()
            self.store, self.results, self.shown_text = None, [], ""
            self._show_audio()
            self.shown_changed.emit()
        rows = [i for i, e in enumerate(self.history) if id(e.store) in stores]
        self.history_list.blockSignals(True)
        for row in reversed(rows):
            self.history_list.takeItem(row)
            del self.history[row]
        self.history_list.blockSignals(False)
        doomed = [e.store for e in gone if e.store is not None]
        for store in doomed:
            store.close()
        # The entries hold views of their audio (mapped): Windows deletes a file only once
        # the last view is gone, so none stays here while the pool deletes.
        del gone
        if delete:
            in_background(lambda: sum(not s.delete() for s in doomed), self._deleted, owner=self)

    def _deleted(self, left: int) -> None:
        """Removed results whose files another window or program still holds (Windows) stay
        on disk until it lets go: the window says so."""
        note = leftover_sentence(left)
        if note:
            self.message.emit(core_text(note))
        self._update_usage()

    def _update_usage(self) -> None:
        folder = self.history_store

        def shown(used: int) -> None:
            self._usage = used
            self.usage_label.setText(
                self.tr("History uses {0} of {1}").format(
                    size_text(used), size_text(self.history_limit)
                )
            )

        in_background(folder.usage, shown, owner=self)
