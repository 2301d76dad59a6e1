"""The detached process that runs a local job: starts one process per slot with the
environment contract (after the plan's bootstrap, as a pod's init container runs first),
restarts the gang on failure or simulated preemption, enforces max_runtime, and records every
transition in the run directory; each process's output goes to its log through a pipe, with
the time of each line (`log_pump`). `detach` starts it.

It follows the `LaunchPlan` of `launch.json` and never reads the `TrainingJob`, so it imports
neither pydantic nor the spec layer, and it sleeps until a process exits, a signal comes or a
deadline is due, instead of polling."""

from __future__ import annotations

import contextlib
import errno
import os
import select
import signal
import time

from gkeml_sdk.backends.local.plan.local_environment import (
    expand_references,
    record_local_start,
    start_env,
)
from gkeml_sdk.backends.local.store.run_state import ProcessRecord
from gkeml_sdk.backends.local.store.run_store import STATE, RunDir
from gkeml_sdk.backends.local.supervision.log_pump import LogPump
from gkeml_sdk.backends.local.system.procs import ProcessId, free_ports, stop_groups
from gkeml_sdk.backends.local.system.spawn import Child, start_in_group
from gkeml_sdk.runs.states import FailureCause, RunState, RunStatus
from gkeml_sdk.training.launcher import PREPARE_FAILED

_STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
# How often a state the disk had no room for is written again.
SAVE_RETRY_SECONDS = 1.0


