"""Run > Serve on localhost: the loaded model behind the local speech API (core/serve/app.py), from
the window. The API owns the worker's model until serving stops; window jobs that need it are
refused. See docs/api.md.
"""

from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, QTimer, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QInputDialog, QMenu

from chattts_studio.core.services import serve_session
from chattts_studio.core.services.serve_session import ModelServing
from chattts_studio.gui.control.context import WindowContext
from chattts_studio.gui.control.model_control import ModelControl
from chattts_studio.gui.i18n import core_text, translate
from chattts_studio.gui.serve.panel import ServePanel
from chattts_studio.gui.settings import Key
from chattts_studio.gui.worker.jobs import Job, JobKind
from chattts_studio.gui.worker.ops import ModelUse, Op

if TYPE_CHECKING:
    from chattts_studio.core.services.serve_session import ServeSession

POLL_MS = 500


class ServeControl(QObject):
    ended = Signal()  # serving stopped: the model is the window's again

    def __init__(self, context: WindowContext, model: ModelControl) -> None:
        window = context.window
        super().__init__(window)
        self.window, self.settings, self.host = window, context.settings, context.host
        self.jobs, self.messages, self.model = context.jobs, context.messages, model
        # The saved port, taken when free, else the system picks one (the URL shows which).
        self.port = min(65535, max(1, self.settings.number(Key.SERVE_PORT)))
        self.session: ServeSession | None = None
        self.panel = ServePanel()
        self.timer = QTimer(self)
        self.timer.setInterval(POLL_MS)
        worker = self.host.worker
        worker.serving_ended.connect(self._serving_ended)
        self.timer.timeout.connect(self._poll)
        self.panel.stop_requested.connect(lambda: self.toggle(False))

    def add_menu(self, run_menu: QMenu) -> None:
        run_menu.addSeparator()
        self.action = QAction(translate("Serving", "Serve on &localhost"), self.window)
        self.action.setCheckable(True)
        self.action.triggered.connect(self.toggle)
        run_menu.addAction(self.action)
        self.window.addAction(self.action)
        self.others_action = QAction(translate("Serving", "Allow &other machines"), self.window)
        self.others_action.setCheckable(True)
        self.others_action.setToolTip(
            translate(
                "Serving",
                "Serve on every network interface, with a new key each time serving starts "
                "(shown under the run row); off: this machine only, no key",
            )
        )
        self.others_action.toggled.connect(self._others_toggled)
        run_menu.addAction(self.others_action)
        self.port_action = QAction(translate("Serving", "Serving p&ort…"), self.window)
        self.port_action.triggered.connect(self.choose_port)
        run_menu.addAction(self.port_action)

    def choose_port(self) -> None:
        port, chosen = QInputDialog.getInt(
            self.window,
            translate("Serving", "Serving port"),
            translate("Serving", "Port for Serve on localhost (another free one if it is taken):"),
            self.port,
            1,
            65535,
        )
        if not chosen:
            return
        self.port = port
        self.settings.set(Key.SERVE_PORT, port)
        self.settings.sync()
        said = translate("Serving", "Serve on localhost will use port {port}.").format(port=port)
        if self.session is not None:
            said += " " + translate("Serving", "It takes effect the next time serving starts.")
        self.messages.show(said)

    def _others_toggled(self, _on: bool) -> None:
        if self.session is not None:
            self.messages.show(
                translate("Serving", "It takes effect the next time serving starts.")
            )

    def toggle(self, on: bool) -> None:
        if on:
            self.start()
        else:
            self.stop()

    def refusal(self) -> str | None:
        """The sentence for a window job asked for while the API owns the model."""
        return core_text(ModelServing()) if self.session is not None else None

    def start(self) -> Job | None:
        if self.session is not None:
            return None
        said = None
        if self.model.loaded is None:
            said = translate("ServeControl", "Load a model before serving it.")
        elif self.jobs.current is not None:
            said = translate(
                "ServeControl", "Wait for the running job to finish (or cancel it) first."
            )
        if said is not None:
            self.action.setChecked(False)
            self.messages.show(said)
            return None
        self.action.setEnabled(False)
        port, others = self.port, self.others_action.isChecked()
        job = self.jobs.submit(
            Op(
                JobKind.SERVE,
                lambda engine, _cancel, _report: serve_session.serve(engine, port, others),
                done=self._serving_started,
                failed=self._not_started,
                cancelled=self._not_started,
                model=ModelUse.TAKES,
            )
        )
        self.messages.show(translate("ServeControl", "Starting the speech API…"))
        return job

    def stop(self) -> None:
        if self.session is None:
            return
        self.action.setEnabled(False)
        self.panel.show_stopping()
        self.host.end_serving()  # serving_ended follows, once its threads are gone

    def _serving_started(self, _job: Job, session: "ServeSession") -> None:
        self.session = session
        self.action.setEnabled(True)
        self.action.setChecked(True)
        self.panel.shown(True)
        self.panel.show_key(session.api_key)
        self._poll()
        self.timer.start()
        if session.lan_url is not None:
            said = translate(
                "Serving",
                "Serving the loaded model to other machines on {url} (this machine: {local}), "
                "with the key shown below; stop serving to synthesize here.",
            ).format(url=session.lan_url, local=session.url)
        else:
            said = translate(
                "ServeControl",
                "Serving the loaded model on {url}; stop serving to synthesize here.",
            ).format(url=session.url)
        self.messages.show(said)

    def _not_started(self, _outcome: object, _sentence: str = "") -> None:
        """Failed or cancelled: a session the worker made all the same is stopped."""
        self.host.end_serving()
        self.action.setEnabled(True)
        self.action.setChecked(False)

    def _serving_ended(self) -> None:
        was_serving = self.session is not None
        self.session = None
        self.timer.stop()
        self.panel.shown(False)
        self.action.setEnabled(True)
        self.action.setChecked(False)
        if was_serving:
            self.messages.show(translate("ServeControl", "The speech API has stopped."))
            self.ended.emit()  # the render queue goes on with what it queued meanwhile

    def _poll(self) -> None:
        session = self.session
        if session is not None:
            url = session.lan_url or session.url  # what another machine needs, when allowed
            self.panel.show_counts(url, session.requests, session.running)
