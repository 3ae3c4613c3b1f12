"""The current speaker (from the library, or the voice of a voice seed, random on request) and
the speaker library shared with the command line: list, rename, delete, import, export."""

import random
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import (
    QComboBox,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QRadioButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from chattts_studio.core.errors import StudioError
from chattts_studio.core.voices.speaker_file import SpeakerEntry
from chattts_studio.core.voices.speakers import SpeakerLibrary
from chattts_studio.core.voices.voice import Voice
from chattts_studio.gui.common import dialogs
from chattts_studio.gui.common.file_watch import FileWatch
from chattts_studio.gui.i18n import core_text, translate


@dataclass(frozen=True)
class SpeakerChoice:
    embedding: str | None  # set for a library speaker
    seed: int | None  # the voice seed: set for a seed speaker, and a library one that has it
    label: str
    voice: Voice | None = None  # a library speaker's voice (an embedding or a cloned sample)

    def key(self) -> str:
        return f"seed:{self.seed}" if self.embedding is None else f"library:{self.label}"


class SpeakerPanel(QWidget):
    message = Signal(str)
    embedding_wanted = Signal(int)  # the embedding of a seed needs the loaded model
    audition_wanted = Signal()
    blend_wanted = Signal()  # the Blend dialog (gui/panels/blend.py), made by the window
    library_changed = Signal()  # the entries shown were read again or changed
    new_voice_wanted = Signal()
    preview_wanted = Signal(object)  # Path: the library speaker's preview clip

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.library = SpeakerLibrary.open_or_locked()
        # The command line changes the library too: shown as soon as it does.
        self.watch = FileWatch(self.library.path, self)
        self._build()
        self._connect()
        self.refresh()

    def _build(self) -> None:
        self.seed_mode = QRadioButton(translate("Speaker", "Voice seed"))
        self.library_mode = QRadioButton(translate("Speaker", "From library"))
        self.seed_mode.setChecked(True)
        self.seed_box = QSpinBox()
        self.seed_box.setRange(0, 2**31 - 1)
        self.seed_box.setValue(2)
        voice_seed = translate(
            "Speaker",
            "The voice seed picks the speaker: each number is one voice, the same every time "
            "(keep one you like in the library). It is not the generation seed on the "
            "Advanced tab, which varies how a voice reads the text.",
        )
        self.seed_mode.setToolTip(voice_seed)
        self.seed_box.setToolTip(voice_seed)
        self.library_mode.setToolTip(translate("Speaker", "A voice kept in the speaker library"))
        self.dice = QPushButton(translate("Speaker", "Random"))
        self.dice.setToolTip(translate("Speaker", "A random voice seed: a new voice (Ctrl+R)"))
        self.library_box = QComboBox()
        self.library_box.setToolTip(translate("Speaker", "The library speaker to use"))
        self.copy_seed = QPushButton(translate("Speaker", "Copy voice seed"))
        self.copy_seed.setToolTip(translate("Speaker", "Copy the voice seed to the clipboard"))
        self.copy_embedding = QPushButton(translate("Speaker", "Copy embedding"))
        self.copy_embedding.setToolTip(
            translate("Speaker", "Copy the speaker's embedding (text) to the clipboard")
        )
        self.audition = QPushButton(translate("Speaker", "Audition…"))
        self.audition.setToolTip(
            translate("Speaker", "Hear several random speakers read the same sentence (Ctrl+U)")
        )
        self.blend = QPushButton(translate("Speaker", "Blend…"))
        self.blend.setToolTip(
            translate("Speaker", "Mix two to four speakers into a new voice, hear it and keep it")
        )

        self.new_voice = QPushButton(translate("Speaker", "New voice from a recording…"))
        self.new_voice.setToolTip(
            translate("Speaker", "Clone a voice from an audio file or the microphone")
        )
        self.play_preview = QPushButton(translate("Speaker", "Play preview"))
        self.play_preview.setToolTip(
            translate("Speaker", "Hear the library speaker's preview clip")
        )
        self.list = QListWidget()
        self.list.setMaximumHeight(90)
        self.list.setMinimumHeight(40)  # a small screen: the window fits, the list scrolls
        self.rename = QPushButton(translate("Speaker", "Rename"))
        self.delete = QPushButton(translate("Speaker", "Delete"))
        self.import_button = QPushButton(translate("Speaker", "Import…"))
        self.export_button = QPushButton(translate("Speaker", "Export…"))
        self._name_controls()

        seed_row = QHBoxLayout()
        seed_row.addWidget(self.seed_mode)
        seed_row.addWidget(self.seed_box, 1)
        seed_row.addWidget(self.dice)
        library_row = QHBoxLayout()
        library_row.addWidget(self.library_mode)
        library_row.addWidget(self.library_box, 1)
        copy_row = QHBoxLayout()
        copy_row.addWidget(self.copy_seed)
        copy_row.addWidget(self.copy_embedding)
        copy_row.addWidget(self.audition)
        copy_row.addWidget(self.blend)
        voice_row = QHBoxLayout()
        voice_row.addWidget(self.new_voice)
        voice_row.addWidget(self.play_preview)
        manage_row = QHBoxLayout()
        for button in (self.rename, self.delete, self.import_button, self.export_button):
            manage_row.addWidget(button)

        group = QGroupBox(translate("Speaker", "Speaker"))
        inner = QVBoxLayout(group)
        inner.addLayout(seed_row)
        inner.addLayout(library_row)
        inner.addLayout(copy_row)
        inner.addLayout(voice_row)
        inner.addWidget(QLabel(translate("Speaker", "Library (shared with chattts-studio-cli)")))
        inner.addWidget(self.list)
        inner.addLayout(manage_row)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(group)

    def _name_controls(self) -> None:
        for widget, name in (
            (self.seed_box, translate("Speaker", "Voice seed")),
            (self.library_box, translate("Speaker", "Library speaker")),
            (self.list, translate("Speaker", "Speaker library")),
            (self.dice, translate("Speaker", "Random voice seed")),
        ):
            widget.setAccessibleName(name)
        for button in (
            self.seed_mode,
            self.library_mode,
            self.copy_seed,
            self.copy_embedding,
            self.audition,
            self.blend,
            self.new_voice,
            self.play_preview,
            self.rename,
            self.delete,
            self.import_button,
            self.export_button,
        ):
            button.setAccessibleName(button.text().replace("…", ""))

    def _connect(self) -> None:
        self.dice.clicked.connect(self.roll)
        self.library_box.activated.connect(lambda _i: self.library_mode.setChecked(True))
        self.seed_box.valueChanged.connect(lambda _v: self.seed_mode.setChecked(True))
        self.copy_seed.clicked.connect(self._copy_seed)
        self.copy_embedding.clicked.connect(self._copy_embedding)
        self.audition.clicked.connect(self.audition_wanted)
        self.blend.clicked.connect(self.blend_wanted)
        self.new_voice.clicked.connect(self.new_voice_wanted)
        self.play_preview.clicked.connect(self._play_preview)
        self.library_box.currentIndexChanged.connect(lambda _i: self._update_preview())
        self.library_mode.toggled.connect(lambda _on: self._update_preview())
        self.rename.clicked.connect(self._rename)
        self.delete.clicked.connect(self._delete)
        self.import_button.clicked.connect(self._import)
        self.export_button.clicked.connect(self._export)
        self.watch.changed.connect(self.reload)

    # -- the current speaker ---------------------------------------------------------------
    def roll(self) -> None:
        self.seed_box.setValue(random.randint(1, 99_999))
        self.seed_mode.setChecked(True)

    def current(self) -> SpeakerChoice:
        entry = self.library.get(self.library_box.currentText())
        if self.library_mode.isChecked() and entry is not None:
            return SpeakerChoice(entry.embedding, entry.seed, entry.name, entry.voice)
        seed = self.seed_box.value()
        label = translate("Speaker", "voice seed {seed}").format(seed=seed)
        return SpeakerChoice(None, seed, label)

    def preview_file(self) -> Path | None:
        """The chosen library speaker's preview clip, when it has one on disk."""
        entry = self.library.get(self.library_box.currentText())
        if entry is None or not entry.preview:
            return None
        path = self.library.file(entry.preview)
        return path if path is not None and path.is_file() else None

    def _update_preview(self) -> None:
        self.play_preview.setEnabled(self.preview_file() is not None)

    def _play_preview(self) -> None:
        path = self.preview_file()
        if path is not None:
            self.preview_wanted.emit(path)

    def restore(self, key: str) -> None:
        kind, _, value = key.partition(":")
        if kind == "library" and self.library.get(value):
            self.library_box.setCurrentText(value)
            self.library_mode.setChecked(True)
        elif kind == "seed" and value.isdigit():
            self.seed_box.setValue(int(value))
            self.seed_mode.setChecked(True)

    def _copy_seed(self) -> None:
        choice = self.current()
        if choice.seed is None:
            self.message.emit(
                translate("Speaker", "Speaker '{name}' did not come from a voice seed.").format(
                    name=choice.label
                )
            )
            return
        QGuiApplication.clipboard().setText(str(choice.seed))
        self.message.emit(
            translate("Speaker", "Copied voice seed {seed}.").format(seed=choice.seed)
        )

    def _copy_embedding(self) -> None:
        choice = self.current()
        if choice.embedding is not None:
            said = translate("Speaker", "Copied the embedding of '{name}'.")
            self.copy_text(choice.embedding, said.format(name=choice.label))
        elif choice.seed is not None:
            self.embedding_wanted.emit(choice.seed)

    def copy_text(self, text: str, message: str) -> None:
        QGuiApplication.clipboard().setText(text)
        self.message.emit(message)

    # -- the library -----------------------------------------------------------------------
    def reload(self) -> None:
        """The library as another process left it (its entries are read again)."""
        try:
            changed = self.library.reload()
        except StudioError as exc:  # damaged meanwhile: the entries shown stay
            self.message.emit(core_text(exc))
            return
        if changed:
            self.refresh()

    def refresh(self, select: str | None = None) -> None:
        current = select or self.library_box.currentText()
        chosen = self._selected()
        names = self.library.names()
        self.list.clear()
        for entry in self.library.entries:
            seed = (
                " " + translate("Speaker", "(voice seed {seed})").format(seed=entry.seed)
                if entry.seed is not None
                else ""
            )
            item = QListWidgetItem(f"{entry.name}{seed}")
            item.setData(Qt.ItemDataRole.UserRole, entry.name)  # the row's speaker, whatever moves
            self.list.addItem(item)
        if chosen in names:
            self.list.setCurrentRow(names.index(chosen))
        self.library_box.clear()
        self.library_box.addItems(names)
        if current in names:
            self.library_box.setCurrentText(current)
        self.library_mode.setEnabled(bool(names))
        self._update_preview()
        self.library_changed.emit()

    def store(
        self, name: str, embedding: str, seed: int | None, replace: bool = False, note: str = ""
    ) -> SpeakerEntry:
        """Add the voice (or, with `replace`, give an existing name this voice) and select it.
        Raises SpeakerError, SpeakerNameTaken for a taken name without `replace`."""
        entry = self.library.add(name, embedding, seed, note, replace=replace)
        self.refresh(select=entry.name)
        self.library_mode.setChecked(True)  # a voice just kept is the one the user wants next
        return entry

    def keep(self, name: str, embedding: str, seed: int | None) -> bool:
        """`store`, with its outcome as a message."""
        try:
            entry = self.store(name, embedding, seed)
        except StudioError as exc:
            self.message.emit(core_text(exc))
            return False
        self.message.emit(
            translate("Speaker", "Speaker '{name}' was added to the library.").format(
                name=entry.name
            )
        )
        return True

    def _selected(self) -> str | None:
        item = self.list.currentItem()
        return item.data(Qt.ItemDataRole.UserRole) if item is not None else None

    def _rename(self) -> None:
        old = self._selected()
        if old is None:
            self.message.emit(translate("Speaker", "Select a speaker in the library first."))
            return
        new = dialogs.ask_name(
            self, translate("Speaker", "Rename speaker"), translate("Speaker", "New name:"), old
        )
        if new:
            said = translate("Speaker", "Renamed '{old}' to '{new}'.").format(old=old, new=new)
            self._guard(lambda: self.library.rename(old, new), said)

    def _delete(self) -> None:
        name = self._selected()
        if name is None:
            self.message.emit(translate("Speaker", "Select a speaker in the library first."))
            return
        said = translate("Speaker", "Deleted speaker '{name}'.").format(name=name)
        self._guard(lambda: self.library.remove(name), said)

    def _import(self) -> None:
        path = dialogs.open_speaker_file(self, str(Path.home()))
        if not path:
            return
        try:
            result = self.library.import_file(path)
        except StudioError as exc:
            self.message.emit(core_text(exc))
            return
        self.refresh()
        as_ = translate("Speaker", "'{old}' as '{new}'")
        renamed = ", ".join(as_.format(old=old, new=new) for old, new in result.renamed[:3])
        more = ", …" if len(result.renamed) > 3 else ""
        said = translate("Speaker", "Imported {file}: {counts}").format(
            file=path.name, counts=result.counts()
        )
        self.message.emit(said + (f" ({renamed}{more})." if renamed else "."))

    def _export(self) -> None:
        path = dialogs.save_speaker_file(self, Path.home() / "speakers.json")
        if path:
            said = translate("Speaker", "Exported the library to {path}.").format(path=path)
            self._guard(lambda: self.library.export(path), said)

    def _guard(self, action: Callable[[], object], done: str) -> None:
        try:
            action()
        except StudioError as exc:
            self.message.emit(core_text(exc))
            return
        self.refresh()
        self.message.emit(done)
