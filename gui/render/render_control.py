"""The window's side of the render queue: the queue panel in a dock and a Render menu, each job's
spec from the window's settings, and the next job started in the worker whenever it is free.
"""

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from PySide6.QtCore import QObject, Qt
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import QDockWidget, QMenu

from chattts_studio.core.engine.request import AUTO_BATCH_MAX, SynthesisRequest
from chattts_studio.core.render.book import RenderOptions
from chattts_studio.core.services import render_job
from chattts_studio.core.services.render_job import RenderDone, RenderSpec
from chattts_studio.core.services.report import Progress
from chattts_studio.gui.common.actions import add_action
from chattts_studio.gui.control.context import WindowContext
from chattts_studio.gui.control.model_control import ModelControl
from chattts_studio.gui.i18n import translate
from chattts_studio.gui.render.queue import RenderQueue
from chattts_studio.gui.serve.serve_control import ServeControl
from chattts_studio.gui.worker.jobs import CancelledOutcome, Failure, Job, JobKind
from chattts_studio.gui.worker.ops import Op

# The window's settings as a request (SynthesisControl.settings_request).
SettingsRequest = Callable[[str], SynthesisRequest]


class RenderControl(QObject):
    def __init__(
        self,
        context: WindowContext,
        *,
        model: ModelControl,
        serve: ServeControl,
        settings_request: SettingsRequest,
    ) -> None:
        window, jobs, messages = context.window, context.jobs, context.messages
        super().__init__(window)
        self.host, self.jobs, self.messages = context.host, jobs, messages
        self.model, self.serve = model, serve
        self.speakers, self.settings_request = context.panels.speakers, settings_request
        queue = self.queue = RenderQueue()
        queue.spec_for = self._spec
        queue.text_source = context.panels.editor.text
        dock = self.dock = QDockWidget(translate("RenderJobs", "Render queue"), window)
        dock.setObjectName("renderQueueDock")  # its place and visibility are saved
        dock.setWidget(queue)
        window.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, dock)
        dock.hide()  # until a job is added or the menu shows it
        # Before the last menu, as the Project menu (Help on Linux; where there is no Help
        # menu, Settings stays last).
        bar = window.menuBar()
        menu = QMenu(translate("RenderJobs", "Re&nder"), window)
        if bar.actions():
            bar.insertMenu(bar.actions()[-1], menu)
        else:
            bar.addMenu(menu)
        self.text_action = add_action(
            window,
            menu,
            translate("RenderJobs", "Add the text to the render queue"),
            None,
            queue.add_text,
        )
        add_action(
            window,
            menu,
            translate("RenderJobs", "Add a book to the render queue…"),
            None,
            queue.add_file,
        )
        add_action(
            window,
            menu,
            translate("RenderJobs", "Render &queue"),
            QKeySequence("Ctrl+Shift+R"),
            self.show_queue,
        )
        queue.wanted.connect(self._wanted)
        queue.cancel_requested.connect(self._cancel)
        queue.message.connect(messages.show)
        # After every job (a synthesis too), and when serving stops: the queue goes on.
        jobs.ended.connect(self._worker_finished)
        self.serve.ended.connect(self.next)

    def show_queue(self) -> None:
        self.dock.show()
        self.dock.raise_()

    def _spec(self, source: Path | None, text: str, title: str, folder: Path) -> RenderSpec:
        request = self.settings_request("")
        speaker = self.speakers.current()
        options = RenderOptions(
            **self.queue.options(),
            group_size=request.batch_size or AUTO_BATCH_MAX,
        )
        seed = speaker.seed if speaker.embedding is None else None
        return RenderSpec(
            replace(request, text=""),
            folder,
            options,
            source,
            text,
            title,
            seed,
            voice_check=self.queue.voice_check(),
        )

    def _wanted(self) -> None:
        self.show_queue()
        if self.model.loaded is None:
            self.messages.show(translate("RenderJobs", "The render starts once a model is loaded."))
        elif self.serve.session is not None:  # the speech API owns the model
            self.messages.show(translate("RenderJobs", "The render starts when serving stops."))
        elif self.jobs.current is not None:
            self.messages.show(
                translate("RenderJobs", "The render starts when the running job ends.")
            )
        self.next()

    def next(self) -> Job | None:
        """The next waiting job, when the worker is free, a model is loaded and the speech API
        does not hold it (the queue waits for serving to stop rather than fail its jobs)."""
        busy = self.jobs.current is not None or self.jobs.waiting is not None
        if busy or self.model.loaded is None or self.serve.session is not None:
            return None
        item = self.queue.next_waiting()
        if item is None:
            return None
        spec = item.spec
        job = self.jobs.submit(
            Op(
                JobKind.RENDER,
                lambda engine, cancel, report: render_job.run_render(engine, spec, cancel, report),
                done=self._rendered,
                progress=self._progress,
                failed=self._failed,
                cancelled=self._cancelled,
            )
        )
        self.queue.started(item, job)
        self.messages.show(translate("RenderJobs", "Rendering {0}…").format(item.spec.title))
        return job

    def _worker_finished(self, _job: Job) -> None:
        self.next()

    def _cancel(self, job: Job) -> None:
        """This job alone: the others wait in the queue, not in the worker."""
        self.jobs.cancel_job(job)

    def _progress(self, job: Job, event: object) -> None:
        if isinstance(event, Progress):
            self.queue.show_progress(job, event)

    def _rendered(self, job: Job, done: RenderDone) -> None:
        self.queue.finished(job, done)

    def _failed(self, failure: Failure, sentence: str) -> None:
        self.queue.stopped(failure.job, False, sentence)

    def _cancelled(self, outcome: CancelledOutcome) -> None:
        self.queue.stopped(outcome.job, cancelled=True)
        self.messages.show(
            translate("RenderJobs", "Render cancelled; its finished segments are kept.")
        )
