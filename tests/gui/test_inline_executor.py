"""The inline executor and the stand-in engine that the window's logic tests use: an inline
WorkerHost runs each op on the UI thread, whole, at the event loop's next turn, and the job
slot hands its events and its outcome (done, cancelled, failed) to the op's handlers exactly as
it does with the worker thread; a window around the stand-in engine loads, synthesizes, is
cancelled, fails and auditions through the real op bodies, with the stand-in's audio to the
sample."""

import threading

import numpy as np
import pytest
from conftest import GUI_WAIT_MS
from PySide6.QtCore import QCoreApplication, QEvent, QObject, QThread
from standin_engine import FAILURE, StandinEngine, standin_audio

from chattts_studio.core import SAMPLES_PER_STEP
from chattts_studio.core.audio.stream_writer import pause_samples
from chattts_studio.core.engine.cancel import CancelToken
from chattts_studio.core.engine.request import JobPlan, SynthesisRequest
from chattts_studio.core.errors import Cancelled, StudioError
from chattts_studio.core.services.report import Partial, Progress
from chattts_studio.core.voices.voice import Voice
from chattts_studio.gui.control.job_slot import JobSlot
from chattts_studio.gui.control.messages import Messages
from chattts_studio.gui.panels.live import LivePanel
from chattts_studio.gui.worker.host import WorkerHost
from chattts_studio.gui.worker.jobs import CancelledOutcome, Failure, JobKind, Started
from chattts_studio.gui.worker.ops import ModelUse, Op

# Three sentences, each too long to share a segment of 20 (4.8 s of speech) with another.
TEXT = (
    "The first sentence is said here, slowly and clearly. The second sentence follows it, "
    "just as slowly. The third sentence ends the text, calm and clear."
)


class Rig:
    """A job slot over a host, inline or on its thread, as the window wires them."""

    def __init__(self, qtbot, inline: bool) -> None:  # type: ignore[no-untyped-def]
        self.qtbot = qtbot
        self.owner = QObject()
        self.host = WorkerHost(self.owner, inline=inline, engine_factory=StandinEngine)
        self.messages = Messages()
        self.live = LivePanel(self.host.live)
        qtbot.addWidget(self.live)
        self.slot = JobSlot(self.owner, self.host, self.messages, self.live)
        self.seen: list[object] = []  # what each handler got, in order
        self.threads: list[int] = []  # where each body ran
        worker = self.host.worker  # connected as the window connects them
        worker.probed.connect(lambda _found: self.seen.append("probed"))
        worker.probe_failed.connect(lambda error: self.seen.append(("probe failed", error)))
        worker.serving_ended.connect(lambda: self.seen.append("serving ended"))

    def op(self, body, **handlers) -> Op:  # type: ignore[no-untyped-def]
        def run(engine, cancel, report):  # type: ignore[no-untyped-def]
            self.threads.append(threading.get_ident())
            return body(engine, cancel, report)

        seen = self.seen
        return Op(
            JobKind.SPEAKER,
            run,
            done=lambda job, value: seen.append(("done", job.number, value)),
            progress=lambda job, event: seen.append(("event", job.number, event)),
            model=ModelUse.NONE,
            **handlers,
        )

    def run(self) -> None:
        """Inline: the queued ops run now, on this thread. Thread: the worker starts and the
        slot waits until its last job ended."""
        if self.host.inline:
            QCoreApplication.sendPostedEvents(self.host.worker, QEvent.Type.MetaCall)
        else:
            self.host.start()
            self.qtbot.waitUntil(lambda: self.slot.current is None, timeout=GUI_WAIT_MS)

    def close(self) -> None:
        assert self.host.stop()
        self.host.release()


@pytest.fixture(params=[True, False], ids=["inline", "thread"])
def rig(request: pytest.FixtureRequest, qtbot):  # type: ignore[no-untyped-def]
    made = Rig(qtbot, request.param)
    yield made
    made.close()


