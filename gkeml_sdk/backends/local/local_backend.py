"""`LocalBackend`: runs a `TrainingJob` as processes on this machine, with the same
environment contract as on GKE, in run directories that outlive the Python process."""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

from gkeml_sdk.backends.local.system.confined import (
    STORE_NAME,
    check_store_name,
    remove_run_dir,
    run_path,
)
from gkeml_sdk.backends.local.supervision.detach import supervisor_launch
from gkeml_sdk.backends.local.plan.launch_plan import DEFAULT_GRACE_SECONDS
from gkeml_sdk.backends.local.plan.local_environment import (
    check_secrets_stay_out_of_argv,
    secret_values,
    slots,
)
from gkeml_sdk.backends.local.plan.local_options import LocalOptions, resolve_run_root
from gkeml_sdk.backends.local.runs.local_run import CANCEL_MARGIN_SECONDS, LocalRun, stop_supervisor
from gkeml_sdk.backends.local.plan.local_volumes import volume_folders
from gkeml_sdk.backends.local.store.run_files import write_run
from gkeml_sdk.backends.local.store.run_state import LocalRunState
from gkeml_sdk.backends.local.store.run_store import RunDir
from gkeml_sdk.backends.local.system.submit_lock import lock_path, submission
from gkeml_sdk.errors import (
    ConfigError,
    GkemlError,
    NotFoundError,
    RunExistsError,
    RunTimeoutError,
    SpecError,
    excerpt,
)
from gkeml_sdk.runs.explain.explanation import Preview
from gkeml_sdk.runs.explain.local_reasons import preview_local
from gkeml_sdk.runs.handle import FailureCause, Run, RunState, RunStatus
from gkeml_sdk.runs.retry import RetryPolicy
from gkeml_sdk.runs.unreadable import UnreadableRun
from gkeml_sdk.training.model import TrainingJob

if TYPE_CHECKING:
    from gkeml_sdk.serving.model import ServeModel

log = logging.getLogger(__name__)


