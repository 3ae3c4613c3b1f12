"""For the window tests: which of the worker's events and outcomes a test waits for (its
`progress` and `ended` signals carry every job's)."""

from chattts_studio.gui.worker.jobs import CancelledOutcome, Done, Failure, JobKind


def done(kind: JobKind):  # type: ignore[no-untyped-def]
    """check_params_cb for worker.ended: a job of `kind` ended well."""
    return lambda outcome: isinstance(outcome, Done) and outcome.job.kind is kind


def failed(outcome: object) -> bool:
    return isinstance(outcome, Failure)


def cancelled(outcome: object) -> bool:
    return isinstance(outcome, CancelledOutcome)


def event(kind: type):  # type: ignore[no-untyped-def]
    """check_params_cb for worker.progress: an event of this type."""
    return lambda _job, reported: isinstance(reported, kind)
