"""Makes the README's screenshot: the real window, after a synthesis, live panel filled.

    xvfb-run -a -s "-screen 0 1280x800x24" env QT_QPA_PLATFORM=xcb \\
        .venv/bin/python -m gui.screenshot resources/screenshot.png
"""

import sys
import time

from .app import application, build_window
from .resources import sample_text


def main(argv: list[str] | None = None) -> int:
    target = (argv or sys.argv[1:] or ["resources/screenshot.png"])[0]
    app = application()
    window = build_window("demo")
    window.resize(1280, 800)
    window.move(0, 0)
    window.show()

    def spin(done, seconds: float = 300.0) -> bool:  # type: ignore[no-untyped-def]
        end = time.monotonic() + seconds
        while time.monotonic() < end and not done():
            app.processEvents()
            time.sleep(0.01)
        return bool(done())

    spin(lambda: window.loaded is not None and window.current_job is None)
    window.editor.set_text(sample_text())
    window.controls.segment_slider.setValue(30)
    window.controls.batch_box.setValue(4)
    window.controls.refine_box.setChecked(False)
    window.synthesize()
    spin(lambda: window.current_job is None)
    for _ in range(50):  # let the panels draw their last frame
        app.processEvents()
        time.sleep(0.02)
    ok = window.grab().save(target)
    window.close()
    print(f"{'saved' if ok else 'could not save'} {target}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
