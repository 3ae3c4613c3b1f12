"""Exporting a project's chosen takes as the Result panel's save options say (one file, or one
per segment, with subtitles beside it when asked), off the UI thread."""

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QWidget

from chattts_studio.core.project import reading
from chattts_studio.gui.common import dialogs
from chattts_studio.gui.common.notices import plural
from chattts_studio.gui.common.tasks import in_background
from chattts_studio.gui.i18n import translate
from chattts_studio.gui.result.panel import ResultPanel


def export_chosen(
    window: QWidget,
    folder: Path,
    result: ResultPanel,
    show: Callable[[str], None],
    problem: Callable[[Exception], None],
    owner: QObject,
) -> None:
    """The chosen takes of the project in `folder` in order with their pauses, into the file
    the user names: one file (or one file per segment, in a folder named after it), in the
    format its name gives, with SRT or WebVTT subtitles beside it when Subtitles is ticked;
    `show` says what was written, `problem` what went wrong."""
    out = dialogs.save_audio_file(window, folder.parent / f"{folder.stem}.wav")
    if out is None:
        return
    per_segment = result.per_segment.isChecked()
    subtitles = None
    if result.subtitles_box.isChecked() and not per_segment:
        subtitles = out.with_suffix("." + str(result.subtitle_format.currentData()))
    target = out.with_suffix("") if per_segment else out

    def exported(files: list[Path]) -> None:
        if per_segment:
            message = translate("Projects", "Exported {files} into {folder}.").format(
                files=plural(len(files), "file"), folder=target
            )
        elif subtitles is not None:
            message = translate("Projects", "Exported {path} and its subtitles {subtitles}.")
            message = message.format(path=files[0], subtitles=subtitles.name)
        else:
            message = translate("Projects", "Exported {path}.").format(path=files[0])
        show(message)

    def work() -> list[Path]:
        return reading.export(
            folder, target, subtitles, per_segment=per_segment, suffix=out.suffix or ".wav"
        )

    in_background(work, exported, problem, owner)
