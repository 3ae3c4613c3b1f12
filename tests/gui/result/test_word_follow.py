"""Follow words: with the box ticked, the word spoken at the player's position is marked in the
editor (faintly for an estimated one), a click on a word plays from its start, an edit of the
text turns the marks off (and an undo back on) without touching the text or its undo steps,
and the words are timed on the task pool, never on the UI thread."""

import threading
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QTextCharFormat, QTextCursor
from PySide6.QtTest import QTest

from chattts_studio.core import SAMPLE_RATE
from chattts_studio.core.align.spans import WordSpan
from chattts_studio.core.align.timeline import WordTimeline
from chattts_studio.core.devtools.alignacc import sentence
from chattts_studio.core.engine.request import (
    AudioChunk,
    JobSummary,
    SegmentResult,
    SynthesisRequest,
)
from chattts_studio.core.results.history import HistoryStore
from chattts_studio.core.services.synthesize import SynthesisJob, SynthesisOutcome
from chattts_studio.gui.panels.editor import ESTIMATED_PROPERTY, EditorPanel
from chattts_studio.gui.result.panel import ResultPanel
from chattts_studio.gui.result.word_follow import WordFollow

FIRST, SECOND = "The weather is very nice today.", "Please bring the blue folder."
TEXT = f"{FIRST} [uv_break]{SECOND}"
WAIT_MS = 60_000


class PositionedPlayer:
    """Stands for the player: it plays, at the sample the test puts it."""

    def __init__(self) -> None:
        self.position, self.playing = 0, False

    def stop(self) -> None:
        self.playing = False


class Parts:
    def __init__(self, qtbot, tmp_path: Path, clips: list[np.ndarray]) -> None:  # type: ignore[no-untyped-def]
        self.player = PositionedPlayer()
        self.result = result = ResultPanel(self.player, history=HistoryStore(tmp_path / "h"))  # type: ignore[arg-type]
        self.editor = EditorPanel()
        qtbot.addWidget(result)
        qtbot.addWidget(self.editor)
        self.follow = WordFollow(result, self.editor)
        self.editor.set_text(TEXT)
        result.stream_box.setChecked(False)
        result.begin(0.25)
        results = []
        for index, (said, clip) in enumerate(zip((FIRST, SECOND), clips, strict=True)):
            result.add_chunk(AudioChunk(index, clip, True))
            made = SegmentResult(index, 2, said, clip, 10, 0.1, 1)
            result.add_segment(made)
            results.append(made)
        request = SynthesisRequest(TEXT, refine_text=False, segment_size=10, batch_size=1)
        summary = JobSummary(2, 2.5, 0.25, 100, 0.5, None)
        outcome = SynthesisOutcome(SynthesisJob(request, 2, "voice seed 2"), results, summary, "")
        result.end(outcome)
        self.plays: list[int] = []

    def marked(self) -> tuple[int, int, bool] | None:
        selections = self.editor.editor.extraSelections()
        if not selections:
            return None
        assert len(selections) == 1
        cursor = selections[0].cursor
        estimated = bool(selections[0].format.property(ESTIMATED_PROPERTY))
        return cursor.selectionStart(), cursor.selectionEnd(), estimated

    def at(self, qtbot, seconds: float, expected: tuple[int, int, bool] | None) -> None:  # type: ignore[no-untyped-def]
        """The player at `seconds`: the mark that follows at the panel's next tick."""
        self.player.playing, self.player.position = True, round(seconds * SAMPLE_RATE)
        qtbot.waitUntil(lambda: self.result.seek.value() == self.player.position, timeout=2000)
        assert self.marked() == expected


def spans_of(text: str) -> list[WordSpan]:
    """A known timing list: each word of `text` 0.3 s long, 0.1 s apart; every third word
    estimated, and a 2 s pause before "Please"."""
    spans: list[WordSpan] = []
    at = 0.2
    for index, word in enumerate(text.replace("[uv_break]", " ").replace(".", " ").split()):
        if word == "Please":
            at += 2.0
        first = text.index(word, spans[-1].last if spans else 0)
        spans.append(WordSpan(at, at + 0.3, first, first + len(word), index % 3 == 2))
        at += 0.4
    return spans


