"""The program a local run's launcher runs (`detach` starts it): fork the supervisor, record its
identity and exit, while the supervisor detaches into a session of its own and runs the job.
It imports only the standard library's light modules and the supervisor's, as every
millisecond of its start is added to the run's."""

from __future__ import annotations

import contextlib
import os
import sys

from gkeml_sdk.backends.local.store.run_store import SUPERVISOR_LOG, RunDir
from gkeml_sdk.backends.local.supervision.supervisor import Supervisor
from gkeml_sdk.backends.local.system.confined import open_private
from gkeml_sdk.backends.local.system.procs import ProcessId
from gkeml_sdk.runs.states import FailureCause, RunState, RunStatus

# What the submitter writes to the launcher's stdin once the run's files are written.
GO = b"go"


def main(argv: list[str]) -> None:
    """Fork the supervisor for the run at `argv[0]` once the submitter says `GO`, record its
    identity, and exit 0."""
    # Started before the run's files were written, so that these imports overlap the writing:
    # anything but the word to go on (an error in the submitter, its death) means no run.
    if os.read(0, len(GO)) != GO:
        os._exit(1)
    run = RunDir(argv[0])
    pid = os.fork()
    if pid:
        run.write_supervisor(ProcessId.of(pid))
        # Without the interpreter's shutdown: it would take the CPU the run is starting on.
        os._exit(0)
    os.setsid()
    # Whatever the supervisor writes is private; its children get the caller's umask back.
    caller_umask = os.umask(0o077)
    log_fd = open_private(run.file(SUPERVISOR_LOG))
    with open(os.devnull, "rb") as null, os.fdopen(log_fd, "ab") as log:
        os.dup2(null.fileno(), 0)
        os.dup2(log.fileno(), 1)
        os.dup2(log.fileno(), 2)
    supervisor: Supervisor | None = None
    try:
        supervisor = Supervisor(run, caller_umask)
        supervisor.supervise()
    except BaseException as exc:  # the run must end in a recorded state, whatever happened
        import traceback  # here: a supervisor that succeeds never needs it

        traceback.print_exc()
        with contextlib.suppress(Exception):
            if supervisor is not None:
                supervisor._stop_all()
            record = run.read()
            record.move(
                RunStatus(
                    RunState.FAILED, "SupervisorError", repr(exc), FailureCause.INFRASTRUCTURE
                )
            )
            run.write(record)
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
    os._exit(0)
