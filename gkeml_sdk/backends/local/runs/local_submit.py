"""Submitting a local run: check what only the submitter can (a command, secrets, volume
folders), then, holding the name's submission lock, replace a finished run of that name, write
the run directory and launch its detached supervisor. An active run of that name is a
conflict, as on a cluster."""

from __future__ import annotations

import contextlib
import errno
import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from gkeml_sdk.backends.local.plan.local_environment import (
    check_secrets_stay_out_of_argv,
    secret_values,
)
from gkeml_sdk.backends.local.plan.local_options import LocalOptions
from gkeml_sdk.backends.local.plan.local_volumes import volume_folders
from gkeml_sdk.backends.local.runs.run_reads import read_run
from gkeml_sdk.backends.local.runs.stopping import stop_run
from gkeml_sdk.backends.local.store.run_files import write_run
from gkeml_sdk.backends.local.store.run_state import LocalRunState
from gkeml_sdk.backends.local.store.run_store import RunDir
from gkeml_sdk.backends.local.supervision.detach import supervisor_launch
from gkeml_sdk.backends.local.system.confined import remove_run_dir, run_path
from gkeml_sdk.backends.local.system.submit_lock import submission
from gkeml_sdk.errors import ConfigError, GkemlError, RunExistsError, SpecError, excerpt
from gkeml_sdk.runs.states import FailureCause, RunState, RunStatus
from gkeml_sdk.training.model import TrainingJob

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class RunPlace:
    """Where a service's runs go: the run root, the namespace folder (None: each job's own),
    the folders named volumes map to, and the `LocalOptions` of every submission."""

    root: Path
    namespace: str | None
    volumes: Mapping[str, str | Path]
    options: LocalOptions


def submit_run(
    place: RunPlace, job: TrainingJob, options: LocalOptions | None
) -> tuple[Path, float]:
    """Start `job` (with `options` instead of the place's when given) without waiting; its run
    directory and when it was submitted (its state's `created`). A finished run of the same
    name is replaced (its directory, checkpoints included); an active one is a
    `RunExistsError`."""
    if not job.command:
        raise SpecError(
            f"job {job.name!r} has no command",
            rule="a local run executes the command itself; there is no image entrypoint",
            fix="TrainingJob(..., command=['python', 'train.py']) or TrainingJob.from_code()",
            field="command",
        )
    if (options or place.options).spawn_procs and job.framework in ("torch", "deepspeed"):
        raise SpecError(
            f"LocalOptions(spawn_procs=True) with framework={job.framework!r}",
            rule="torchrun starts NPROC_PER_NODE processes per node itself; spawning them "
            "too would start each rank NPROC_PER_NODE times",
            fix="LocalOptions(spawn_procs=False) (the default) with a framework preset",
            field="spawn_procs",
        )
    ignored = _cluster_only(job)
    if ignored:
        log.info("local run %s: %s ignored locally (GKE only)", job.name, ignored)
    # Before anything is written: a missing secret fails the submit, not the run.
    secrets = secret_values(job, os.environ)
    check_secrets_stay_out_of_argv(job)
    folders = volume_folders(job, place.root, dict(place.volumes))
    namespace = place.namespace or job.namespace
    path = run_path(place.root, namespace, job.name)
    # One submission per name at a time: a second waits here, then finds this run active
    # (a 409) or finished (replaced), never a half-written directory.
    try:
        with submission(path):
            _replace_finished(place.root, namespace, job.name)
            created = _write_and_launch(place, job, namespace, secrets, folders, options)
    except OSError as exc:
        raise _disk_error(f"submit local run {job.name!r}", path, exc) from None
    return path, created


def _write_and_launch(
    place: RunPlace,
    job: TrainingJob,
    namespace: str,
    secrets: dict[str, str],
    folders: dict[str, str],
    options: LocalOptions | None,
) -> float:
    run = RunDir(run_path(place.root, namespace, job.name))
    record: LocalRunState | None = None
    try:
        with supervisor_launch(Path(run.path), secrets):
            record = write_run(job, namespace, run, folders, options or place.options)
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
            remove_run_dir(place.root, namespace, job.name)
        raise
    return record.created


def _replace_finished(root: Path, namespace: str, name: str) -> None:
    path = run_path(root, namespace, name)
    run = RunDir(path)
    # No state, or no supervisor while we hold the submission lock: a submission that
    # died half way (its lock went with it); nothing runs there.
    if not run.holds_state or run.read_supervisor() is None:
        if path.exists():
            remove_run_dir(root, namespace, name)
        return
    status = read_run(run, None, locked=True).status
    if not status.terminal:
        raise RunExistsError(
            f"submit local run {name!r}",
            message=f"a run of that name is {status.state.value}",
            hint=f"wait for it, cancel it with Client(backend='local').get_run({name!r})"
            ".cancel(), or choose another name",
        )
    stop_run(run, None)  # what a lost supervisor left running goes with its directory
    remove_run_dir(root, namespace, name)


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
