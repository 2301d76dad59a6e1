"""Stopping a local run: its supervisor first (it stops the processes it started and records
the outcome), then whatever a supervisor that died, or did not answer, left running. Every
function here runs with the name's submission lock held, so no submission starts meanwhile."""

from __future__ import annotations

import contextlib
import os
import signal
import time

from gkeml_sdk.backends.local.plan.launch_plan import DEFAULT_GRACE_SECONDS
from gkeml_sdk.backends.local.runs.run_reads import read_run
from gkeml_sdk.backends.local.store.run_state import LocalRunState
from gkeml_sdk.backends.local.store.run_store import RunDir
from gkeml_sdk.backends.local.system.procs import ProcessId, alive, stop_groups, wait_exit
from gkeml_sdk.errors import GkemlError
from gkeml_sdk.training.model import TrainingJob

# How long a cancel waits for the supervisor to stop the processes before doing it itself.
CANCEL_MARGIN_SECONDS = 10.0
_CHECK_SECONDS = 1.0  # how often a wait for a supervisor's end looks again


def stop_run(run: RunDir, submitted: float | None) -> bool:
    """Stop the submission made at `submitted` (None: whichever) and wait until its processes
    are gone; the run ends CANCELLED. True when this call stopped it; False when it had
    already finished (processes a lost supervisor left behind are stopped too).
    `NotFoundError` when the name holds another submission now."""
    record = read_run(run, submitted, locked=True)
    supervisor = run.read_supervisor()
    if record.status.terminal:
        if supervisor is not None and alive(supervisor):
            # It recorded the outcome and is tidying up (its reserve) before it exits:
            # what follows (a delete, a replacement) starts once it is gone.
            _wait_gone(supervisor, CANCEL_MARGIN_SECONDS)
            stop_groups([supervisor], grace=0)
        stop_groups(_unfinished(record), grace=0)
        return False
    run.request_cancel()
    if supervisor is not None:
        stop_supervisor(supervisor, _grace(run) + CANCEL_MARGIN_SECONDS)
    # What a supervisor that died, or did not answer, left running.
    stop_groups(_unfinished(run.read()), grace=0)
    return True


def stop_unreadable(run: RunDir) -> None:
    """Stop the supervisor of a run whose state cannot be read, if its own file names a live
    one: it stops the processes it started (their records are in the unreadable state)."""
    try:
        supervisor = run.read_supervisor()
    except GkemlError:
        return  # nothing proves which process is its supervisor: none is signalled
    if supervisor is not None:
        run.request_cancel()
        stop_supervisor(supervisor, DEFAULT_GRACE_SECONDS + CANCEL_MARGIN_SECONDS)


def stop_supervisor(supervisor: ProcessId, timeout: float) -> None:
    """Ask a run's supervisor to stop (SIGTERM: it stops its processes and records the
    outcome) and wait up to `timeout` seconds; one that does not answer is killed."""
    if not alive(supervisor):
        return
    with contextlib.suppress(ProcessLookupError):
        os.kill(supervisor.pid, signal.SIGTERM)
    _wait_gone(supervisor, timeout)
    if alive(supervisor):
        stop_groups([supervisor], grace=0)


def _grace(run: RunDir) -> float:
    """The grace the supervisor stops the processes with: LocalOptions', else the job's."""
    try:
        return run.read_launch().grace_seconds
    except GkemlError:  # no plan of this layout: an older gkeml's run, or a damaged one
        pass
    try:
        job = TrainingJob.from_yaml(run.read_job())
        return job.termination_grace_seconds or DEFAULT_GRACE_SECONDS
    except GkemlError:
        return DEFAULT_GRACE_SECONDS


def _wait_gone(proc: ProcessId, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while alive(proc) and time.monotonic() < deadline:
        wait_exit(proc, min(_CHECK_SECONDS, max(0.0, deadline - time.monotonic())))


def _unfinished(record: LocalRunState) -> list[ProcessId]:
    """The recorded processes without an exit code, as far as gkeml can prove they are its own:
    where /proc gives start times gkeml always recorded one, so an entry without it (start 0)
    was not written by gkeml and is never signalled."""
    proven = not os.path.isdir("/proc")
    return [p.id for p in record.processes if p.exit_code is None and (p.start > 0 or proven)]