class Supervisor:
    """Runs the job of one run directory to a terminal state (see module docstring)."""

    def __init__(self, run: RunDir, child_umask: int = -1) -> None:
        self.run = run
        self.logs = LogPump(run)  # each process's output, and when each line of it came
        self.child_umask = child_umask  # -1: the processes inherit this one's umask
        self.plan = run.read_launch()
        self.slots = dict(self.plan.slots)  # label -> its contract variables kept at every start
        self.record = run.read()
        self.children: dict[str, Child] = {}
        self.succeeded: set[str] = set()
        self.failures = {label: 0 for label in self.slots}
        self.ports = (0, 0)
        self.chaos_left = self.plan.chaos_times
        self.stop_signal: int | None = None
        self.attempt_started = time.monotonic()
        self.unstartable: dict[str, int] = {}  # slots whose command could not be executed
        # Slots whose bootstrap runs, and the command and env each starts once it exited 0.
        self.preparing: dict[str, tuple[list[str], dict[str, str]]] = {}
        self.unsaved = False  # the record holds exit codes state.json does not
        self.retry_save_at: float | None = None  # when to write it again after a full disk
        # Handed over by the launcher in this process's environment; kept in memory only.
        self.secrets = {name: os.environ[name] for name in self.plan.secret_names}

    def supervise(self) -> None:
        """Run until SUCCEEDED, FAILED or CANCELLED; the outcome is in `state.json`."""
        wake = _Wakeup()
        for sig in _STOP_SIGNALS:
            signal.signal(sig, self._on_signal)
        try:
            self._supervise(wake)
            while self.unsaved:  # the outcome waits in memory until the disk has room for it
                self._save()
                if self.unsaved:
                    wake.wait_until(self.retry_save_at)
        finally:
            wake.close()

    def _supervise(self, wake: _Wakeup) -> None:
        runtime = self.plan.max_runtime
        deadline = time.monotonic() + runtime if runtime else None
        # Written with RUNNING, a moment later: a write before the processes start delays them.
        self.record.move(
            RunStatus(RunState.STARTING, "Launching", f"{len(self.slots)} process(es)")
        )
        self._start_all()
        while True:
            if self.stop_signal is not None:
                return self._stopped()
            if deadline is not None and time.monotonic() >= deadline:
                self._stop_all()
                from gkeml_sdk.runs import workload as wl  # a big module, for two names

                return self._move(
                    RunState.FAILED,
                    # The reason Kueue gives on GKE, so a run reads the same on both backends.
                    wl.DEACTIVATED_DUE_TO + wl.MAXIMUM_EXECUTION_TIME_EXCEEDED,
                    f"ran longer than max_runtime={runtime} s",
                    FailureCause.DEACTIVATED,
                )
            if self._chaos_due():
                self._preempt()
                continue
            if self._reap():
                return
            if len(self.succeeded) == len(self.slots):
                return self._move(RunState.SUCCEEDED, "Completed", "every process exited 0")
            if self.unsaved:
                self._save()  # the exit codes just collected, before sleeping
            wake.wait_until(deadline, self._chaos_at(), self.retry_save_at)

    def _reap(self) -> bool:
        """Collect exited processes; True once the run reached a terminal state."""
        while self.unstartable:
            label, code = self.unstartable.popitem()
            self._record_exit(label, code)
            if self._failed(label, code):
                return True
        for label, proc in list(self.children.items()):
            if self.children.get(label) is not proc:
                continue  # stopped and replaced by a gang restart earlier in this loop
            exited = proc.poll()
            if exited is None:
                continue
            code = exited
            del self.children[label]
            # A pod's end takes every process in it along; so does a slot's end here.
            stop_groups([ProcessId(proc.pid)], grace=0)
            self.logs.join(label)  # its last lines are in before the outcome is recorded
            prepared = self.preparing.pop(label, None)
            if prepared is not None and code == 0:
                self._spawn(label, *prepared)
                continue
            self._record_exit(label, code)
            if prepared is not None and code == PREPARE_FAILED:
                self._stop_all()
                # The same workdir and requirements fail the same way at every start, as
                # the podFailurePolicy rule of the bootstrap container says on GKE.
                self._fail_user(
                    "PodFailurePolicy",
                    f"process {label}: the bootstrap exited with code {code}: its workdir or "
                    "requirements could not be prepared (pip's message is in its log); "
                    "max_restarts not spent",
                )
                return True
            if code == 0:
                self.succeeded.add(label)
            elif self._failed(label, code):
                return True
        return False

    def _failed(self, label: str, code: int) -> bool:
        what = f"process {label} exited with code {code}"
        if code < 0:
            what = f"process {label} was killed by {signal.Signals(-code).name}"
        limit = self.plan.max_restarts
        if self.plan.gang:
            used = self.record.counters.user_restarts
            if used >= limit:
                self._stop_all()
                self._fail_user(
                    "ReachedMaxRestarts", f"{what}; {used} of max_restarts={limit} used"
                )
                return True
            self._stop_all()
            self.record.counters.user_restarts += 1
            self._restart("ProcessFailed", f"{what}; restarting all {len(self.slots)}")
            self._start_all()
            return False
        self.failures[label] += 1
        if self.failures[label] > limit:
            self._stop_all()
            self._fail_user(
                "FailedIndexes",
                f"{what}; it failed {self.failures[label]} time(s), max_restarts={limit}",
            )
            return True
        self.record.counters.user_restarts += 1
        self._restart("ProcessFailed", f"{what}; restarting it")
        self._start(label)
        self._move(RunState.RUNNING, "Running", self._running_message())
        return False

    def _chaos_at(self) -> float | None:
        after = self.plan.chaos_after
        if not self.chaos_left or after is None:
            return None
        return self.attempt_started + after

    def _chaos_due(self) -> bool:
        at = self._chaos_at()
        return at is not None and time.monotonic() >= at

    def _preempt(self) -> None:
        after = self.plan.chaos_after or 0.0
        self.chaos_left -= 1
        self._stop_all()
        self.record.counters.preemptions += 1
        self._move(
            RunState.PREEMPTED,
            "SimulatedPreemption",
            f"chaos: every process stopped {after:g} s after start (max_restarts not spent)",
        )
        self._restart("AfterPreemption", "every process starts again")
        self._start_all()

    def _stopped(self) -> None:
        self._stop_all()
        if self.run.cancel_requested:
            self._move(RunState.CANCELLED, "Cancelled", "cancelled by the user")
            return
        name = signal.Signals(self.stop_signal or signal.SIGTERM).name
        self._move(
            RunState.FAILED,
            "SupervisorTerminated",
            f"the local supervisor received {name}",
            FailureCause.INFRASTRUCTURE,
        )

    def _start_all(self) -> None:
        master, jax = free_ports(2)
        self.ports = (master, jax)
        self.succeeded.clear()
        self.unstartable.clear()
        self.record.processes = []
        for label in self.slots:
            self._start(label)
        self._move(RunState.RUNNING, "Running", self._running_message())

    def _start(self, label: str) -> None:
        """Start the slot's bootstrap when the plan has one, else its command."""
        start_id, attempt = record_local_start(self.run.checkpoints, label)
        start = start_env(
            attempt=attempt, master_port=self.ports[0], jax_port=self.ports[1], start_id=start_id
        )
        contract = {**self.slots[label], **start}
        # Unbuffered output so logs stream; the contract overrides anything inherited.
        declared = {**self.plan.env, **self.secrets, **contract}
        env = {**os.environ, "PYTHONUNBUFFERED": "1", **declared}
        # Kubernetes expands $(VAR) in commands from the container's declared env only; a
        # secret never goes into argv here (the submit refuses it; this keeps it so).
        argv = expand_references(
            self.plan.argv, {k: v for k, v in declared.items() if k not in self.secrets}
        )
        if self.plan.bootstrap:
            self.preparing[label] = (argv, env)
            argv = self.plan.bootstrap
        self._spawn(label, argv, env)

    def _spawn(self, label: str, argv: list[str], env: dict[str, str]) -> None:
        # The plan's program, not argv's: an expanded $(SECRET) must not reach the log.
        shown = argv[0] if argv is self.plan.bootstrap else self.plan.argv[0]
        try:
            proc = start_in_group(
                argv, cwd=self.plan.cwd, env=env, log_fd=self.logs.open(label),
                umask=self.child_umask,  # user code creates files as it would elsewhere
            )  # fmt: skip
        except OSError as exc:
            # Like a container whose entrypoint is missing: exit code 127, a user error.
            self.logs.join(label)  # the pipe ended with the failed start
            self.preparing.pop(label, None)
            self.logs.note(label, f"gkeml: cannot start {shown!r}: {exc.strerror}")
            self.unstartable[label] = 127
            self.record.processes = [p for p in self.record.processes if p.slot != label]
            self.record.processes.append(ProcessRecord(label, 0, -1, self.record.attempt))
            return
        self.children[label] = proc
        self.record.processes = [p for p in self.record.processes if p.slot != label]
        self.record.processes.append(
            ProcessRecord(label, proc.pid, ProcessId.of(proc.pid).start, self.record.attempt)
        )
        self.attempt_started = time.monotonic()

    def _stop_all(self) -> None:
        stop_groups([ProcessId(p.pid) for p in self.children.values()], self.plan.grace_seconds)
        for label, proc in list(self.children.items()):
            self._record_exit(label, proc.wait())
            self.logs.join(label)
        self.children.clear()
        self.preparing.clear()
        self._save()

    def _record_exit(self, label: str, code: int) -> None:
        for rec in (r for r in self.record.processes if r.slot == label):
            rec.exit_code = code
        # Saved by the move that follows, or before the next sleep: one write per wake-up.
        self.unsaved = True

    def _save(self) -> None:
        try:
            self.run.write(self.record)
        except OSError as exc:
            if exc.errno not in (errno.ENOSPC, errno.EDQUOT):
                raise
            # A supervisor that died here would leave its run to be read as lost, whatever its
            # processes did: keep the record and write it once the disk has room.
            self.unsaved = True
            self.retry_save_at = time.monotonic() + SAVE_RETRY_SECONDS
            with contextlib.suppress(OSError):  # the log is on the same full disk
                print(f"gkeml: cannot write {STATE} ({exc.strerror}); retrying", flush=True)
            return
        self.unsaved = False
        self.retry_save_at = None

    def _restart(self, reason: str, message: str) -> None:
        self.record.attempt += 1
        self._move(RunState.RESTARTING, reason, message)

    def _fail_user(self, reason: str, message: str) -> None:
        self._move(RunState.FAILED, reason, message, FailureCause.USER_CODE)

    def _move(
        self, state: RunState, reason: str, message: str, cause: FailureCause | None = None
    ) -> None:
        self.record.move(RunStatus(state, reason, message, cause))
        self._save()

    def _running_message(self) -> str:
        return f"{len(self.slots)} process(es), attempt {self.record.attempt}"

    def _on_signal(self, signum: int, frame: object) -> None:
        self.stop_signal = signum


class _Wakeup:
    """Sleeps until a child exits, a signal arrives or a time is reached. The kernel's SIGCHLD
    and the stop signals write a byte to a pipe (`signal.set_wakeup_fd`), so one that lands
    between the check of the children and the sleep ends the sleep at once."""

    def __init__(self) -> None:
        self._read, self._write = os.pipe()
        for fd in (self._read, self._write):
            os.set_blocking(fd, False)
        self._previous = signal.set_wakeup_fd(self._write, warn_on_full_buffer=False)
        # A Python handler, so that SIGCHLD (ignored by default) reaches the wakeup pipe.
        signal.signal(signal.SIGCHLD, lambda signum, frame: None)

    def wait_until(self, *times: float | None) -> None:
        due = [t for t in times if t is not None]
        timeout = max(0.0, min(due) - time.monotonic()) if due else None
        select.select([self._read], [], [], timeout)
        with contextlib.suppress(BlockingIOError):
            while os.read(self._read, 512):
                pass

    def close(self) -> None:
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        signal.set_wakeup_fd(self._previous)
        os.close(self._read)
        os.close(self._write)
