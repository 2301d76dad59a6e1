"""The detached process that runs a local job: starts one process per slot with the
environment contract, restarts the gang on failure or simulated preemption, enforces
max_runtime, and records every transition in the run directory. `detach` starts it."""

from __future__ import annotations

import os
import signal
import subprocess
import time

from gkeml_sdk.backends.local.confined import open_private
from gkeml_sdk.backends.local.local_environment import (
    Slot,
    expand_references,
    local_env,
    record_local_start,
    secret_values,
    slots,
)
from gkeml_sdk.backends.local.local_options import LocalOptions
from gkeml_sdk.backends.local.procs import ProcessId, free_ports, start_in_group, stop_groups
from gkeml_sdk.backends.local.run_store import JOB, ProcessRecord, RunDir
from gkeml_sdk.runs import workload as wl
from gkeml_sdk.runs.handle import FailureCause, RunState, RunStatus
from gkeml_sdk.training.model import TrainingJob

POLL_SECONDS = 0.05
DEFAULT_GRACE_SECONDS = 5.0


class Supervisor:
    """Runs the job of one run directory to a terminal state (see module docstring)."""

    def __init__(self, run: RunDir, child_umask: int = -1) -> None:
        self.run = run
        self.child_umask = child_umask  # -1: the processes inherit this one's umask
        self.job = TrainingJob.from_yaml((run.path / JOB).read_text())
        launch = run.read_launch()
        self.argv: list[str] = launch["argv"]
        self.cwd: str = launch["cwd"]
        self.volumes: dict[str, str] = launch.get("volumes", {})
        self.options = LocalOptions.from_dict(launch["options"])
        grace = self.options.grace_seconds
        if grace is None:
            grace = self.job.termination_grace_seconds
        self.grace = DEFAULT_GRACE_SECONDS if grace is None else float(grace)
        self.slots = slots(self.job, self.options.spawn_procs)
        self.record = run.read()
        self.children: dict[str, subprocess.Popen[bytes]] = {}
        self.succeeded: set[str] = set()
        self.failures = {s.label: 0 for s in self.slots}
        self.ports = (0, 0)
        self.chaos_left = self.options.chaos_times if self.options.chaos_after is not None else 0
        self.stop_signal: int | None = None
        self.attempt_started = time.monotonic()
        self.unstartable: dict[str, int] = {}  # slots whose command could not be executed
        # Handed over by the launcher in this process's environment; kept in memory only.
        self.secrets = secret_values(self.job, os.environ)

    def supervise(self) -> None:
        """Run until SUCCEEDED, FAILED or CANCELLED; the outcome is in `state.json`."""
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(sig, self._on_signal)
        runtime = self.job.max_runtime
        deadline = time.monotonic() + runtime if runtime else None
        self._move(RunState.STARTING, "Launching", f"{len(self.slots)} process(es)")
        self._start_all()
        while True:
            if self.stop_signal is not None:
                return self._stopped()
            if deadline is not None and time.monotonic() >= deadline:
                self._stop_all()
                return self._move(
                    RunState.FAILED,
                    # The reason Kueue gives on GKE, so a run reads the same on both backends.
                    wl.DEACTIVATED_DUE_TO + wl.MAXIMUM_EXECUTION_TIME_EXCEEDED,
                    f"ran longer than max_runtime={self.job.max_runtime} s",
                    FailureCause.DEACTIVATED,
                )
            if self._chaos_due():
                self._preempt()
                continue
            if self._reap():
                return
            if len(self.succeeded) == len(self.slots):
                return self._move(RunState.SUCCEEDED, "Completed", "every process exited 0")
            time.sleep(POLL_SECONDS)

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
            self._record_exit(label, code)
            # A pod's end takes every process in it along; so does a slot's end here.
            stop_groups([ProcessId(proc.pid)], grace=0)
            if code == 0:
                self.succeeded.add(label)
            elif self._failed(label, code):
                return True
        return False

    def _failed(self, label: str, code: int) -> bool:
        what = f"process {label} exited with code {code}"
        if code < 0:
            what = f"process {label} was killed by {signal.Signals(-code).name}"
        limit = self.job.max_restarts
        if self.job.gang:
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
        self._start(next(s for s in self.slots if s.label == label))
        self._move(RunState.RUNNING, "Running", self._running_message())
        return False

    def _chaos_due(self) -> bool:
        after = self.options.chaos_after
        return (
            bool(self.chaos_left)
            and after is not None
            and (time.monotonic() >= self.attempt_started + after)
        )

    def _preempt(self) -> None:
        after = self.options.chaos_after or 0.0
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
        for slot in self.slots:
            self._start(slot)
        self._move(RunState.RUNNING, "Running", self._running_message())

    def _start(self, slot: Slot) -> None:
        start_id, attempt = record_local_start(str(self.run.checkpoints), slot)
        contract = local_env(
            self.job,
            slot,
            attempt=attempt,
            master_port=self.ports[0],
            jax_port=self.ports[1],
            checkpoint_dir=str(self.run.checkpoints),
            start_id=start_id,
        )
        # Unbuffered output so logs stream; the contract overrides anything inherited.
        declared = {**self.volumes, **self.job.env, **self.secrets, **contract}
        env = {**os.environ, "PYTHONUNBUFFERED": "1", **declared}
        # Kubernetes expands $(VAR) in commands from the container's declared env only; a
        # secret never goes into argv here (the submit refuses it; this keeps it so).
        argv = expand_references(
            self.argv, {k: v for k, v in declared.items() if k not in self.secrets}
        )
        try:
            proc = start_in_group(
                argv, cwd=self.cwd, env=env, log_fd=open_private(self.run.log_path(slot.label)),
                umask=self.child_umask,  # user code creates files as it would elsewhere
            )  # fmt: skip
        except OSError as exc:
            # Like a container whose entrypoint is missing: exit code 127, a user error.
            # self.argv, not argv: an expanded $(SECRET) must not reach the log.
            with os.fdopen(open_private(self.run.log_path(slot.label)), "ab") as log:
                log.write(f"gkeml: cannot start {self.argv[0]!r}: {exc.strerror}\n".encode())
            self.unstartable[slot.label] = 127
            self.record.processes = [p for p in self.record.processes if p.slot != slot.label]
            self.record.processes.append(ProcessRecord(slot.label, 0, -1, self.record.attempt))
            return
        self.children[slot.label] = proc
        self.record.processes = [p for p in self.record.processes if p.slot != slot.label]
        self.record.processes.append(
            ProcessRecord(slot.label, proc.pid, ProcessId.of(proc.pid).start, self.record.attempt)
        )
        self.attempt_started = time.monotonic()

    def _stop_all(self) -> None:
        stop_groups([ProcessId(p.pid) for p in self.children.values()], self.grace)
        for label, proc in list(self.children.items()):
            self._record_exit(label, proc.wait())
        self.children.clear()

    def _record_exit(self, label: str, code: int) -> None:
        for rec in (r for r in self.record.processes if r.slot == label):
            rec.exit_code = code
        self.run.write(self.record)

    def _restart(self, reason: str, message: str) -> None:
        self.record.attempt += 1
        self._move(RunState.RESTARTING, reason, message)

    def _fail_user(self, reason: str, message: str) -> None:
        self._move(RunState.FAILED, reason, message, FailureCause.USER_CODE)

    def _move(
        self, state: RunState, reason: str, message: str, cause: FailureCause | None = None
    ) -> None:
        self.record.move(RunStatus(state, reason, message, cause))
        self.run.write(self.record)

    def _running_message(self) -> str:
        return f"{len(self.slots)} process(es), attempt {self.record.attempt}"

    def _on_signal(self, signum: int, frame: object) -> None:
        self.stop_signal = signum
