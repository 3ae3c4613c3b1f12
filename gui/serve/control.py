"""Run > Serve on localhost: the loaded model behind the local speech API (core/serve/app.py), from
the window. A part of MainWindow kept in its own module.

The worker starts the API on its own thread (Worker.serve) around the very model it holds, so
memory holds one copy. From then until serving stops, core's Batcher owns that model: the
window's own jobs that would run it are refused with one sentence (here before they are
queued, in the worker for any that slip through), and loading another model or precision
stops the API first. One owner at a time, decided on the worker's thread: a window job and a
server batch never run on the model together. The request count is polled (2 Hz).

Run > Allow other machines (off at each start: exposing the API is a choice made each time)
makes the next session listen on every interface and ask for a key made for that session,
shown in the panel with a Copy button; the key is never saved.
"""

from typing import TYPE_CHECKING

from PySide6.QtCore import QTimer
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QInputDialog, QMenu

from chattts_studio.gui.i18n import translate
from chattts_studio.gui.serve.panel import ServePanel
from chattts_studio.gui.serve.serving import ModelServing
from chattts_studio.gui.settings import Key
from chattts_studio.gui.window.base import WindowBase
from chattts_studio.gui.worker.jobs import Job

if TYPE_CHECKING:
    from chattts_studio.gui.serve.serving import ServeSession

POLL_MS = 500


class ServeControl(WindowBase):
    """Mixed into MainWindow; uses its worker host, job state and messages."""

    def _build_serving(self) -> ServePanel:
        # The saved port, taken when free, else the system picks one (the URL shows which).
        self.serve_port = min(65535, max(1, self.settings.number(Key.SERVE_PORT)))
        self.serving: ServeSession | None = None
        self.serve_panel = ServePanel()
        self.serve_timer = QTimer(self)
        self.serve_timer.setInterval(POLL_MS)
        return self.serve_panel

    def _serve_menu(self, run_menu: QMenu) -> None:
        run_menu.addSeparator()
        self.serve_action = QAction(translate("Serving", "Serve on &localhost"), self)
        self.serve_action.setCheckable(True)
        self.serve_action.triggered.connect(self.toggle_serving)
        run_menu.addAction(self.serve_action)
        self.addAction(self.serve_action)
        self.serve_others_action = QAction(translate("Serving", "Allow &other machines"), self)
        self.serve_others_action.setCheckable(True)
        self.serve_others_action.setToolTip(
            translate(
                "Serving",
                "Serve on every network interface, with a new key each time serving starts "
                "(shown under the run row); off: this machine only, no key",
            )
        )
        self.serve_others_action.toggled.connect(self._others_toggled)
        run_menu.addAction(self.serve_others_action)
        self.serve_port_action = QAction(translate("Serving", "Serving p&ort…"), self)
        self.serve_port_action.triggered.connect(self.choose_serve_port)
        run_menu.addAction(self.serve_port_action)

    def choose_serve_port(self) -> None:
        port, chosen = QInputDialog.getInt(
            self,
            translate("Serving", "Serving port"),
            translate("Serving", "Port for Serve on localhost (another free one if it is taken):"),
            self.serve_port,
            1,
            65535,
        )
        if not chosen:
            return
        self.serve_port = port
        self.settings.set(Key.SERVE_PORT, port)
        self.settings.sync()
        said = translate("Serving", "Serve on localhost will use port {port}.").format(port=port)
        if self.serving is not None:
            said += " " + translate("Serving", "It takes effect the next time serving starts.")
        self.show_message(said)

    def _others_toggled(self, _on: bool) -> None:
        if self.serving is not None:
            self.show_message(translate("Serving", "It takes effect the next time serving starts."))

    def _connect_serving(self) -> None:
        worker = self.host.worker
        worker.serving.connect(self._serving_started)
        worker.serving_ended.connect(self._serving_ended)
        self.serve_timer.timeout.connect(self._poll_serving)
        self.serve_panel.stop_requested.connect(lambda: self.toggle_serving(False))

    def toggle_serving(self, on: bool) -> None:
        if on:
            self.start_serving()
        else:
            self.stop_serving()

    def serving_refusal(self) -> str | None:
        """The sentence for a window job asked for while the API owns the model."""
        return str(ModelServing()) if self.serving is not None else None

    def start_serving(self) -> Job | None:
        if self.serving is not None:
            return None
        said = None
        if self.loaded is None:
            said = self.tr("Load a model before serving it.")
        elif self.current_job is not None:
            said = self.tr("Wait for the running job to finish (or cancel it) first.")
        if said is not None:
            self.serve_action.setChecked(False)
            self.show_message(said)
            return None
        self.serve_action.setEnabled(False)
        self.current_job = self.host.serve(self.serve_port, self.serve_others_action.isChecked())
        self._set_busy(True)
        self.show_message(self.tr("Starting the speech API…"))
        return self.current_job

    def stop_serving(self) -> None:
        if self.serving is None:
            return
        self.serve_action.setEnabled(False)
        self.serve_panel.show_stopping()
        self.host.end_serving()  # serving_ended follows, once its threads are gone

    def _serving_started(self, job: Job, session: "ServeSession") -> None:
        self._job_done(job)
        self.serving = session
        self.serve_action.setEnabled(True)
        self.serve_action.setChecked(True)
        self.serve_panel.shown(True)
        self.serve_panel.show_key(session.api_key)
        self._poll_serving()
        self.serve_timer.start()
        if session.lan_url is not None:
            said = translate(
                "Serving",
                "Serving the loaded model to other machines on {url} (this machine: {local}), "
                "with the key shown below; stop serving to synthesize here.",
            ).format(url=session.lan_url, local=session.url)
        else:
            said = self.tr(
                "Serving the loaded model on {url}; stop serving to synthesize here."
            ).format(url=session.url)
        self.show_message(said)
        self._run_waiting()

    def _serving_not_started(self, _job: Job) -> None:
        """Failed or cancelled: a session the worker made all the same is stopped."""
        self.host.end_serving()
        self.serve_action.setEnabled(True)
        self.serve_action.setChecked(False)

    def _serving_ended(self) -> None:
        was_serving = self.serving is not None
        self.serving = None
        self.serve_timer.stop()
        self.serve_panel.shown(False)
        self.serve_action.setEnabled(True)
        self.serve_action.setChecked(False)
        if was_serving:
            self.show_message(self.tr("The speech API has stopped."))
            self.render_next()  # jobs queued while it served

    def _poll_serving(self) -> None:
        session = self.serving
        if session is not None:
            url = session.lan_url or session.url  # what another machine needs, when allowed
            self.serve_panel.show_counts(url, session.requests, session.running)
