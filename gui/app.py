"""Entry points: `main()` for the chattts-studio command, `open_window()` and `build_window()` for
tests and scripts. A second launch hands FILE to the open window and exits; heavy modules load
only once a window is wanted.
"""

import argparse
import os
import sys
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING

from PySide6.QtCore import QCoreApplication, QEvent, Qt
from PySide6.QtWidgets import QApplication, QWidget

from chattts_studio.core import platforms
from chattts_studio.core.engine.quiet import quiet_libraries
from chattts_studio.gui import i18n
from chattts_studio.gui.common.theme import follow_system
from chattts_studio.gui.resources import app_icon

if TYPE_CHECKING:
    from chattts_studio.gui.window.main_window import MainWindow
    from chattts_studio.gui.worker.worker import EngineFactory

# Overrides the saved language for one run ("en", "zh_CN"): screenshots, bug reports.
LANGUAGE_ENV = "CHATTTS_STUDIO_LANGUAGE"
# Windows' taskbar identity of the app's windows (its CompanyName.ProductName form).
APP_USER_MODEL_ID = "ChatTTSStudio.ChatTTSStudio"


def set_taskbar_identity() -> bool:
    """On Windows, give this process ChatTTS Studio's own AppUserModelID, so the taskbar shows
    its windows under the app's icon and name instead of python.exe's (the process is Python's
    executable). It must happen before the first window shows. True when it was set; elsewhere,
    or when Windows refuses, nothing happens (a taskbar icon is not worth failing a start)."""
    if not platforms.is_windows():
        return False
    import ctypes

    try:
        shell32 = ctypes.windll.shell32  # type: ignore[attr-defined]  # Windows only
        return bool(shell32.SetCurrentProcessExplicitAppUserModelID(APP_USER_MODEL_ID) == 0)
    except (AttributeError, OSError, ctypes.ArgumentError):
        return False


def application() -> QApplication:
    quiet_libraries()  # the terminal stays as quiet as the CLI's
    set_taskbar_identity()  # before any window: the taskbar asks when one first shows
    app = QApplication.instance()
    if not isinstance(app, QApplication):
        app = QApplication(sys.argv[:1])
    app.setApplicationName("ChatTTS Studio")
    app.setOrganizationName("chattts-studio")
    app.setDesktopFileName("chattts-studio")
    app.setWindowIcon(app_icon())
    follow_system(app)
    return app


def set_up_language() -> str:
    """Install the translation the window speaks: $CHATTTS_STUDIO_LANGUAGE, else the one chosen
    in Settings > Language, else the system locale's. Widgets take their texts when they are
    made, so this runs before the window is built."""
    from chattts_studio.gui.settings import saved_language

    language = i18n.resolve(os.environ.get(LANGUAGE_ENV) or saved_language())
    if not i18n.install(language):
        i18n.install("en")  # a missing .qm: the untranslated interface, not a broken one
    return i18n.active()


def build_window(
    model: str | None = None, device: str | None = None, *, engine: "EngineFactory | None" = None
) -> "MainWindow":
    """The full window; `model` ('demo', 'demo-full', 'official' or a folder) is loaded at once
    instead of the saved choice, on `device` ('cpu', 'cuda:0', ...) instead of the saved one
    when given (it is saved, as a choice in the window would be). With `engine` (tests: a
    stand-in's factory) its worker runs each op inline on the UI thread with that engine."""
    application()
    set_up_language()
    from chattts_studio.gui.settings import Key, Settings
    from chattts_studio.gui.window.main_window import MainWindow

    settings: Settings | None = None
    if device is not None:
        settings = Settings()
        settings.set(Key.DEVICE, device)
    return MainWindow(model, settings, engine=engine)


def open_file(window: "MainWindow", path: Path) -> None:
    """Put a text file into the editor, as File > Open does (a problem shows as a message)."""
    if window.editor.open_file(path):
        window.show_message(i18n.translate("App", "Opened {path}.").format(path=path))


def bring_to_front(window: "MainWindow") -> None:
    window.setWindowState(window.windowState() & ~Qt.WindowState.WindowMinimized)
    window.show()
    window.raise_()
    window.activateWindow()


def open_window(
    model: str | None = None, file: Path | None = None, instance_name: str | None = None
) -> "MainWindow":
    """The window `chattts-studio [--model NAME] [FILE]` opens (not yet shown): FILE's text in
    the editor, and, with `instance_name`, listening for the files later launches hand over."""
    window = build_window(model)
    if file is not None:
        open_file(window, file)
    if instance_name is not None:
        from chattts_studio.gui.single_instance import InstanceServer

        server = InstanceServer(instance_name, window)

        def received(name: str) -> None:
            if name:
                open_file(window, Path(name))
            bring_to_front(window)

        server.file_received.connect(received)
        server.listen()
        window.instance_server = server
    return window


def parse_arguments(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="chattts-studio", description="ChatTTS Studio: text to speech with ChatTTS."
    )
    parser.add_argument("file", nargs="?", type=Path, metavar="FILE", help="a text file to open")
    parser.add_argument(
        "--model", help="load this model at start: demo, demo-full, official or a folder"
    )
    parser.add_argument(
        "--install-desktop-entry",
        action="store_true",
        help="add ChatTTS Studio and its icon to this user's applications menu, then exit",
    )
    return parser.parse_args(argv)


def install_desktop_entry() -> int:
    from chattts_studio.gui.desktop_entry import DesktopEntryError, install

    try:
        written = install()
    except DesktopEntryError as exc:
        print(exc, file=sys.stderr)
        return 2
    for path in written:
        print(f"Wrote {path}")
    return 0


def main(argv: list[str] | None = None) -> int:
    args = parse_arguments(argv)
    if args.install_desktop_entry:
        return install_desktop_entry()
    from chattts_studio.gui.single_instance import hand_over, server_name

    file = Path(args.file).absolute() if args.file is not None else None
    instance_name = server_name()
    if hand_over(file, instance_name):
        where = f"handed {file} to its window" if file else "brought its window to the front"
        print(f"ChatTTS Studio is already running: {where}.")
        return 0
    app = application()
    window = open_window(args.model, file, instance_name)
    from chattts_studio.gui.control.messages import error_sentence

    previous = sys.excepthook

    def report(
        kind: type[BaseException], error: BaseException, trace: TracebackType | None
    ) -> None:
        # A bug in a slot is printed by Qt and the app goes on: the person must see it too.
        previous(kind, error, trace)
        if isinstance(error, Exception):
            window.messages.show(error_sentence(error))

    sys.excepthook = report
    window.show()
    code = app.exec()
    window.instance_server.close()  # a later launch starts anew
    # The window may have gone while the worker was still inside a load: never let Python
    # tear a running QThread down (Qt aborts the process); wait for it to end.
    window.host.worker_thread.wait()
    window.host.release()
    sys.excepthook = previous  # `report` holds the window
    close_window(window)
    return code


def close_window(window: QWidget) -> None:
    """Delete the window now, while Qt and pyqtgraph are whole: left to the interpreter's exit,
    its plots can be torn down after the parts they need and crash the process."""
    window.deleteLater()
    # The event loop has ended: run the deferred delete (and what it posts) by hand.
    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    QCoreApplication.processEvents()


if __name__ == "__main__":
    sys.exit(main())