@pytest.fixture
def timed(qtbot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Parts:  # type: ignore[no-untyped-def]
    """A finished two-segment result (noise) whose word times are the known list."""
    clips = [np.random.default_rng(i).uniform(-0.3, 0.3, SAMPLE_RATE * 4) for i in (1, 2)]
    parts = Parts(qtbot, tmp_path, [c.astype(np.float32) for c in clips])
    store = parts.result.store
    assert store is not None
    parts.follow.timed[store] = spans_of(TEXT)
    parts.result.words_box.setChecked(True)
    monkeypatch.setattr(parts.result, "play", parts.plays.append)
    return parts


def test_the_word_spoken_at_the_position_is_marked(qtbot, timed: Parts) -> None:  # type: ignore[no-untyped-def]
    spans = spans_of(TEXT)
    for span in spans:
        timed.at(qtbot, (span.start + span.end) / 2, (span.first, span.last, span.estimated))
        word = TEXT[span.first : span.last]
        assert word.isalpha() and word in TEXT.split(" ")[0] + FIRST + SECOND
    timed.at(qtbot, 0.1, None)  # before the first word
    please = next(s for s in spans if TEXT[s.first : s.last] == "Please")
    timed.at(qtbot, please.start - 1.0, None)  # in the long pause
    timed.at(qtbot, spans[-1].end + 1.0, None)  # after the last
    # Unticked: nothing marked, wherever it plays.
    timed.result.words_box.setChecked(False)
    timed.at(qtbot, (spans[1].start + spans[1].end) / 2, None)


def mark_format(parts: Parts) -> QTextCharFormat:
    selections = parts.editor.editor.extraSelections()  # held: its formats live in it
    return QTextCharFormat(selections[0].format)


def test_an_estimated_word_is_marked_faintly(qtbot, timed: Parts) -> None:  # type: ignore[no-untyped-def]
    spans = spans_of(TEXT)
    heard, estimated = spans[0], spans[2]
    timed.at(qtbot, heard.start + 0.1, (heard.first, heard.last, False))
    strong = mark_format(timed)
    timed.at(qtbot, estimated.start + 0.1, (estimated.first, estimated.last, True))
    faint = mark_format(timed)
    assert faint.background().color().alpha() < strong.background().color().alpha()
    assert faint.underlineStyle() != strong.underlineStyle()


def click_at(parts: Parts, position: int) -> None:
    editor = parts.editor.editor
    cursor = QTextCursor(editor.document())
    cursor.setPosition(position)
    point = editor.cursorRect(cursor).center() + QPoint(2, 0)
    QTest.mouseClick(editor.viewport(), Qt.MouseButton.LeftButton, pos=point)


def test_a_click_on_a_word_plays_from_its_start(qtbot, timed: Parts) -> None:  # type: ignore[no-untyped-def]
    spans = spans_of(TEXT)
    for k in (0, 3, len(spans) - 1):
        click_at(timed, spans[k].first)
        assert timed.plays[-1] == round(spans[k].start * SAMPLE_RATE), k
    count = len(timed.plays)
    click_at(timed, TEXT.index("[uv_break]") + 3)  # a control token is no word
    timed.result.words_box.setChecked(False)
    click_at(timed, spans[1].first)  # unticked: a click only places the cursor
    assert len(timed.plays) == count


def test_an_edit_turns_the_marks_off_and_touches_nothing(qtbot, timed: Parts) -> None:  # type: ignore[no-untyped-def]
    spans = spans_of(TEXT)
    document = timed.editor.editor.document()
    steps = document.availableUndoSteps()
    timed.at(qtbot, spans[1].start + 0.1, (spans[1].first, spans[1].last, False))
    timed.at(qtbot, spans[4].start + 0.1, (spans[4].first, spans[4].last, False))
    # Marking is no edit: the text and its undo steps are the user's alone.
    assert timed.editor.text() == TEXT and document.availableUndoSteps() == steps
    editor = timed.editor.editor
    editor.moveCursor(QTextCursor.MoveOperation.End)
    QTest.keyClicks(editor, "!")
    assert timed.editor.text() == TEXT + "!", timed.editor.text()
    assert timed.marked() is None
    timed.at(qtbot, spans[1].start + 0.1, None)  # the text differs: nothing follows
    click_at(timed, spans[0].first)
    assert timed.plays == []
    editor.undo()  # the text it was made from again: the words follow again
    assert timed.editor.text() == TEXT
    timed.at(qtbot, spans[1].start + 0.15, (spans[1].first, spans[1].last, False))


def test_the_words_are_timed_on_the_pool_never_on_the_ui_thread(
    qtbot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    one, two = sentence("en-us+f2", FIRST), sentence("en-us+f2", SECOND)
    assert one is not None and two is not None
    threads: list[int] = []
    add = WordTimeline.add

    def recorded(self: WordTimeline, audio: np.ndarray, text: str, first: int) -> None:
        threads.append(threading.get_ident())
        add(self, audio, text, first)

    monkeypatch.setattr(WordTimeline, "add", recorded)
    parts = Parts(qtbot, tmp_path, [one.audio, two.audio])
    store = parts.result.store
    assert store is not None and not parts.follow.timed  # off by default: nothing timed
    parts.result.words_box.setChecked(True)
    qtbot.waitUntil(lambda: store in parts.follow.timed, timeout=WAIT_MS)
    assert len(threads) == 2 and threading.get_ident() not in threads
    found = parts.follow.timed[store]
    assert [TEXT[s.first : s.last] for s in found] == [*one.words, *two.words]
    second_at = store.segments[1][0] / SAMPLE_RATE
    truth = one.starts + [s + second_at for s in two.starts]
    assert np.median(np.abs(np.subtract([s.start for s in found], truth))) <= 0.04
    # The word espeak-ng says at a time is the one marked then.
    weather = one.words.index("weather")
    middle = (truth[weather] + truth[weather + 1]) / 2
    span = found[weather]
    parts.at(qtbot, middle, (span.first, span.last, span.estimated))
    assert TEXT[span.first : span.last] == "weather"


def test_a_word_out_of_sight_is_scrolled_into_view(qtbot) -> None:  # type: ignore[no-untyped-def]
    editor = EditorPanel()
    qtbot.addWidget(editor)
    editor.resize(400, 200)
    editor.show()
    lines = "\n".join(f"line {n} says word{n}." for n in range(200))
    wrapped = " ".join(f"w{n}" for n in range(3000))  # one paragraph of many lines
    text = f"{lines}\n{wrapped}\nThe end."
    editor.set_text(text)
    view = editor.editor
    cursor_before = view.textCursor().position()
    for word in ("word150", "word3", "w2900", "word199", "w1500", "end", "word80"):
        first = text.index(word)
        editor.mark_spoken(first, first + len(word), False)
        place = QTextCursor(view.document())
        place.setPosition(first)
        rect = view.cursorRect(place)
        assert rect.top() >= 0 and rect.bottom() <= view.viewport().height(), word
    assert view.textCursor().position() == cursor_before  # the user's cursor never moves


def test_each_result_is_timed_once_and_the_shown_ones_words_followed(
    qtbot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    from chattts_studio.core.align import spans as word_times

    asked: list[tuple[str, int]] = []

    def timed_words(text: str, segments: list, rate: int) -> list[WordSpan]:  # type: ignore[type-arg]
        asked.append((text, threading.get_ident()))
        return spans_of(text)

    monkeypatch.setattr(word_times, "result_spans", timed_words)
    clips = [np.random.default_rng(i).uniform(-0.3, 0.3, SAMPLE_RATE * 4) for i in (1, 2)]
    parts = Parts(qtbot, tmp_path, [c.astype(np.float32) for c in clips])
    result = parts.result
    first_store = result.store
    parts.result.words_box.setChecked(True)
    qtbot.waitUntil(lambda: len(asked) == 1, timeout=WAIT_MS)
    # A second result arrives while the box is ticked: it is timed when it ends.
    result.begin(0.25)
    result.add_chunk(AudioChunk(0, clips[0].astype(np.float32), True))
    made = SegmentResult(0, 1, FIRST, clips[0].astype(np.float32), 10, 0.1, 1)
    result.add_segment(made)
    request = SynthesisRequest(FIRST, refine_text=False, segment_size=10, batch_size=1)
    job = SynthesisJob(request, 2, "voice seed 2")
    result.end(SynthesisOutcome(job, [made], JobSummary(1, 4, 0.4, 10, 0.1, None), ""))
    qtbot.waitUntil(lambda: len(asked) == 2, timeout=WAIT_MS)
    assert [text for text, _ in asked] == [TEXT, FIRST]
    assert threading.get_ident() not in [thread for _, thread in asked]
    # The editor holds the first result's text: the second's words are not followed.
    spans = spans_of(TEXT)
    parts.at(qtbot, spans[1].start + 0.1, None)
    result.history_list.setCurrentRow(0)  # the first again: followed, not timed again
    assert result.store is first_store
    parts.at(qtbot, spans[1].start + 0.15, (spans[1].first, spans[1].last, False))
    assert len(asked) == 2


def test_words_that_cannot_be_timed_are_one_sentence_and_not_tried_again(
    qtbot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    from chattts_studio.core.align import spans as word_times
    from chattts_studio.core.errors import ModelError

    tries: list[str] = []

    def refused(text: str, segments: list, rate: int) -> list[WordSpan]:  # type: ignore[type-arg]
        tries.append(text)
        raise ModelError("English alignment needs PocketSphinx, which is not installed.")

    monkeypatch.setattr(word_times, "result_spans", refused)
    clips = [np.random.default_rng(i).uniform(-0.3, 0.3, SAMPLE_RATE * 4) for i in (1, 2)]
    parts = Parts(qtbot, tmp_path, [c.astype(np.float32) for c in clips])
    said: list[str] = []
    parts.result.message.connect(said.append)
    parts.result.words_box.setChecked(True)
    qtbot.waitUntil(lambda: bool(said), timeout=WAIT_MS)
    assert said == [
        "The words could not be timed: English alignment needs PocketSphinx, which is not "
        "installed."
    ]
    parts.at(qtbot, 0.35, None)
    parts.result.words_box.setChecked(False)
    parts.result.words_box.setChecked(True)
    assert tries == [TEXT]


def test_nothing_is_marked_while_the_player_plays_something_else(qtbot, timed: Parts) -> None:  # type: ignore[no-untyped-def]
    spans = spans_of(TEXT)
    timed.at(qtbot, spans[1].start + 0.1, (spans[1].first, spans[1].last, False))
    timed.result.forget_playback()  # a project's take (or an audition) plays now
    timed.at(qtbot, spans[4].start + 0.1, None)
    timed.result.words_box.setChecked(False)
    timed.result.words_box.setChecked(True)
    assert timed.marked() is None
