"""The real window, offscreen, on the stand-in engine: Follow words is off after a synthesis;
ticked, the result's words are timed off the UI thread (the stand-in's tones are no speech, so
every word is estimated, spread over its segment), the editor marks the word at the playback
position, and a click on a word plays the result from that word's start."""

import itertools
import threading

import pytest
from conftest import GUI_WAIT_MS
from window_steps import fast, run

from chattts_studio.core import SAMPLE_RATE
from chattts_studio.core.align.timeline import WordTimeline
from chattts_studio.gui.panels.editor import ESTIMATED_PROPERTY

TEXT = "Hello there, my friend. [uv_break]How are you today? Fine, thanks."

pytestmark = pytest.mark.window(ready="idle", engine="standin")


def test_the_window_follows_the_words_of_its_result(
    qtbot, make_window, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    threads: list[int] = []
    add = WordTimeline.add

    def recorded(self, audio, text, first):  # type: ignore[no-untyped-def]
        threads.append(threading.get_ident())
        add(self, audio, text, first)

    monkeypatch.setattr(WordTimeline, "add", recorded)
    window = make_window()
    fast(window, TEXT)
    run(qtbot, window)
    result, follow, editor = window.result, window.words, window.editor
    store = result.store
    assert store is not None and len(store.segments) >= 2
    assert not result.words_box.isChecked() and not threads  # off by default
    result.words_box.setChecked(True)
    qtbot.waitUntil(lambda: store in follow.timed, timeout=GUI_WAIT_MS)
    assert threads and threading.get_ident() not in threads
    spans = follow.timed[store]
    said = [TEXT[s.first : s.last] for s in spans]
    assert said == "Hello there my friend How are you today Fine thanks".split()
    assert all(s.estimated for s in spans)  # tones, not speech
    assert "10 words timed, 10 of them estimated" in result.words_box.toolTip()
    assert all(a.end <= b.start + 1e-6 for a, b in itertools.pairwise(spans))

    word = spans[6]  # "you", in the second segment
    result.seek.setValue(round((word.start + word.end) / 2 * SAMPLE_RATE))

    def marked() -> str:
        selections = editor.editor.extraSelections()
        if not selections:
            return ""
        cursor = selections[0].cursor
        assert selections[0].format.property(ESTIMATED_PROPERTY) is True
        return TEXT[cursor.selectionStart() : cursor.selectionEnd()]

    qtbot.waitUntil(lambda: marked() == "you", timeout=2000)  # at the panel's next tick

    plays: list[int] = []
    monkeypatch.setattr(result, "play", plays.append)
    editor.editor.clicked.emit(spans[4].first + 1)  # a click inside "How"
    assert plays == [round(spans[4].start * SAMPLE_RATE)]
