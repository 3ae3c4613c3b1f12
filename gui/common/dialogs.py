"""Every file and text dialog behind one small function, so tests can replace them."""

from pathlib import Path

from PySide6.QtWidgets import QFileDialog, QInputDialog, QWidget

from chattts_studio.gui.i18n import translate

AUDIO_FILTER = "WAV (*.wav);;FLAC (*.flac);;OGG Vorbis (*.ogg);;MP3 (*.mp3)"  # format names


def _all_files() -> str:
    return translate("Dialogs", "All files (*)")


def open_text_file(parent: QWidget | None, folder: str) -> Path | None:
    path, _ = QFileDialog.getOpenFileName(
        parent,
        translate("Dialogs", "Open text"),
        folder,
        translate("Dialogs", "Text files (*.txt)") + ";;" + _all_files(),
    )
    return Path(path) if path else None


def save_audio_file(parent: QWidget | None, suggested: Path) -> Path | None:
    path, chosen = QFileDialog.getSaveFileName(
        parent, translate("Dialogs", "Save audio"), str(suggested), AUDIO_FILTER
    )
    if not path:
        return None
    result = Path(path)
    if not result.suffix:  # the filter names the format when the user typed no extension
        result = result.with_suffix("." + chosen.split("*.")[-1].rstrip(")"))
    return result


def open_speaker_file(parent: QWidget | None, folder: str) -> Path | None:
    path, _ = QFileDialog.getOpenFileName(
        parent,
        translate("Dialogs", "Import speakers"),
        folder,
        translate("Dialogs", "Speaker libraries (*.json)") + ";;" + _all_files(),
    )
    return Path(path) if path else None


def save_speaker_file(parent: QWidget | None, suggested: Path) -> Path | None:
    path, _ = QFileDialog.getSaveFileName(
        parent,
        translate("Dialogs", "Export speakers"),
        str(suggested),
        translate("Dialogs", "Speaker libraries (*.json)"),
    )
    return Path(path) if path else None


def choose_model_folder(parent: QWidget | None, folder: str) -> Path | None:
    path = QFileDialog.getExistingDirectory(
        parent, translate("Dialogs", "Choose a ChatTTS model folder"), folder
    )
    return Path(path) if path else None


def new_project_path(parent: QWidget | None, folder: str) -> Path | None:
    """Where a new project goes: NAME.chattts, a folder the project makes (not there yet)."""
    path, _ = QFileDialog.getSaveFileName(
        parent,
        translate("Dialogs", "New project"),
        folder,
        translate("Dialogs", "ChatTTS Studio projects (*.chattts)"),
    )
    return Path(path) if path else None


def open_project_folder(parent: QWidget | None, folder: str) -> Path | None:
    path = QFileDialog.getExistingDirectory(
        parent,
        translate("Dialogs", "Open a project (a folder whose name ends in .chattts)"),
        folder,
    )
    return Path(path) if path else None


def ask_name(parent: QWidget | None, title: str, label: str, text: str = "") -> str | None:
    name, ok = QInputDialog.getText(parent, title, label, text=text)
    return name.strip() if ok and name.strip() else None
