"""`LocalRunService`: the `RunService` of this machine. Every verb reads the run directory of
the submission a `RunRef` names (so any process, a restarted kernel or the CLI, answers the
same), and the supervisor is the one writer of a run's state: the service keeps no per-run
state but which listed runs were unreadable. Handles ask it; it never calls into a handle."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

from gkeml_sdk.backends.local.plan.local_options import LocalOptions
from gkeml_sdk.backends.local.runs.local_submit import RunPlace, submit_run
from gkeml_sdk.backends.local.runs.log_readers import SlotLogs, TimedLogs
from gkeml_sdk.backends.local.runs.run_reads import read_run
from gkeml_sdk.backends.local.runs.stopping import stop_run, stop_unreadable
from gkeml_sdk.backends.local.store.run_state import LocalRunState
from gkeml_sdk.backends.local.store.run_store import RunDir
from gkeml_sdk.backends.local.system.confined import (
    STORE_NAME,
    check_store_name,
    remove_run_dir,
    run_path,
)
from gkeml_sdk.backends.local.system.procs import wait_exit
from gkeml_sdk.backends.local.system.submit_lock import lock_path, submission
from gkeml_sdk.errors import ConfigError, GkemlError, NotFoundError, RunTimeoutError
from gkeml_sdk.runs.explain.explanation import Explanation
from gkeml_sdk.runs.explain.local_reasons import explain_local
from gkeml_sdk.runs.retry import RetryPolicy
from gkeml_sdk.runs.service import ProgressCallback, RunRef, RunSnapshot
from gkeml_sdk.runs.states import RunState, RunStatus
from gkeml_sdk.training.model import TrainingJob

log = logging.getLogger(__name__)
POLL_SECONDS = 0.1


class LocalRunService:
    """Local runs for `Run` handles (see `gkeml_sdk.runs.service.RunService`), in
    `<root>/<namespace>/<name>/`. Beyond the port: `record(ref)` (the run's state on disk),
    `job(ref)`, `logs(ref, slot=...)` for one process, and `delete(name)`.

    Example:
        >>> from gkeml_sdk.backends.local import LocalBackend
        >>> service = LocalBackend(run_dir="/tmp/gkeml-doc-runs").service
        >>> run = service.submit(TrainingJob(name="hi", command=["true"]), None)  # doctest: +SKIP
        >>> service.wait([run.ref], timeout=60)[0].state  # doctest: +SKIP
        <RunState.SUCCEEDED: 'Succeeded'>
        >>> for line in service.logs(run.ref, slot="0"):  # doctest: +SKIP
        ...     print(line)
    """

    def __init__(self, place: RunPlace) -> None:
        self.place = place
        # Runs a listing found unreadable: their snapshot says why (other verbs raise it).
        self._unreadable: set[RunRef] = set()

    # -- the RunService port -----------------------------------------------------------

    def submit(
        self, job: TrainingJob, retry: RetryPolicy | None, *, options: LocalOptions | None = None
    ) -> RunSnapshot:
        """Start `job` (see `local_submit`); `retry` has no local meaning (there is no
        infrastructure to lose) and is ignored; `options` replace the service's for this run."""
        if retry is not None:
            log.debug("retry policy ignored by the local backend")
        path, created = submit_run(self.place, job, options)
        return self.snapshot(RunRef(path.name, path.parent.name, created))

    def find(self, name: str) -> RunSnapshot:
        """The current submission of the run called `name`; `NotFoundError` when there is
        none, and why when its state cannot be read (`delete(name)` still removes it)."""
        check_store_name("name", name)
        for namespace in self._namespaces():
            path = run_path(self.place.root, namespace.name, name)
            if RunDir(path).holds_state:
                try:
                    record = read_run(RunDir(path), None)
                except NotFoundError:
                    continue  # removed since the check
                return _snap(RunRef(name, namespace.name, record.created), path, record)
        raise NotFoundError(
            f"get local run {name!r}",
            message=f"no run of that name under {self.place.root}",
            hint="list the runs with Client(backend='local').runs()",
        )

    def list_runs(self) -> list[RunSnapshot]:
        """Every local run (of the service's namespace, or all), newest first; a run whose
        files cannot be read is listed last, as UNREADABLE with why."""
        found: list[RunSnapshot] = []
        unreadable: list[RunSnapshot] = []
        for namespace in self._namespaces():
            for path in _entries(namespace):
                ref = RunRef(path.name, namespace.name)
                try:
                    found.append(self.snapshot(ref))
                except NotFoundError:
                    continue  # being created or replaced, or not a run directory
                except GkemlError as exc:  # damaged, or written by a newer gkeml
                    self._unreadable.add(ref)
                    unreadable.append(_unreadable_snap(ref, path, exc))
        found.sort(key=lambda snap: snap.ref.submission or 0.0, reverse=True)
        return found + unreadable

    def snapshot(self, ref: RunRef, fresh: bool = True) -> RunSnapshot:
        """The run as its files say now (locally every read is of the files: `fresh` changes
        nothing). A handle without a submission names the one the directory holds."""
        path = self._path(ref)
        try:
            record = read_run(RunDir(path), ref.submission)
        except NotFoundError:
            raise
        except GkemlError as exc:
            if ref not in self._unreadable:
                raise
            return _unreadable_snap(ref, path, exc)
        return _snap(ref, path, record)

    def wait(
        self,
        refs: Sequence[RunRef],
        timeout: float | None,
        progress: bool | ProgressCallback = False,
        stop: threading.Event | None = None,
    ) -> list[RunStatus]:
        """Block until every run is terminal (or `stop` is set). `progress=True` logs each
        transition (logger `gkeml_sdk.backends.local`); a callable receives each new status.
        `RunTimeoutError` names the runs still going after `timeout` seconds."""
        deadline = None if timeout is None else time.monotonic() + timeout
        seen = [0] * len(refs)
        while True:
            records = [self.record(ref) for ref in refs]
            for i, (ref, record) in enumerate(zip(refs, records, strict=True)):
                for transition in record.history[seen[i] :]:
                    if callable(progress):
                        progress(transition.status)
                    elif progress:
                        log.info(
                            "%s: %s (attempt %d)", ref.name, transition.status, transition.attempt
                        )
                seen[i] = len(record.history)
            busy = [ref for ref, r in zip(refs, records, strict=True) if not r.status.terminal]
            if not busy or (stop is not None and stop.is_set()):
                return [r.status for r in records]
            pause = POLL_SECONDS
            if deadline is not None:
                pause = min(pause, deadline - time.monotonic())
                if pause <= 0:
                    raise _timeout(refs, records, timeout)
            self._pause(busy[0], pause)

    def logs(
        self,
        ref: RunRef,
        follow: bool = False,
        stop: threading.Event | None = None,
        *,
        by_time: bool = False,
        slot: str | None = None,
    ) -> Iterator[str]:
        """Output lines of every process (`slot`: of that one only, e.g. `"1"` or `"0.3"`),
        each prefixed by its slot: `[0] ...` for node rank 0 (`[0.3]` for local rank 3 with
        spawn_procs), process after process; all attempts are included, in order. `by_time`
        merges the processes' lines in the order they were written, each after its time
        (`2026-12-07T19:53:25.000000001Z [1] ...`). Following keeps yielding new lines until
        the run is terminal (or `stop` is set)."""
        self.record(ref)  # this submission, readable: else why, before any line
        return self._lines(ref, follow, stop, by_time, slot)

    def worker_logs(self, ref: RunRef, worker: object, follow: bool = False) -> Iterator[str]:
        """Always a `ConfigError`: a local run has no MultiKueue worker cluster."""
        raise ConfigError(
            f"worker_logs reads the pods of a MultiKueue worker cluster; local run "
            f"{ref.name!r} runs on this machine, with no workers: read run.logs()"
        )

    def cancel(self, ref: RunRef) -> bool:
        """Stop every process of the run (each one's whole process group) and wait until they
        are gone; the run ends CANCELLED. True when this call stopped the run; False when it
        had already finished (processes a lost supervisor left behind are stopped too) or the
        name was submitted again since the handle was made (the new run is left alone)."""
        path = self._path(ref)
        run = RunDir(path)
        with submission(path):
            try:
                return stop_run(run, ref.submission)
            except NotFoundError:
                if ref.submission is not None and run.holds_state:
                    return False  # replaced: this handle's submission ended before
                raise

    def explain(self, ref: RunRef) -> Explanation:
        """Why the run is where it is, from its own status, history and exit codes."""
        record = self.record(ref)
        codes = {p.slot: p.exit_code for p in record.processes}
        return explain_local(ref.name, record.status, record.history, codes)

    # -- beyond the port: what only a run directory has --------------------------------

    def record(self, ref: RunRef) -> LocalRunState:
        """The run's state on disk, with the outcome of a supervisor that died without
        recording one (FAILED, or CANCELLED if a cancel was asked). Reads only: it neither
        writes nor signals, whatever the files say."""
        return read_run(RunDir(self._path(ref)), ref.submission)

    def job(self, ref: RunRef) -> TrainingJob:
        """The job the run executes (its `job.yaml`)."""
        run = RunDir(self._path(ref))
        read_run(run, ref.submission)  # that submission's, not a later one's
        return TrainingJob.from_yaml(run.read_job())

    def delete(self, name: str) -> None:
        """Cancel the run if it is active, then remove its directory (logs, checkpoints). A
        run whose files are damaged is deleted too. Holds the name's submission lock, so a
        submit of the same name runs before or after, never into a directory being removed."""
        check_store_name("name", name)
        for namespace in self._namespaces():
            path = run_path(self.place.root, namespace.name, name)
            if not (path.exists() or lock_path(path).exists()):
                continue
            # Looked at under the lock: a submission in progress is waited for, then deleted.
            with submission(path):
                if RunDir(path).holds_state:
                    self._delete_locked(path)
                    return
        raise NotFoundError(
            f"delete local run {name!r}",
            status=404,
            reason="NotFound",
            message=f"no run of that name under {self.place.root}",
            hint="list the runs with Client(backend='local').runs()",
        )

    # -- internals ---------------------------------------------------------------------

    def _delete_locked(self, path: Path) -> None:
        try:
            stop_run(RunDir(path), None)
        except NotFoundError:
            pass  # no state left to say what runs: nothing gkeml can stop
        except GkemlError:
            stop_unreadable(RunDir(path))
        remove_run_dir(self.place.root, path.parent.name, path.name)

    def _lines(
        self,
        ref: RunRef,
        follow: bool,
        stop: threading.Event | None,
        by_time: bool,
        slot: str | None,
    ) -> Iterator[str]:
        run = RunDir(self._path(ref))
        source = TimedLogs(run, slot) if by_time else SlotLogs(run, slot)
        try:
            if not follow:
                yield from source.read()
                yield from source.rest()
                return
            while stop is None or not stop.is_set():
                terminal = self.record(ref).status.terminal
                lines = source.read()
                yield from lines
                if terminal:
                    yield from source.rest()
                    return
                if not lines:
                    self._pause(ref, POLL_SECONDS)  # ends early when the run does
        finally:
            source.close()

    def _pause(self, ref: RunRef, seconds: float) -> None:
        # The supervisor exits right after recording the outcome: wake up then, not a poll later.
        supervisor = RunDir(self._path(ref)).read_supervisor()
        if supervisor is None:
            time.sleep(seconds)
        else:
            wait_exit(supervisor, seconds)

    def _path(self, ref: RunRef) -> Path:
        return run_path(self.place.root, ref.namespace, ref.name)

    def _namespaces(self) -> list[Path]:
        root, namespace = self.place.root, self.place.namespace
        if namespace is not None:
            folder = root / namespace
            return [folder] if folder.is_dir() and not folder.is_symlink() else []
        if not root.is_dir():
            return []
        return _entries(root)


def _snap(ref: RunRef, path: Path, record: LocalRunState) -> RunSnapshot:
    """What `record` says; a handle made from it names that submission."""
    if ref.submission is None:
        ref = RunRef(ref.name, ref.namespace, record.created)
    return RunSnapshot(
        ref,
        record.status,
        tuple(record.history),
        record.attempt,
        record.counters,
        exit_codes={p.slot: p.exit_code for p in record.processes},
        path=path,
    )


def _unreadable_snap(ref: RunRef, path: Path, error: GkemlError) -> RunSnapshot:
    status = RunStatus(RunState.UNREADABLE, "UnreadableRecord", str(error))
    return RunSnapshot(ref, status, history=(), attempt=1, path=path)


def _timeout(
    refs: Sequence[RunRef], records: Sequence[LocalRunState], timeout: float | None
) -> RunTimeoutError:
    if len(refs) == 1:
        return RunTimeoutError(
            f"run {refs[0].name!r} is still {records[0].status.state.value} after "
            f"{timeout:g} s (it keeps running; wait again or cancel it)"
        )
    busy = [ref.name for ref, r in zip(refs, records, strict=True) if not r.status.terminal]
    return RunTimeoutError(f"runs still active after {timeout:g} s: {', '.join(busy)}")


def _entries(folder: Path) -> list[Path]:
    # Only real directories with store names: a link or a stray file is no run of ours.
    return sorted(
        p
        for p in folder.iterdir()
        if STORE_NAME.fullmatch(p.name) and p.is_dir() and not p.is_symlink()
    )