class LocalBackend:
    """Runs jobs as local processes (no containers, no cluster), one per node (or per node and
    local rank with `LocalOptions(spawn_procs=True)`). A detached supervisor owns each run,
    so it survives the notebook kernel; state, logs and checkpoints live in
    `<run_dir>/<namespace>/<name>/`.

    `run_dir` defaults to `$GKEML_RUN_DIR`, else `~/.gkeml/runs`. `options` apply to every
    submission unless `submit(..., options=...)` overrides them. A command starting with
    `python` runs with this interpreter, so the run sees the same installed packages.

    Example:
        >>> from gkeml_sdk import TrainingJob
        >>> from gkeml_sdk.backends.local import LocalBackend, LocalOptions
        >>> backend = LocalBackend(run_dir="/tmp/runs", options=LocalOptions(chaos_after=5))
        >>> job = TrainingJob(name="hi", command=["python", "-c", "print(1)"])
        >>> run = backend.submit(job)  # doctest: +SKIP
        >>> run.wait(timeout=60).state  # doctest: +SKIP
        <RunState.SUCCEEDED: 'Succeeded'>
    """

    def __init__(
        self,
        run_dir: str | Path | None = None,
        namespace: str | None = None,
        *,
        options: LocalOptions | None = None,
        volumes: Mapping[str, str | Path] | None = None,
    ) -> None:
        self.root = resolve_run_root(run_dir)
        self.volumes = dict(volumes or {})
        if namespace is not None:
            check_store_name("namespace", namespace)
        self.namespace = namespace
        self.options = options or LocalOptions()

    def submit(
        self,
        job: TrainingJob,
        retry: RetryPolicy | None = None,
        *,
        options: LocalOptions | None = None,
    ) -> LocalRun:
        """Start `job` and return its handle without waiting.

        A finished run of the same name is replaced (its directory, checkpoints included);
        an active one is a conflict, as on Kubernetes. `retry` has no local meaning (there is
        no infrastructure to lose) and is ignored.
        """
        if not job.command:
            raise SpecError(
                f"job {job.name!r} has no command",
                rule="a local run executes the command itself; there is no image entrypoint",
                fix="TrainingJob(..., command=['python', 'train.py']) or TrainingJob.from_code()",
                field="command",
            )
        if retry is not None:
            log.debug("retry policy ignored by the local backend")
        ignored = _cluster_only(job)
        if ignored:
            log.info("local run %s: %s ignored locally (GKE only)", job.name, ignored)
        # Before anything is written: a missing secret fails the submit, not the run.
        secrets = secret_values(job, os.environ)
        check_secrets_stay_out_of_argv(job)
        folders = volume_folders(job, self.root, self.volumes)
        namespace = self.namespace or job.namespace
        path = run_path(self.root, namespace, job.name)
        # One submission per name at a time: a second waits here, then finds this run active
        # (a 409) or finished (replaced), never a half-written directory.
        try:
            with submission(path):
                submitted = self._submit_locked(job, namespace, path, secrets, folders, options)
        except OSError as exc:
            raise _disk_error(f"submit local run {job.name!r}", path, exc) from None
        return LocalRun(path, submitted)

    def _submit_locked(
        self,
        job: TrainingJob,
        namespace: str,
        path: Path,
        secrets: dict[str, str],
        folders: dict[str, str],
        options: LocalOptions | None,
    ) -> float:
        """Write and start the run; returns when it was submitted (its state's `created`)."""
        self._replace_finished(namespace, job.name)
        run = RunDir(path)
        record: LocalRunState | None = None
        try:
            with supervisor_launch(path, secrets):
                record = write_run(job, namespace, run, folders, options or self.options)
        except GkemlError as exc:
            if record is None:  # raised before the launch: nothing to record it in
                raise
            record.move(
                RunStatus(
                    RunState.FAILED, "SupervisorNotStarted", str(exc), FailureCause.INFRASTRUCTURE
                )
            )
            run.write(record)
            raise
        except OSError:
            # A directory this submit could not finish (a full disk): nothing runs in it, and
            # removing it gives the space back.
            with contextlib.suppress(OSError, GkemlError):
                remove_run_dir(self.root, namespace, job.name)
            raise
        return record.created

    def preview(self, job: TrainingJob) -> Preview:
        """Locally a job never queues: it starts at once as processes on this machine."""
        return preview_local(len(slots(job, self.options.spawn_procs)))

    def runs(self) -> list[Run]:
        """Every local run (of this backend's namespace, or all), newest first; a run whose
        files cannot be read is listed last, as UNREADABLE with why."""
        found: list[tuple[float, LocalRun]] = []
        unreadable: list[Run] = []
        for namespace in self._namespaces():
            for path in _entries(namespace):
                try:
                    run = LocalRun.of(path)
                    run.record()  # what its state needs: state.json, supervisor.json
                except NotFoundError:
                    continue  # being created or replaced, or not a run directory
                except GkemlError as exc:  # damaged, or written by a newer gkeml
                    unreadable.append(UnreadableRun(path.name, namespace.name, exc))
                    continue
                found.append((run.submitted or 0.0, run))
        found.sort(key=lambda item: item[0], reverse=True)
        return [run for _, run in found] + unreadable

    def get_run(self, name: str) -> LocalRun:
        """The run called `name`; raises `NotFoundError` when there is none. The handle names
        this submission of the name (see `LocalRun`); when its state cannot be read, the
        handle's reads raise why, and `delete(name)` still removes it."""
        check_store_name("name", name)
        for namespace in self._namespaces():
            path = run_path(self.root, namespace.name, name)
            if RunDir(path).holds_state:
                try:
                    return LocalRun.of(path)
                except NotFoundError:
                    continue  # removed since the check
                except GkemlError:
                    return LocalRun(path)
        raise NotFoundError(
            f"get local run {name!r}",
            message=f"no run of that name under {self.root}",
            hint="list the runs with Client(backend='local').runs()",
        )

    def wait_all(self, runs: list[Run], timeout: float | None) -> list[RunStatus]:
        """Wait until every run is terminal; `RunTimeoutError` names those still running."""
        deadline = None if timeout is None else time.monotonic() + timeout
        # One after the other: each wait ends when its run does, and a run that ended first
        # is seen as ended when its turn comes.
        for run in runs:
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            try:
                run.wait(timeout=left)
            except RunTimeoutError:
                break
        states = [run.state for run in runs]
        busy = [r.name for r, s in zip(runs, states, strict=True) if not s.terminal]
        if busy:
            raise RunTimeoutError(f"runs still active after {timeout:g} s: {', '.join(busy)}")
        return states

    def serve(self, svc: ServeModel) -> NoReturn:
        """Model servers need a cluster: always a `ConfigError` saying what would work."""
        raise ConfigError(
            f"the local backend cannot serve models (ServeModel {svc.name!r}): serve on a "
            "cluster with Client(), or see the manifests with svc.compile()"
        )

    def delete(self, name: str) -> None:
        """Cancel the run if it is active, then remove its directory (logs, checkpoints). A
        run whose files are damaged is deleted too. Holds the name's submission lock, so a
        submit of the same name runs before or after, never into a directory being removed."""
        check_store_name("name", name)
        for namespace in self._namespaces():
            path = run_path(self.root, namespace.name, name)
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
            message=f"no run of that name under {self.root}",
            hint="list the runs with Client(backend='local').runs()",
        )

    def _delete_locked(self, path: Path) -> None:
        try:
            LocalRun(path).stop_locked()
        except NotFoundError:
            pass  # no state left to say what runs: nothing gkeml can stop
        except GkemlError:
            _stop_unreadable(RunDir(path))
        remove_run_dir(self.root, path.parent.name, path.name)

    def _namespaces(self) -> list[Path]:
        if self.namespace is not None:
            folder = self.root / self.namespace
            return [folder] if folder.is_dir() and not folder.is_symlink() else []
        if not self.root.is_dir():
            return []
        return _entries(self.root)

    def _replace_finished(self, namespace: str, name: str) -> None:
        path = run_path(self.root, namespace, name)
        # No state, or no supervisor while we hold the submission lock: a submission that
        # died half way (its lock went with it); nothing runs there.
        if not RunDir(path).holds_state or RunDir(path).read_supervisor() is None:
            if path.exists():
                remove_run_dir(self.root, namespace, name)
            return
        existing = LocalRun(path)
        status = existing.state
        if not status.terminal:
            raise RunExistsError(
                f"submit local run {path.name!r}",
                message=f"a run of that name is {status.state.value}",
                hint=f"wait for it, cancel it with Client(backend='local').get_run({name!r})"
                ".cancel(), or choose another name",
            )
        existing.stop_locked()  # what a lost supervisor left running goes with its directory
        remove_run_dir(self.root, namespace, name)

    def __repr__(self) -> str:
        return f"LocalBackend(run_dir={str(self.root)!r})"


