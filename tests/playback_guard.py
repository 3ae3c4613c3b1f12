"""Every output stream the tests open, so that one still playing after its test fails that
test. The virtual device takes samples as fast as they come: a stream left playing silence
(a growing stream nobody ends) spins a core and fills the disk under the tests after it."""

import weakref

_streams: "weakref.WeakSet[object]" = weakref.WeakSet()


def watch() -> None:
    """Record each sounddevice.OutputStream as it is made (once per process)."""
    try:
        import sounddevice as sd
    except OSError:  # no PortAudio: nothing can play
        return
    if getattr(sd.OutputStream, "_watched_by_tests", False):
        return
    made = sd.OutputStream.__init__

    def init(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        made(self, *args, **kwargs)
        _streams.add(self)

    sd.OutputStream.__init__ = init  # type: ignore[method-assign]
    sd.OutputStream._watched_by_tests = True  # type: ignore[attr-defined]


def stop_left_playing() -> int:
    """Abort and close each stream still playing; how many there were."""
    left = 0
    for stream in list(_streams):
        try:
            playing = not stream.closed and stream.active  # type: ignore[attr-defined]
        except Exception:  # PortAudio already let it go
            continue
        if playing:
            left += 1
            stream.abort()  # type: ignore[attr-defined]
            stream.close()  # type: ignore[attr-defined]
    return left
