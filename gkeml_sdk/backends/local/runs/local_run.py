"""`LocalRun`: the run handle of a local run, read from its run directory, so any process
(a restarted kernel, the CLI) can follow, wait for and cancel it."""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path

from gkeml_sdk.backends.local.plan.launch_plan import DEFAULT_GRACE_SECONDS
from gkeml_sdk.backends.local.runs.log_readers import SlotLogs, TimedLogs
from gkeml_sdk.backends.local.system.procs import ProcessId, alive, stop_groups, wait_exit
from gkeml_sdk.backends.local.store.run_state import LocalRunState
from gkeml_sdk.backends.local.store.run_store import RunDir
from gkeml_sdk.backends.local.system.submit_lock import submission, submission_in_progress
from gkeml_sdk.errors import GkemlError, NotFoundError, RunTimeoutError
from gkeml_sdk.runs.explain.explanation import Explanation
from gkeml_sdk.runs.explain.local_reasons import explain_local
from gkeml_sdk.runs.handle import (
    FailureCause,
    ProgressCallback,
    Run,
    RunCounters,
    RunState,
    RunStatus,
    Transition,
)
from gkeml_sdk.runs.service import RunRef
from gkeml_sdk.training.model import TrainingJob

log = logging.getLogger(__name__)
POLL_SECONDS = 0.1
# How long a cancel waits for the supervisor to stop the processes before doing it itself.
CANCEL_MARGIN_SECONDS = 10.0