def _stop_unreadable(run: RunDir) -> None:
    """Stop the supervisor of a run whose state cannot be read, if its own file names a live
    one: it stops the processes it started (their records are in the unreadable state)."""
    try:
        supervisor = run.read_supervisor()
    except GkemlError:
        return  # nothing proves which process is its supervisor: none is signalled
    if supervisor is not None:
        run.request_cancel()
        stop_supervisor(supervisor, DEFAULT_GRACE_SECONDS + CANCEL_MARGIN_SECONDS)


def _disk_error(action: str, path: Path, exc: OSError) -> ConfigError:
    """A run directory this machine could not write, as a `ConfigError` naming its disk."""
    full = exc.errno in (errno.ENOSPC, errno.EDQUOT)
    why = "the disk holding it is full" if full else "it cannot be written"
    return ConfigError(
        f"{action}: {why} ({exc.strerror}, {excerpt(str(exc.filename or path))}); free space "
        f"on the file system of {path.parent.parent} or choose another run_dir (GKEML_RUN_DIR)"
    )


def _cluster_only(job: TrainingJob) -> str:
    """What of `job` only a GKE node has: its GPUDirect network stack and DRA claims."""
    parts = []
    stack = job.network_choice.stack
    if stack is not None:
        parts.append(f"{stack.display} networking")
    if job.hardware.device_requests():
        parts.append("DRA device claims")
    return " and ".join(parts)


def _entries(folder: Path) -> list[Path]:
    # Only real directories with store names: a link or a stray file is no run of ours.
    return sorted(
        p
        for p in folder.iterdir()
        if STORE_NAME.fullmatch(p.name) and p.is_dir() and not p.is_symlink()
    )
