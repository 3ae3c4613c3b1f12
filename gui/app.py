"""Entry points: `main()` for the chattts-studio command, `build_window()` for tests and scripts."""

import sys

from PySide6.QtWidgets import QApplication

from core.quiet import quiet_libraries

from .main_window import MainWindow
from .resources import app_icon


def application() -> QApplication:
    quiet_libraries()  # the terminal stays as quiet as the CLI's
    app = QApplication.instance()
    if not isinstance(app, QApplication):
        app = QApplication(sys.argv[:1])
    app.setApplicationName("ChatTTS Studio")
    app.setOrganizationName("chattts-studio")
    app.setDesktopFileName("chattts-studio")
    app.setWindowIcon(app_icon())
    return app


def build_window(model: str | None = None, device: str | None = None) -> MainWindow:
    """The full window; `model` ('demo', 'demo-full', 'official' or a folder) is loaded at once
    instead of the saved choice, on `device` ('cpu', 'cuda:0', ...) instead of the saved one
    when given (it is saved, as a choice in the window would be)."""
    application()
    if device is None:
        return MainWindow(model)
    from .settings import Key, Settings

    settings = Settings()
    settings.set(Key.DEVICE, device)
    return MainWindow(model, settings)


def main() -> int:
    app = application()
    model = sys.argv[1] if len(sys.argv) > 1 else None
    window = build_window(model)
    previous = sys.excepthook

    def report(kind, error, trace) -> None:  # type: ignore[no-untyped-def]
        # A bug in a slot is printed by Qt and the app goes on: the person must see it too.
        previous(kind, error, trace)
        if isinstance(error, Exception):
            window.show_message(window.error_sentence(error))

    sys.excepthook = report
    window.show()
    code = app.exec()
    # The window may have gone while the worker was still inside a load: never let Python
    # tear a running QThread down (Qt aborts the process); wait for it to end.
    window.host.thread.wait()
    window.host.release()
    return code


if __name__ == "__main__":
    sys.exit(main())
