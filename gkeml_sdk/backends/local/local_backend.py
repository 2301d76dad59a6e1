"""`LocalBackend`: runs a `TrainingJob` as processes on this machine, with the same
environment contract as on GKE, in run directories that outlive the Python process. Runs go
through its `LocalRunService` (the `Client` makes `Run` handles over it from the snapshots it
returns: the backend never makes or calls a handle); it previews jobs and refuses to serve."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

from gkeml_sdk.backends.local.plan.local_environment import slots
from gkeml_sdk.backends.local.plan.local_options import LocalOptions, resolve_run_root
from gkeml_sdk.backends.local.runs.local_service import LocalRunService
from gkeml_sdk.backends.local.runs.local_submit import RunPlace
from gkeml_sdk.backends.local.system.confined import check_store_name
from gkeml_sdk.errors import ConfigError
from gkeml_sdk.runs.explain.explanation import Preview
from gkeml_sdk.runs.explain.local_reasons import preview_local
from gkeml_sdk.runs.retry import RetryPolicy
from gkeml_sdk.runs.service import RunSnapshot
from gkeml_sdk.training.model import TrainingJob

if TYPE_CHECKING:
    from gkeml_sdk.serving.model import ServeModel


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
        >>> snap = backend.submit(job)  # doctest: +SKIP
        >>> backend.service.wait([snap.ref], timeout=60)[0].state  # doctest: +SKIP
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
        self.service = LocalRunService(RunPlace(self.root, namespace, self.volumes, self.options))

    def submit(
        self,
        job: TrainingJob,
        retry: RetryPolicy | None = None,
        *,
        options: LocalOptions | None = None,
    ) -> RunSnapshot:
        """Start `job` without waiting; its submission as it is right after.

        A finished run of the same name is replaced (its directory, checkpoints included);
        an active one is a conflict, as on Kubernetes. `retry` has no local meaning (there is
        no infrastructure to lose) and is ignored; `options` replace the backend's for this run.
        """
        return self.service.submit(job, retry, options=options)

    def preview(self, job: TrainingJob) -> Preview:
        """Locally a job never queues: it starts at once as processes on this machine."""
        return preview_local(len(slots(job, self.options.spawn_procs)))

    def runs(self) -> list[RunSnapshot]:
        """Every local run (of this backend's namespace, or all), newest first; a run whose
        files cannot be read is listed last, as UNREADABLE with why."""
        return self.service.list_runs()

    def get_run(self, name: str) -> RunSnapshot:
        """The current submission of the run called `name`; raises `NotFoundError` when there
        is none, and why when its state cannot be read (`delete(name)` still removes it)."""
        return self.service.find(name)

    def serve(self, svc: ServeModel) -> NoReturn:
        """Model servers need a cluster: always a `ConfigError` saying what would work."""
        raise ConfigError(
            f"the local backend cannot serve models (ServeModel {svc.name!r}): serve on a "
            "cluster with Client(), or see the manifests with svc.compile()"
        )

    def delete(self, name: str) -> None:
        """Cancel the run if it is active, then remove its directory (logs, checkpoints); a
        run whose files are damaged is deleted too (see `LocalRunService.delete`)."""
        self.service.delete(name)

    def __repr__(self) -> str:
        return f"LocalBackend(run_dir={str(self.root)!r})"
