"""Makes the README's screenshots: the real window at 1280x800 after a synthesis, in a language and
colour scheme (--project: a segment editor project).

    QT_QPA_PLATFORM=offscreen .venv/bin/python -m chattts_studio.gui.devtools.screenshot \
        resources/screenshots/window-zh_CN-dark.png --language zh_CN --scheme dark
"""

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import Qt

from chattts_studio.gui.app import LANGUAGE_ENV, application, build_window
from chattts_studio.gui.common.theme import apply_scheme
from chattts_studio.gui.resources import sample_text

SCHEMES = {"light": Qt.ColorScheme.Light, "dark": Qt.ColorScheme.Dark}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m chattts_studio.gui.devtools.screenshot")
    parser.add_argument("target", nargs="?", default="resources/screenshot.png")
    parser.add_argument("--language", choices=["en", "zh_CN"])
    parser.add_argument("--scheme", choices=sorted(SCHEMES))
    parser.add_argument("--size", default="1280x800", help="WIDTHxHEIGHT of the window")
    parser.add_argument("--project", action="store_true", help="show a project's segments")
    args = parser.parse_args(argv)
    if args.language:
        os.environ[LANGUAGE_ENV] = args.language  # this run only; the saved choice stays
    app = application()
    if args.scheme:
        apply_scheme(app, SCHEMES[args.scheme])
    window = build_window("demo")
    width, height = (int(n) for n in args.size.split("x"))
    window.resize(width, height)
    window.move(0, 0)
    window.show()

    def spin(done: Callable[[], object], seconds: float = 300.0) -> bool:
        end = time.monotonic() + seconds
        while time.monotonic() < end and not done():
            app.processEvents()
            time.sleep(0.01)
        return bool(done())

    spin(lambda: window.model.loaded is not None and window.jobs.current is None)
    window.editor.set_text(sample_text())
    window.controls.segment_slider.setValue(30)
    window.controls.batch_box.setValue(4)
    window.controls.refine_box.setChecked(False)
    if args.project:
        from chattts_studio.gui.common import dialogs

        folder = Path(tempfile.mkdtemp()) / "sample.chattts"
        dialogs.new_project_path = lambda *_args: folder  # type: ignore[assignment]  # no dialog here
        window.projects.panel.takes_box.setValue(2)
        window.projects.new_from_text()
        spin(lambda: window.jobs.current is None and window.projects.project is not None)
        window.projects.panel.view.go_to(2)
    else:
        window.synthesis.synthesize()
        spin(lambda: window.jobs.current is None)
    for _ in range(50):  # let the panels draw their last frame
        app.processEvents()
        time.sleep(0.02)
    ok = window.grab().save(args.target)
    window.close()
    print(f"{'saved' if ok else 'could not save'} {args.target}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
