"""The worker's host on the UI thread: owns the worker's QThread, numbers the jobs and
forwards each request to the worker through a queued signal."""

import sys

from PySide6.QtCore import QObject, QThread, Signal

from chattts_studio.core.engine.metrics import LiveMetrics
from chattts_studio.gui.common import garbage
from chattts_studio.gui.worker.jobs import (
    AuditionJob,
    Job,
    JobKind,
    LoadJob,
    ProjectJob,
    RenderSpec,
    SynthesisJob,
    VoiceJob,
)
from chattts_studio.gui.worker.worker import Worker

# While the worker thread runs, a thread that wants the GIL gets it within 1 ms instead of
# Python's 5 ms: the UI thread takes it back each time it returns from Qt, and with a busy
# worker or pool thread each of those waits cost up to 5 ms (a 100,000-character paste stalled
# the UI thread 31-59 ms, 11-29 ms with 1 ms, on this 2-core machine).
GIL_SWITCH_S = 0.001


class WorkerHost(QObject):
    """Lives on the UI thread: owns the QThread, numbers the jobs and forwards requests."""

    _probe = Signal()
    _load = Signal(object, object)
    _synthesize = Signal(object, object)
    _audition = Signal(object, object)
    _speaker = Signal(object, int)
    _download = Signal(object, str)
    _build = Signal(object, str)
    _render = Signal(object, object)
    _voice = Signal(object, object)
    _serve = Signal(object, int, bool)
    _project = Signal(object, object)
    _end_serving = Signal()

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.worker_thread = QThread()
        self.worker_thread.setObjectName("chattts-worker")
        self.worker = Worker()
        self.worker.moveToThread(self.worker_thread)
        self._probe.connect(self.worker.probe)
        self._load.connect(self.worker.load)
        self._synthesize.connect(self.worker.synthesize)
        self._audition.connect(self.worker.audition)
        self._speaker.connect(self.worker.speaker_for_seed)
        self._download.connect(self.worker.download)
        self._build.connect(self.worker.build)
        self._render.connect(self.worker.render)
        self._voice.connect(self.worker.voice)
        self._serve.connect(self.worker.serve)
        self._project.connect(self.worker.project)
        self._end_serving.connect(self.worker.end_serving)
        self._count = 0
        self._released = False
        self._holding_garbage = False
        self._switch_interval = sys.getswitchinterval()
        self._open: dict[int, Job] = {}  # queued or running, by number
        self.worker.finished.connect(self._ended)
        # First in the worker's queue: every job after it finds the engine made. The thread
        # itself starts once the window is on screen (start()): importing torch meanwhile
        # would slow the window down (the GIL), and the jobs asked for wait in the queue.
        self._probe.emit()

    def start(self) -> None:
        """Start the worker thread: the probe, then the jobs queued so far, run."""
        if not self._released and not self.worker_thread.isRunning():
            if not self._holding_garbage:  # from now on cycles are collected on this thread
                garbage.hold()
                self._holding_garbage = True
                self._switch_interval = sys.getswitchinterval()
                sys.setswitchinterval(min(GIL_SWITCH_S, self._switch_interval))
            self.worker_thread.start()

    @property
    def live(self) -> LiveMetrics:
        return self.worker.live

    def _next(self, kind: JobKind) -> Job:
        self._count += 1
        job = Job(kind, self._count)
        self._open[job.number] = job
        return job

    def load(self, spec: LoadJob) -> Job:
        job = self._next(JobKind.LOAD)
        self._load.emit(job, spec)
        return job

    def synthesize(self, spec: SynthesisJob) -> Job:
        job = self._next(JobKind.SYNTHESIZE)
        self._synthesize.emit(job, spec)
        return job

    def audition(self, spec: AuditionJob) -> Job:
        job = self._next(JobKind.AUDITION)
        self._audition.emit(job, spec)
        return job

    def speaker_for_seed(self, seed: int) -> Job:
        job = self._next(JobKind.SPEAKER)
        self._speaker.emit(job, seed)
        return job

    def download(self, what: str = "official") -> Job:
        """Download the official ChatTTS weights, or (`what` "asr") the speech recognition
        check's model."""
        job = self._next(JobKind.DOWNLOAD)
        self._download.emit(job, what)
        return job

    def build(self, name: str) -> Job:
        job = self._next(JobKind.BUILD)
        self._build.emit(job, name)
        return job

    def render(self, spec: RenderSpec) -> Job:
        job = self._next(JobKind.RENDER)
        self._render.emit(job, spec)
        return job

    def voice(self, spec: VoiceJob) -> Job:
        job = self._next(JobKind.VOICE)
        self._voice.emit(job, spec)
        return job

    def project(self, spec: ProjectJob) -> Job:
        job = self._next(JobKind.PROJECT)
        self._project.emit(job, spec)
        return job

    def serve(self, port: int, others: bool = False) -> Job:
        """Serve the loaded model on `port`; `others`: to other machines too, with a key."""
        job = self._next(JobKind.SERVE)
        self._serve.emit(job, port, others)
        return job

    def end_serving(self) -> None:
        """Queued behind what the worker has to do; serving_ended says when it is done."""
        self._end_serving.emit()

    def cancel(self) -> None:
        """Cancel every job not ended yet: the one running and those waiting behind it."""
        for job in list(self._open.values()):
            job.cancel.cancel()

    def _ended(self, job: Job) -> None:
        self._open.pop(job.number, None)

    def stop(self, timeout_ms: int = 30_000) -> bool:
        """Cancel what runs, let the thread finish its slot, and wait for it; True when gone."""
        if not self.worker_thread.isRunning():
            return True
        self.cancel()
        self.worker_thread.quit()
        return bool(self.worker_thread.wait(timeout_ms))

    def release(self) -> None:
        """After stop(): drop the model and every connection while Qt and torch are both alive,
        instead of leaving it to the interpreter's exit."""
        if self._released:
            return
        self._released = True
        worker = self.worker
        for signal in (
            worker.started,
            worker.progress,
            worker.probed,
            worker.probe_failed,
            worker.planned,
            worker.segment_ready,
            worker.chunk_ready,
            worker.segment_restarted,
            worker.loaded,
            worker.synthesized,
            worker.auditioned,
            worker.speaker_made,
            worker.downloaded,
            worker.built,
            worker.rendered,
            worker.voice_made,
            worker.failed,
            worker.cancelled,
            worker.finished,
            worker.serving,
            worker.serving_ended,
        ):
            try:
                signal.disconnect()
            except (RuntimeError, TypeError):
                pass  # nothing was connected
        # The worker thread has ended: the API's threads are stopped from here.
        worker.end_serving(quiet=True)
        if worker.engine is not None:
            worker.engine.unload()
        if self._holding_garbage:
            self._holding_garbage = False
            garbage.let_go()
            sys.setswitchinterval(self._switch_interval)
