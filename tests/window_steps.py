"""For the window tests: quick settings and a synthesis in the real window, and what a Qt
signal sends."""

SHORT = "你好，朋友。Hello there. 再见，明天见。Bye."  # two segments at the smallest size
RUN_MS = 120_000


def fast(  # type: ignore[no-untyped-def]
    window, text: str = SHORT, batch: int = 1, refine: bool = False, segment: int = 10
) -> None:
    """Small, quick settings: `text` in the editor, short segments, no refine pass, no
    streaming playback."""
    window.editor.set_text(text)
    window.controls.segment_slider.setValue(segment)
    window.controls.batch_box.setValue(batch)
    window.controls.refine_box.setChecked(refine)
    window.result.stream_box.setChecked(False)


def run(qtbot, window) -> None:  # type: ignore[no-untyped-def]
    """Run > Synthesize, which starts a job, and its end waited for."""
    window.menu_actions.synth.trigger()
    assert window.jobs.current is not None, window.messages.notice.text()
    qtbot.waitUntil(lambda: window.jobs.current is None, timeout=RUN_MS)


def collect(signal) -> list[tuple]:  # type: ignore[no-untyped-def, type-arg]
    """The arguments of each emission of `signal` from now on."""
    got: list[tuple] = []  # type: ignore[type-arg]
    signal.connect(lambda *args: got.append(args))
    return got
