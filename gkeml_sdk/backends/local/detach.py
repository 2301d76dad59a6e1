"""Starts a run's supervisor as a process of its own: `python -m gkeml_sdk.backends.local.detach
RUN_PATH` forks, so the supervisor is no child of the caller and outlives it (a kernel restart
does not stop a run)."""

from __future__ import annotations

import contextlib
import os
import sys
import traceback
from pathlib import Path

from gkeml_sdk.backends.local.confined import open_private
from gkeml_sdk.backends.local.procs import ProcessId
from gkeml_sdk.backends.local.run_store import SUPERVISOR_LOG, RunDir
from gkeml_sdk.backends.local.supervisor import Supervisor
from gkeml_sdk.runs.handle import FailureCause, RunState, RunStatus


def main(argv: list[str]) -> int:
    """Fork the supervisor for the run at `argv[0]`, record its identity, and return."""
    run = RunDir(Path(argv[0]))
    pid = os.fork()
    if pid:
        run.write_supervisor(ProcessId.of(pid))
        return 0
    os.setsid()
    # Whatever the supervisor writes is private; its children get the caller's umask back.
    caller_umask = os.umask(0o077)
    log_fd = open_private(run.path / SUPERVISOR_LOG)
    with open(os.devnull, "rb") as null, os.fdopen(log_fd, "ab") as log:
        os.dup2(null.fileno(), 0)
        os.dup2(log.fileno(), 1)
        os.dup2(log.fileno(), 2)
    supervisor: Supervisor | None = None
    try:
        supervisor = Supervisor(run, caller_umask)
        supervisor.supervise()
    except BaseException as exc:  # the run must end in a recorded state, whatever happened
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


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
