"""An op: one piece of engine work the window asks for, a Qt-free function of (engine, cancel,
report) from core/services; the worker runs it and the job slot hands its events and outcome to
its handlers on the UI thread.
"""

from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING, Any

from chattts_studio.core.engine.cancel import CancelToken
from chattts_studio.core.services.report import Report
from chattts_studio.gui.worker.jobs import CancelledOutcome, Failure, Job, JobKind

if TYPE_CHECKING:  # the worker imports the engine, never the window's import chain
    from chattts_studio.core.engine.engine import Engine

Body = Callable[["Engine", CancelToken, Report], Any]


class ModelUse(Enum):
    NONE = "none"  # never touches the model (a download, a build)
    USES = "uses"  # runs the loaded model: refused while the speech API holds it
    REPLACES = "replaces"  # a load: the speech API stops first
    TAKES = "takes"  # its value holds the model until the worker's end_serving (the API)


@dataclass(frozen=True)
class Op:
    kind: JobKind
    body: Body
    done: Callable[[Job, Any], object] | None = None  # its value, after the slot ends it
    progress: Callable[[Job, object], object] | None = None  # each event the body reports
    failed: Callable[[Failure, str], object] | None = None  # the failure and its sentence
    cancelled: Callable[[CancelledOutcome], object] | None = None  # None: "Cancelled."
    model: ModelUse = ModelUse.USES
    # False: a body that did something a cancel cannot undo (a voice kept) checks for itself;
    # else a job cancelled just as it ended ends as cancelled, as the user asked.
    check_after: bool = True
