"""The render queue: the editor's text, a text or Markdown file or an EPUB book added as render
jobs into a folder the user picks; they run one after another in the worker (the window
starts the next when the worker is free), each row showing its progress; a finished job
opens its folder, a cancelled one keeps its finished segments (the same job added again
resumes from them).

Each job renders into FOLDER/<its title>: the same book into the same folder resumes."""

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TypedDict

from PySide6.QtCore import QUrl, Signal
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QProgressBar,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from chattts_studio.core.render.book import FORMATS
from chattts_studio.core.render.names import safe_name
from chattts_studio.core.services.render_job import RenderDone, RenderSpec
from chattts_studio.core.services.report import Progress
from chattts_studio.gui.common.notices import plural
from chattts_studio.gui.i18n import core_text, translate
from chattts_studio.gui.worker.jobs import Job

# The window's side: the spec of a job from its source, text, title and folder.
SpecMaker = Callable[[Path | None, str, str, Path], RenderSpec]


class RenderChoices(TypedDict):
    """What the queue's options row chooses: RenderOptions' fields of the same names."""

    format: str
    subtitles: str | None  # "srt" or "vtt"
    loudness: float | None  # target LUFS


def choose_folder(parent: QWidget, start: str) -> Path | None:
    """The folder renders go into (a dialog; tests replace this function)."""
    chosen = QFileDialog.getExistingDirectory(
        parent, QWidget.tr(parent, "Render into this folder"), start
    )
    return Path(chosen) if chosen else None


def choose_book(parent: QWidget, start: str) -> Path | None:
    """A text, Markdown or EPUB file to render (a dialog; tests replace this function)."""
    chosen, _ = QFileDialog.getOpenFileName(
        parent,
        QWidget.tr(parent, "Add a book to the render queue"),
        start,
        translate("RenderQueue", "Books (*.txt *.md *.markdown *.epub);;All files (*)"),
    )
    return Path(chosen) if chosen else None


def open_folder(folder: Path) -> bool:
    """Show a folder in the desktop's file manager (tests replace this function)."""
    return QDesktopServices.openUrl(QUrl.fromLocalFile(str(folder)))


def folder_name(title: str) -> str:
    """A job's folder name from its title, one that every system accepts ("CON" -> "CON_")."""
    return safe_name(title, "book")


def title_of(text: str) -> str:
    """A job's name for the editor's text: its first line, shortened."""
    first = next((line.strip() for line in text.splitlines() if line.strip()), "")
    return first[:40].rstrip() or translate("RenderQueue", "Text")


@dataclass
class RenderItem:
    spec: RenderSpec
    state: str = "waiting"  # waiting, running, done, cancelled, failed
    job: Job | None = None
    detail: str = ""
    fraction: float = 0.0
    outcome: RenderDone | None = None


