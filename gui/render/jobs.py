"""The window's side of the render queue: the queue panel in a dock and a Render menu, each
job's spec from the window's settings, and the next job started in the worker whenever it is
free (with the model it has loaded). A part of MainWindow kept in its own module."""

from dataclasses import replace
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import QDockWidget

from chattts_studio.core.engine.request import AUTO_BATCH_MAX
from chattts_studio.core.render.book import RenderOptions
from chattts_studio.gui.render.queue import RenderQueue
from chattts_studio.gui.window.base import WindowBase
from chattts_studio.gui.worker.jobs import Job, JobKind, RenderDone, RenderSpec


class RenderJobs(WindowBase):
    """Mixed into MainWindow; uses its worker host, editor, controls and job state."""

    def _build_render_queue(self) -> None:
        queue = self.render_queue = RenderQueue()
        queue.spec_for = self._render_spec
        queue.text_source = self.editor.text
        dock = self.queue_dock = QDockWidget(self.tr("Render queue"), self)
        dock.setObjectName("renderQueueDock")  # its place and visibility are saved
        dock.setWidget(queue)
        self.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, dock)
        dock.hide()  # until a job is added or the menu shows it
        menu = self.menuBar().addMenu(self.tr("Re&nder"))
        self.render_text_action = self._action(
            menu, self.tr("Add the text to the render queue"), None, queue.add_text
        )
        self._action(menu, self.tr("Add a book to the render queue…"), None, queue.add_file)
        self._action(
            menu, self.tr("Render &queue"), QKeySequence("Ctrl+Shift+R"), self.show_render_queue
        )

    def _connect_render_queue(self) -> None:
        queue = self.render_queue
        queue.wanted.connect(self._render_wanted)
        queue.cancel_requested.connect(self._cancel_render)
        queue.message.connect(self.show_message)
        worker = self.host.worker
        # Bound methods of this QObject: Qt queues the calls onto the UI thread.
        worker.rendered.connect(self._rendered)
        worker.finished.connect(self._worker_finished)

    def show_render_queue(self) -> None:
        self.queue_dock.show()
        self.queue_dock.raise_()

    def _render_spec(self, source: Path | None, text: str, title: str, folder: Path) -> RenderSpec:
        request = self.settings_request("")
        speaker = self.speakers.current()
        options = RenderOptions(
            **self.render_queue.options(),
            group_size=request.batch_size or AUTO_BATCH_MAX,
        )
        seed = speaker.seed if speaker.embedding is None else None
        return RenderSpec(replace(request, text=""), folder, options, source, text, title, seed)

    def _render_wanted(self) -> None:
        self.show_render_queue()
        if self.loaded is None:
            self.show_message(self.tr("The render starts once a model is loaded."))
        elif self.serving is not None:  # the speech API owns the model (gui/serve/control.py)
            self.show_message(self.tr("The render starts when serving stops."))
        elif self.current_job is not None:
            self.show_message(self.tr("The render starts when the running job ends."))
        self.render_next()

    def render_next(self) -> Job | None:
        """The next waiting job, when the worker is free, a model is loaded and the speech API
        does not hold it (the queue waits for serving to stop rather than fail its jobs)."""
        busy = self.current_job is not None or self.waiting is not None
        if busy or self.loaded is None or self.serving is not None:
            return None
        item = self.render_queue.next_waiting()
        if item is None:
            return None
        job = self.current_job = self.host.render(item.spec)
        self.render_queue.started(item, job)
        self._set_busy(True)
        self.show_message(self.tr("Rendering {0}…").format(item.spec.title))
        return job

    def _cancel_render(self, job: Job) -> None:
        """This job alone: the others wait in the queue, not in the worker."""
        job.cancel.cancel()
        if self.current_job is job:
            self._cancelling = job

    def _worker_finished(self, job: Job) -> None:
        # After every job (a synthesis too): the queue goes on when the worker is free.
        del job
        self.render_next()

    def _rendered(self, job: Job, done: RenderDone) -> None:
        self._job_done(job)
        self.render_queue.finished(job, done)
        self._run_waiting()

    def _render_cancelled(self, job: Job) -> None:
        self.render_queue.stopped(job, cancelled=True)
        self.show_message(self.tr("Render cancelled; its finished segments are kept."))

    @staticmethod
    def is_render(job: Job | None) -> bool:
        return job is not None and job.kind is JobKind.RENDER
