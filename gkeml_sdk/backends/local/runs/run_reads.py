"""A local run's state as readers see it: the `state.json` of the submission a handle names,
with the outcome of a supervisor that died without recording one. Reads only: it neither
writes nor signals, whatever the files say."""

from __future__ import annotations

from pathlib import Path

from gkeml_sdk.backends.local.store.run_state import LocalRunState
from gkeml_sdk.backends.local.store.run_store import RunDir
from gkeml_sdk.backends.local.system.procs import alive
from gkeml_sdk.backends.local.system.submit_lock import submission_in_progress
from gkeml_sdk.errors import NotFoundError
from gkeml_sdk.runs.states import FailureCause, RunState, RunStatus


def read_run(run: RunDir, submitted: float | None, *, locked: bool = False) -> LocalRunState:
    """The state of the submission made at `submitted` (None: whichever the directory holds),
    with the outcome of a lost supervisor; `NotFoundError` once the name holds a later
    submission, `UnreadableRunError` when a file it needs is damaged. `locked`: the caller
    holds the name's submission lock, so no submission is going on.

    Example:
        >>> read_run(RunDir("/nonexistent/default/ft"), None)
        Traceback (most recent call last):
        ...
        gkeml_sdk.errors.NotFoundError: read local run 'ft': ...
    """
    record = read_submission(run, submitted)
    if record.status.terminal:
        return record
    supervisor = run.read_supervisor()
    if supervisor is None:
        if not locked and submission_in_progress(Path(run.path)):
            return record
        record.move(
            RunStatus(
                RunState.FAILED,
                "SupervisorNotStarted",
                "the submitting process ended before the run started",
                FailureCause.INFRASTRUCTURE,
            )
        )
        return record
    if alive(supervisor):
        return record
    # It may have written its outcome just before exiting: read again before judging.
    record = read_submission(run, submitted)
    if not record.status.terminal:
        record.move(outcome_after_crash(run, record, supervisor.pid))
    return record


def read_submission(run: RunDir, submitted: float | None) -> LocalRunState:
    """`state.json` as written, when it holds the submission made at `submitted`."""
    record = run.read()
    if submitted is not None and record.created != submitted:
        raise NotFoundError(
            f"read local run {run.name!r}",
            status=404,
            reason="NotFound",
            message="the submission this handle names was replaced by a newer one of the same name",
            hint=f"Client(backend='local').get_run({run.name!r}) follows the new one",
        )
    return record


def outcome_after_crash(run: RunDir, record: LocalRunState, pid: int) -> RunStatus:
    """What the exit codes the supervisor (`pid`) recorded before it died say about the run."""
    if run.cancel_requested:
        return RunStatus(RunState.CANCELLED, "Cancelled", "cancelled by the user")
    codes = {p.slot: p.exit_code for p in record.processes}
    if codes and all(code == 0 for code in codes.values()):
        return RunStatus(
            RunState.SUCCEEDED,
            "Completed",
            f"every process exited 0 (recorded before the local supervisor, pid {pid}, ended)",
        )
    seen = ", ".join(
        f"{slot}: {'no exit code recorded' if code is None else f'exit code {code}'}"
        for slot, code in codes.items()
    )
    return RunStatus(
        RunState.FAILED,
        "SupervisorLost",
        f"the local supervisor (pid {pid}) ended without recording an outcome; "
        f"processes {seen or 'none started'} (cancel or delete the run to stop any left)",
        FailureCause.INFRASTRUCTURE,
    )