class RenderQueue(QWidget):
    wanted = Signal()  # a job was added: start it when the worker is free
    cancel_requested = Signal(object)  # Job: cancel this running job (and no other)
    message = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.items: list[RenderItem] = []
        self.folder: Path | None = None
        self.spec_for: SpecMaker | None = None  # set by the window
        self.text_source: Callable[[], str] = lambda: ""
        self._build()
        self._connect()
        self._update_buttons()

    def _build(self) -> None:
        self.add_text_button = QPushButton(self.tr("Add the text"))
        self.add_text_button.setToolTip(self.tr("Render the editor's text as a job"))
        self.add_file_button = QPushButton(self.tr("Add a file…"))
        self.add_file_button.setToolTip(self.tr("A .txt, .md or .epub book"))
        self.folder_label = QLabel(self.tr("Folder: not chosen yet"))
        self.folder_button = QPushButton(self.tr("Folder…"))
        self.format_box = QComboBox()
        self.format_box.addItems(list(FORMATS))
        self.format_box.setToolTip(self.tr("The chapter files' format (m4b: one audiobook)"))
        self.format_box.setAccessibleName(self.tr("Format"))
        self.subtitles_box = QCheckBox(self.tr("Subtitles (SRT)"))
        self.loudness_box = QCheckBox(self.tr("Normalise loudness (-16 LUFS)"))
        self.voice_box = QCheckBox(self.tr("Voice check"))
        self.voice_box.setToolTip(
            self.tr(
                "Compare each segment's voice with the render's first segment long enough to "
                "judge, and make one that drifts again, up to 3 times, keeping the most alike "
                "(books only; slower)"
            )
        )
        self.jobs = QListWidget()
        self.jobs.setWordWrap(True)
        self.jobs.setAccessibleName(self.tr("Render jobs"))
        self.progress = QProgressBar()
        self.progress.setRange(0, 1000)
        self.progress.setAccessibleName(self.tr("Progress of the running render"))
        self.open_button = QPushButton(self.tr("Open folder"))
        self.cancel_button = QPushButton(self.tr("Cancel job"))
        self.remove_button = QPushButton(self.tr("Remove"))

        add_row = QHBoxLayout()
        for widget in (self.add_text_button, self.add_file_button, self.folder_button):
            add_row.addWidget(widget)
        add_row.addWidget(self.folder_label, 1)
        options = QHBoxLayout()
        options.addWidget(QLabel(self.tr("Format")))
        options.addWidget(self.format_box)
        options.addWidget(self.subtitles_box)
        options.addWidget(self.loudness_box)
        options.addWidget(self.voice_box)
        options.addStretch(1)
        actions = QHBoxLayout()
        actions.addWidget(self.progress, 1)
        for widget in (self.open_button, self.cancel_button, self.remove_button):
            actions.addWidget(widget)
        layout = QVBoxLayout(self)
        layout.addLayout(add_row)
        layout.addLayout(options)
        layout.addWidget(self.jobs, 1)
        layout.addLayout(actions)

    def _connect(self) -> None:
        self.add_text_button.clicked.connect(self.add_text)
        self.add_file_button.clicked.connect(self.add_file)
        self.folder_button.clicked.connect(self.pick_folder)
        self.open_button.clicked.connect(self.open_selected)
        self.cancel_button.clicked.connect(self.cancel_selected)
        self.remove_button.clicked.connect(self.remove_selected)
        self.jobs.currentRowChanged.connect(lambda _row: self._update_buttons())

    # -- adding jobs -----------------------------------------------------------------------
    def pick_folder(self) -> bool:
        chosen = choose_folder(self, str(self.folder or Path.home()))
        if chosen is None:
            return False
        self.folder = chosen
        self.folder_label.setText(self.tr("Folder: {0}").format(chosen))
        return True

    def add_text(self) -> RenderItem | None:
        text = self.text_source()
        if not text.strip():
            self.message.emit(self.tr("There is no text to render."))
            return None
        return self.add(None, text, title_of(text))

    def add_file(self) -> RenderItem | None:
        path = choose_book(self, str(self.folder or Path.home()))
        return self.add(path, "", path.stem) if path is not None else None

    def add(self, source: Path | None, text: str, title: str) -> RenderItem | None:
        if self.spec_for is None or (self.folder is None and not self.pick_folder()):
            return None
        assert self.folder is not None
        folder = self.folder / folder_name(title)
        item = RenderItem(self.spec_for(source, text, title, folder))
        self.items.append(item)
        self.jobs.addItem("")
        self._show(item)
        self.jobs.setCurrentRow(len(self.items) - 1)
        self.wanted.emit()
        return item

    def options(self) -> RenderChoices:
        """The render options chosen here (RenderOptions' fields)."""
        return {
            "format": self.format_box.currentText(),
            "subtitles": "srt" if self.subtitles_box.isChecked() else None,
            "loudness": -16.0 if self.loudness_box.isChecked() else None,
        }

    def voice_check(self) -> bool:
        """Whether a book's segments are held to its voice (RenderSpec.voice_check)."""
        return self.voice_box.isChecked()

    # -- the window's side -----------------------------------------------------------------
    def next_waiting(self) -> RenderItem | None:
        return next((i for i in self.items if i.state == "waiting"), None)

    @property
    def running(self) -> RenderItem | None:
        return next((i for i in self.items if i.state == "running"), None)

    def _item(self, job: Job) -> RenderItem | None:
        return next((i for i in self.items if i.job is job), None)

    def started(self, item: RenderItem, job: Job) -> None:
        item.state, item.job, item.detail = "running", job, self.tr("starting…")
        self._show(item)

    def show_progress(self, job: Job, progress: Progress) -> None:
        item = self._item(job)
        if item is None:
            return
        if progress.fraction >= 0:
            item.fraction = progress.fraction
            item.detail = core_text(progress.detail)
        self._show(item)

    def finished(self, job: Job, done: RenderDone) -> None:
        item = self._item(job)
        if item is None:
            return
        item.state, item.outcome, item.fraction = "done", done, 1.0
        item.detail = self.tr("{made} segments made, {kept} kept from before; {files}").format(
            made=done.made, kept=done.kept, files=plural(len(done.files), "file")
        )
        if done.voice_checked:
            item.detail += self.tr("; voice check: {segments} made again").format(
                segments=plural(done.voice_rerolled, "segment")
            )
        self._show(item)
        self.message.emit(self.tr("Rendered into {0}.").format(done.folder))

    def stopped(self, job: Job, cancelled: bool, reason: str = "") -> None:
        item = self._item(job)
        if item is None:
            return
        item.state = "cancelled" if cancelled else "failed"
        kept = self.tr("finished segments kept in the folder; add it again to resume")
        item.detail = f"{item.detail} · {kept}" if cancelled else reason
        self._show(item)

    # -- the selected row ------------------------------------------------------------------
    def _selected(self) -> RenderItem | None:
        row = self.jobs.currentRow()
        return self.items[row] if 0 <= row < len(self.items) else None

    def open_selected(self) -> None:
        item = self._selected()
        if item is not None and Path(item.spec.folder).is_dir():
            open_folder(Path(item.spec.folder))

    def cancel_selected(self) -> None:
        item = self._selected()
        if item is None:
            return
        if item.state == "running" and item.job is not None:
            item.detail = self.tr("cancelling…")
            self._show(item)
            self.cancel_requested.emit(item.job)
        elif item.state == "waiting":
            item.state, item.detail = "cancelled", self.tr("not started")
            self._show(item)

    def remove_selected(self) -> None:
        row = self.jobs.currentRow()
        if 0 <= row < len(self.items) and self.items[row].state != "running":
            del self.items[row]
            self.jobs.takeItem(row)
        self._update_buttons()

    def _show(self, item: RenderItem) -> None:
        row = self.items.index(item)
        states = {
            "waiting": self.tr("waiting"),
            "running": self.tr("{0:.0%}").format(item.fraction),
            "done": self.tr("done"),
            "cancelled": self.tr("cancelled"),
            "failed": self.tr("failed"),
        }
        source = item.spec.source.name if item.spec.source else self.tr("the text")
        text = f"{item.spec.title} ({source}) → {item.spec.folder}\n{states[item.state]}"
        if item.detail:
            text += f" · {item.detail}"
        self.jobs.item(row).setText(text)
        self.jobs.item(row).setToolTip(text)
        if item.state == "running":
            self.progress.setValue(int(item.fraction * 1000))
        elif item.state == "done" and self.running is None:
            self.progress.setValue(1000)
        self._update_buttons()

    def _update_buttons(self) -> None:
        item = self._selected()
        self.open_button.setEnabled(item is not None and item.state in ("done", "cancelled"))
        self.cancel_button.setEnabled(item is not None and item.state in ("waiting", "running"))
        self.remove_button.setEnabled(item is not None and item.state != "running")