def test_an_inline_op_runs_whole_on_the_ui_thread_once_the_slot_has_recorded_it(qtbot) -> None:  # type: ignore[no-untyped-def]
    made = Rig(qtbot, inline=True)
    try:
        ended: list[int] = []
        made.slot.ended.connect(lambda job: ended.append(job.number))

        def body(engine, _cancel, report):  # type: ignore[no-untyped-def]
            assert made.seen == ["probed", ("event", job.number, Started())]  # known to the slot
            report(Progress("working", 0.5))
            return "value"

        job = made.slot.submit(made.op(body))
        second = made.slot.submit(made.op(lambda *_args: "second"))
        assert made.threads == [] and made.slot.current == second  # queued, as on the thread
        made.run()
        assert made.seen == [
            "probed",  # first, as on the thread
            ("event", job.number, Started()),
            ("event", job.number, Progress("working", 0.5)),
            ("done", job.number, "value"),
            ("event", second.number, Started()),
            ("done", second.number, "second"),
        ]
        assert ended == [job.number, second.number] and made.slot.current is None
        assert made.threads == [threading.get_ident()] * 2  # the UI thread ran both bodies
        assert not made.host.worker_thread.isRunning()
        assert made.host.worker.thread() is QThread.currentThread()
        assert isinstance(made.host.worker.engine, StandinEngine)
        made.host.start()  # nothing to start
        assert not made.host.worker_thread.isRunning()
    finally:
        made.close()


def test_a_cancel_before_and_during_the_job_reaches_its_handler(rig) -> None:  # type: ignore[no-untyped-def]
    outcomes: list[CancelledOutcome] = []

    def stops(_engine, cancel, report):  # type: ignore[no-untyped-def]
        report(Partial("made so far"))
        cancel.cancel()  # as Esc would, while it runs
        cancel.check()
        return "never"

    waiting = rig.slot.submit(rig.op(lambda *_args: "never", cancelled=outcomes.append))
    rig.slot.cancel()  # while it waits in the queue
    running = rig.slot.submit(rig.op(stops, cancelled=outcomes.append))
    rig.run()
    assert outcomes == [CancelledOutcome(waiting, None), CancelledOutcome(running, "made so far")]
    assert rig.seen == [
        "probed",
        ("event", waiting.number, Started()),
        ("event", running.number, Started()),
    ]
    assert len(rig.threads) == 1  # the job cancelled in the queue never ran its body
    assert rig.slot.current is None and rig.slot.cancelling is None

    # Without a handler of its own, the slot says it.
    rig.slot.submit(rig.op(lambda _e, cancel, _r: (cancel.cancel(), cancel.check())))
    rig.run()
    assert rig.messages.notice.text() == "Cancelled."


def test_a_failure_reaches_its_handler_with_the_error_itself(rig) -> None:  # type: ignore[no-untyped-def]
    error = StudioError("The test's job cannot go on.")
    failures: list[tuple[Failure, str]] = []

    def fails(_engine, _cancel, report):  # type: ignore[no-untyped-def]
        report(Partial("kept"))
        raise error

    job = rig.slot.submit(rig.op(fails, failed=lambda f, said: failures.append((f, said))))
    rig.run()
    [(failure, said)] = failures
    assert failure.job == job and failure.error is error and failure.partial == "kept"
    assert error.__traceback__ is None  # no frames reach the window
    assert said == str(error) and rig.messages.notice.text() == str(error)
    assert rig.slot.current is None

    bug = rig.slot.submit(rig.op(lambda *_args: 1 / 0, failed=lambda f, s: failures.append((f, s))))
    rig.run()
    assert failures[-1][0].job == bug and isinstance(failures[-1][0].error, ZeroDivisionError)


# -- a window around the stand-in engine ---------------------------------------------------------


def expected_audio(plan: JobPlan, count: int | None = None) -> np.ndarray:
    """The stand-in's audio of the plan's first `count` segments, joined with its pauses."""
    segments = plan.segments[:count]
    clips = [standin_audio(s, plan.voice_at(s.index)) for s in segments]
    pauses = [np.zeros(pause_samples(plan.pause_before(s.index)), np.float32) for s in segments]
    return np.concatenate([part for pair in zip(pauses, clips, strict=True) for part in pair])


def prepare(window) -> list[JobPlan]:  # type: ignore[no-untyped-def]
    """Three sentences to synthesize; the list gets each plan a synthesis reports."""
    window.editor.set_text(TEXT)
    window.controls.segment_slider.setValue(20)
    window.controls.refine_box.setChecked(False)
    window.result.stream_box.setChecked(False)
    plans: list[JobPlan] = []
    window.host.worker.progress.connect(
        lambda _job, event: plans.append(event) if isinstance(event, JobPlan) else None
    )
    return plans


