"""Every file and text dialog behind one small function, so tests can replace them."""

from pathlib import Path

from PySide6.QtWidgets import QFileDialog, QInputDialog, QWidget

AUDIO_FILTER = "WAV (*.wav);;FLAC (*.flac);;OGG Vorbis (*.ogg);;MP3 (*.mp3)"


def open_text_file(parent: QWidget | None, folder: str) -> Path | None:
    path, _ = QFileDialog.getOpenFileName(
        parent, "Open text", folder, "Text files (*.txt);;All files (*)"
    )
    return Path(path) if path else None


def save_audio_file(parent: QWidget | None, suggested: Path) -> Path | None:
    path, chosen = QFileDialog.getSaveFileName(parent, "Save audio", str(suggested), AUDIO_FILTER)
    if not path:
        return None
    result = Path(path)
    if not result.suffix:  # the filter names the format when the user typed no extension
        result = result.with_suffix("." + chosen.split("*.")[-1].rstrip(")"))
    return result


def open_speaker_file(parent: QWidget | None, folder: str) -> Path | None:
    path, _ = QFileDialog.getOpenFileName(
        parent, "Import speakers", folder, "Speaker libraries (*.json);;All files (*)"
    )
    return Path(path) if path else None


def save_speaker_file(parent: QWidget | None, suggested: Path) -> Path | None:
    path, _ = QFileDialog.getSaveFileName(
        parent, "Export speakers", str(suggested), "Speaker libraries (*.json)"
    )
    return Path(path) if path else None


def choose_model_folder(parent: QWidget | None, folder: str) -> Path | None:
    path = QFileDialog.getExistingDirectory(parent, "Choose a ChatTTS model folder", folder)
    return Path(path) if path else None


def ask_name(parent: QWidget | None, title: str, label: str, text: str = "") -> str | None:
    name, ok = QInputDialog.getText(parent, title, label, text=text)
    return name.strip() if ok and name.strip() else None