class LocalRun(Run):
    """A run on this machine. Every property reads the run directory, so the handle stays
    valid across kernel restarts; `Client(backend="local").get_run(name)` returns a new one.

    Beyond `Run`: `attempt`, `counters`, `exit_codes`, `path`, `checkpoint_dir`, `job`, and
    `logs(slot=...)` for one process.

    Example:
        >>> from gkeml_sdk import Client, TrainingJob  # doctest: +SKIP
        >>> job = TrainingJob(name="hi", command=["true"])  # doctest: +SKIP
        >>> run = Client(backend="local").submit(job)  # doctest: +SKIP
        >>> run.wait(timeout=30).state, run.attempt  # doctest: +SKIP
        (<RunState.SUCCEEDED: 'Succeeded'>, 1)
    """

    def __init__(self, path: Path, submitted: float | None = None) -> None:
        self._path = path
        self._dir = RunDir(path)
        self._ref = RunRef(path.name, path.parent.name, submitted)
        # The submission this handle names (its state's `created`): once the name is submitted
        # again, this handle reads NotFound and its cancel changes nothing. None: whichever.
        self._submitted = submitted

    @classmethod
    def of(cls, path: Path) -> LocalRun:
        """The handle of the submission the run directory `path` holds now; `NotFoundError`
        when it holds none, `UnreadableRunError` when its state is damaged."""
        return cls(path, RunDir(path).read().created)

    @property
    def submitted(self) -> float | None:
        """When the submission this handle names was made (seconds since the epoch); None for
        a handle that follows whichever submission of the name is there."""
        return self._submitted

    @property
    def path(self) -> Path:
        """The run directory."""
        return self._path

    @property
    def checkpoint_dir(self) -> Path:
        """`GKEML_CHECKPOINT_DIR` of every process; kept across restarts and preemptions."""
        return Path(self._dir.checkpoints)

    @property
    def job(self) -> TrainingJob:
        """The job this run executes."""
        return TrainingJob.from_yaml(self._dir.read_job())

    def record(self) -> LocalRunState:
        """The run's state on disk, with the outcome of a supervisor that died without
        recording one (FAILED, or CANCELLED if a cancel was asked). Reads only: it neither
        writes nor signals, whatever the files say."""
        return self._record(locked=False)

    def _record(self, *, locked: bool) -> LocalRunState:
        # locked: this process holds the name's submission lock, so no submission is going on.
        record = self._read()
        if record.status.terminal:
            return record
        supervisor = self._dir.read_supervisor()
        if supervisor is None:
            if not locked and submission_in_progress(self.path):
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
        record = self._read()
        if not record.status.terminal:
            record.move(self._outcome_after_crash(record, supervisor.pid))
        return record

    def _read(self) -> LocalRunState:
        record = self._dir.read()
        if self._submitted is not None and record.created != self._submitted:
            raise NotFoundError(
                f"read local run {self.name!r}",
                status=404,
                reason="NotFound",
                message="the submission this handle names was replaced by a newer one of "
                "the same name",
                hint=f"Client(backend='local').get_run({self.name!r}) follows the new one",
            )
        return record

    def _outcome_after_crash(self, record: LocalRunState, pid: int) -> RunStatus:
        """What the exit codes the supervisor recorded before it died say about the run."""
        if self._dir.cancel_requested:
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

    @property
    def state(self) -> RunStatus:
        """The current status."""
        return self.record().status

    @property
    def history(self) -> list[Transition]:
        """Every transition, oldest first; `attempt` counts restarts and preemptions."""
        return self.record().history

    @property
    def counters(self) -> RunCounters:
        """Preemptions (chaos) and user restarts so far."""
        return self.record().counters

    @property
    def attempt(self) -> int:
        """1 for the first start, +1 for every restart or preemption."""
        return self.record().attempt

    def explain(self) -> Explanation:
        """Why the run is where it is, from its own status, history and exit codes."""
        record = self.record()
        codes = {p.slot: p.exit_code for p in record.processes}
        return explain_local(self.name, record.status, record.history, codes)

    @property
    def exit_codes(self) -> dict[str, int | None]:
        """Exit code of each process of the latest attempt (None while it runs)."""
        return {p.slot: p.exit_code for p in self.record().processes}

    def wait(
        self, timeout: float | None = None, progress: bool | ProgressCallback = False
    ) -> RunStatus:
        """Block until the run is terminal. `progress=True` logs each transition (logger
        `gkeml_sdk.backends.local`); a callable receives each new status. Raises
        `RunTimeoutError`."""
        deadline = None if timeout is None else time.monotonic() + timeout
        seen = 0
        while True:
            record = self.record()
            for transition in record.history[seen:]:
                if callable(progress):
                    progress(transition.status)
                elif progress:
                    log.info(
                        "%s: %s (attempt %d)", self.name, transition.status, transition.attempt
                    )
            seen = len(record.history)
            if record.status.terminal:
                return record.status
            pause = POLL_SECONDS
            if deadline is not None:
                pause = min(pause, deadline - time.monotonic())
                if pause <= 0:
                    raise RunTimeoutError(
                        f"run {self.name!r} is still {record.status.state.value} after "
                        f"{timeout:g} s (it keeps running; wait again or cancel it)"
                    )
            self._pause(pause)

    def _pause(self, seconds: float) -> None:
        # The supervisor exits right after recording the outcome: wake up then, not a poll later.
        supervisor = self._dir.read_supervisor()
        if supervisor is None:
            time.sleep(seconds)
        else:
            wait_exit(supervisor, seconds)

    def logs(
        self, follow: bool = False, *, slot: str | None = None, by_time: bool = False
    ) -> Iterator[str]:
        """Output lines of every process, each prefixed by its slot: `[0] ...` for node rank 0
        (`[0.3]` for local rank 3 with spawn_procs), process after process; all attempts are
        included, in order. `by_time=True` merges the processes' lines in the order they were
        written, each after its time (`2026-12-07T19:53:25.000000001Z [1] ...`).
        `follow=True` keeps yielding new lines until the run is terminal.

        Example:
            >>> for line in run.logs(by_time=True):  # doctest: +SKIP
            ...     print(line)
            2026-12-07T19:53:25.120000000Z [0] step 1
            2026-12-07T19:53:25.310000000Z [1] step 1
        """
        source = TimedLogs(self._dir, slot) if by_time else SlotLogs(self._dir, slot)
        try:
            if not follow:
                yield from source.read()
                yield from source.rest()
                return
            while True:
                terminal = self.state.terminal
                lines = source.read()
                yield from lines
                if terminal:
                    yield from source.rest()
                    return
                if not lines:
                    self._pause(POLL_SECONDS)  # ends early when the run does
        finally:
            source.close()

    def cancel(self) -> bool:
        """Stop every process of the run (each one's whole process group) and wait until they
        are gone; the run ends CANCELLED. True when this call stopped the run; False when it
        had already finished (processes a lost supervisor left behind are stopped too) or the
        name was submitted again since this handle was made (the new run is left alone)."""
        with submission(self.path):
            try:
                return self.stop_locked()
            except NotFoundError:
                if self._submitted is not None and self._dir.holds_state:
                    return False  # replaced: this handle's submission ended before
                raise

    def stop_locked(self) -> bool:
        """`cancel()` for a caller holding the name's submission lock (`LocalBackend.delete`)."""
        record = self._record(locked=True)
        supervisor = self._dir.read_supervisor()
        if record.status.terminal:
            if supervisor is not None and alive(supervisor):
                # It recorded the outcome and is tidying up (its reserve) before it exits:
                # what follows (a delete, a replacement) starts once it is gone.
                _wait_gone(supervisor, CANCEL_MARGIN_SECONDS)
                stop_groups([supervisor], grace=0)
            stop_groups(_unfinished(record), grace=0)
            return False
        self._dir.request_cancel()
        if supervisor is not None:
            stop_supervisor(supervisor, self._grace() + CANCEL_MARGIN_SECONDS)
        # What a supervisor that died, or did not answer, left running.
        stop_groups(_unfinished(self._dir.read()), grace=0)
        return True

    def _grace(self) -> float:
        """The grace the supervisor stops the processes with: LocalOptions', else the job's."""
        try:
            return self._dir.read_launch().grace_seconds
        except GkemlError:  # no plan of this layout: an older gkeml's run, or a damaged one
            pass
        try:
            return self.job.termination_grace_seconds or DEFAULT_GRACE_SECONDS
        except GkemlError:
            return DEFAULT_GRACE_SECONDS


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


def _wait_gone(proc: ProcessId, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while alive(proc) and time.monotonic() < deadline:
        wait_exit(proc, min(POLL_SECONDS * 10, max(0.0, deadline - time.monotonic())))


def _unfinished(record: LocalRunState) -> list[ProcessId]:
    """The recorded processes without an exit code, as far as gkeml can prove they are its own:
    where /proc gives start times gkeml always recorded one, so an entry without it (start 0)
    was not written by gkeml and is never signalled."""
    proven = not os.path.isdir("/proc")
    return [p.id for p in record.processes if p.exit_code is None and (p.start > 0 or proven)]