def synthesized(qtbot, window, plans: list[JobPlan]) -> JobPlan:  # type: ignore[no-untyped-def]
    assert window.synthesis.synthesize() is not None
    qtbot.waitUntil(lambda: window.jobs.current is None, timeout=GUI_WAIT_MS)
    [plan] = plans
    assert len(plan.segments) == 3, plan.segments
    return plan


@pytest.mark.window(engine="standin")
def test_a_window_on_the_standin_loads_and_synthesizes_the_standin_s_audio(
    qtbot, make_window
) -> None:  # type: ignore[no-untyped-def]
    window = make_window()
    assert window.host.inline and not window.host.worker_thread.isRunning()
    engine = window.host.worker.engine
    assert isinstance(engine, StandinEngine) and engine.live is window.host.live
    assert window.model.loaded is engine.loaded and window.model.loaded.info.name == "demo"
    assert window.model.label.text().startswith("Model: demo · "), window.model.label.text()
    plan = synthesized(qtbot, window, prepare(window))
    assert window.messages.notice.text().startswith("Done"), window.messages.notice.text()
    audio = window.result.audio
    steps = sum(s.expected_steps for s in plan.segments)
    assert len(audio) == steps * SAMPLES_PER_STEP + 2 * pause_samples(plan.request.pause_seconds)
    np.testing.assert_array_equal(audio, expected_audio(plan))
    [entry] = window.result.history
    assert [r.text for r in entry.outcome.results] == [s.shown for s in plan.segments]
    assert window.live.stage.text() == "done"


@pytest.mark.window(engine="standin")
def test_a_window_cancelled_after_its_first_segment_keeps_exactly_that_segment(
    qtbot, make_window, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    window = make_window()
    plans = prepare(window)
    add_segment = window.result.add_segment

    def first_then_esc(result) -> None:  # type: ignore[no-untyped-def]
        add_segment(result)
        window.menu_actions.cancel.trigger()  # Esc, while the job runs (inline: right here)

    monkeypatch.setattr(window.result, "add_segment", first_then_esc)
    plan = synthesized(qtbot, window, plans)
    said = window.messages.notice.text()
    assert said == "Cancelled; kept 1 finished segment: save with Save…", said
    np.testing.assert_array_equal(window.result.audio, expected_audio(plan, 1))
    assert window.live.stage.text() == "cancelled"


@pytest.mark.window(engine="standin")
def test_a_window_whose_synthesis_fails_keeps_what_was_finished(qtbot, make_window) -> None:  # type: ignore[no-untyped-def]
    window = make_window()
    plans = prepare(window)
    window.host.worker.engine.fail_at = 2
    plan = synthesized(qtbot, window, plans)
    said = window.messages.notice.text()
    assert said == f"{FAILURE} 2 finished segments kept: save them with Save…", said
    np.testing.assert_array_equal(window.result.audio, expected_audio(plan, 2))


def test_the_standin_cancels_between_segments_like_the_engine() -> None:
    engine = StandinEngine()
    engine.load("demo", "cpu")
    plan = engine.plan(SynthesisRequest(TEXT, segment_size=20))
    token = CancelToken()
    made = []
    with pytest.raises(Cancelled):
        for result in engine.synthesize(plan, cancel=token):
            made.append(result)
            token.cancel()
    assert [r.index for r in made] == [0]
    assert engine.last_summary is not None and engine.last_summary.segments == 1


@pytest.mark.window(engine="standin")
def test_a_window_on_the_standin_auditions_each_candidate_in_its_own_voice(
    qtbot, make_window
) -> None:  # type: ignore[no-untyped-def]
    window = make_window()
    engine = window.host.worker.engine
    dialog = window.auditions.dialog
    window.auditions.show_audition()
    dialog.generate_requested.emit("Hello there.", 3)  # as its Generate button does
    qtbot.waitUntil(lambda: window.jobs.current is None, timeout=GUI_WAIT_MS)
    [segment] = engine.plan(SynthesisRequest("Hello there.")).segments
    assert len(dialog.candidates) == 3 and len({c.seed for c in dialog.candidates}) == 3
    for candidate in dialog.candidates:
        assert candidate.embedding == engine.sample_speaker(candidate.seed)
        voice = Voice(embedding=candidate.embedding)
        np.testing.assert_array_equal(candidate.audio, standin_audio(segment, voice))
    dialog.close()
