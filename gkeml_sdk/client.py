"""`Client`: one facade over interchangeable backends that take the same job and return the
same kind of run handle."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Literal, Protocol

from gkeml_sdk.errors import ConfigError
from gkeml_sdk.runs.explain.explanation import Preview
from gkeml_sdk.runs.handle import Run, RunStatus
from gkeml_sdk.runs.retry import RetryPolicy
from gkeml_sdk.runs.service import RunService, RunSnapshot
from gkeml_sdk.training.model import TrainingJob

if TYPE_CHECKING:
    from gkeml_sdk.backends.kubernetes.api.config import KubernetesSettings
    from gkeml_sdk.backends.kubernetes.api.kube import KubeClient
    from gkeml_sdk.backends.kubernetes.serving.serve_handle import ServeHandle
    from gkeml_sdk.backends.kubernetes.setup.setup_apply import SetupPlan
    from gkeml_sdk.backends.local.plan.local_options import LocalSettings
    from gkeml_sdk.serving.model import ServeModel
    from gkeml_sdk.setup.model import ClusterSetup

BackendName = Literal["kubernetes", "local"]
BACKENDS: tuple[BackendName, ...] = ("kubernetes", "local")


class Backend(Protocol):
    """What every backend offers; `Client` delegates to one of these and makes the `Run`
    handles over its `service` from the snapshots it returns."""

    @property
    def service(self) -> RunService: ...

    def submit(self, job: TrainingJob, retry: RetryPolicy | None) -> RunSnapshot: ...

    def runs(self) -> Sequence[RunSnapshot]: ...

    def get_run(self, name: str) -> RunSnapshot: ...

    def serve(self, svc: ServeModel) -> ServeHandle: ...

    def preview(self, job: TrainingJob) -> Preview: ...


class Client:
    """Submit and follow runs on GKE or on this machine. Say which with typed settings:

    - `Client()`: GKE through your kubeconfig, every setting at its default;
    - `Client(kubernetes=KubernetesSettings(namespace="ml", ...))`: GKE, with settings;
    - `Client(backend="local")` or `Client(local=LocalSettings(run_dir=..., ...))`: processes
      on this machine.

    Example:
        >>> from gkeml_sdk import Client, KubernetesSettings, LocalSettings, TrainingJob
        >>> client = Client(local=LocalSettings(run_dir="/tmp/gkeml-runs"))
        >>> client
        Client(backend='local')
        >>> job = TrainingJob(name="hello", command=["python", "-V"])
        >>> run = client.submit(job)  # doctest: +SKIP
        >>> run.wait().state  # doctest: +SKIP
        <RunState.SUCCEEDED: 'Succeeded'>
        >>> Client(backend="local", kubernetes=KubernetesSettings())  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        gkeml_sdk.errors.ConfigError: backend='local' with kubernetes= settings: drop backend=...
    """

    def __init__(
        self,
        backend: BackendName | None = None,
        *,
        kubernetes: KubernetesSettings | None = None,
        local: LocalSettings | None = None,
    ) -> None:
        self.backend_name: BackendName = _chosen(backend, kubernetes, local)
        self._backend: Backend
        if self.backend_name == "local":
            from gkeml_sdk.backends.local.local_backend import LocalBackend
            from gkeml_sdk.backends.local.plan.local_options import LocalSettings

            settings = local or LocalSettings()
            self._backend = LocalBackend(
                settings.run_dir,
                settings.namespace,
                options=settings.options,
                volumes=settings.volumes,
            )
        else:
            from gkeml_sdk.backends.kubernetes.backend import KubernetesBackend

            self._backend = KubernetesBackend(kubernetes)

    def submit(self, job: TrainingJob, *, retry: RetryPolicy | None = None) -> Run:
        """Start `job` and return its run handle (does not wait). `retry` resubmits the run
        after infrastructure loss (Kubernetes only; locally nothing is lost). On a cluster, a
        job that can lose its pods needs durable checkpoints (`TrainingJob.check_checkpoints`),
        and a `workdir=` is uploaded to its code bucket first (`backends.code_bucket`)."""
        if self.backend_name == "kubernetes":
            job.check_checkpoints(retry)
            from gkeml_sdk.backends.code_bucket import ship_workdir

            job = ship_workdir(job)  # before anything is created: a refused upload creates none
        return self._handle(self._backend.submit(job, retry))

    def preview(self, job: TrainingJob) -> Preview:
        """What Kueue would do with `job` if submitted now (fits, borrows, preempts whom, waits
        for how many, never fits), from one read of its queues; submits nothing.

        Example:
            >>> print(Client().preview(job))  # doctest: +SKIP
            Fits now: cluster queue acc-cq uses 0 of 16 nvidia.com/gpu in flavor acc-flavor ...
        """
        return self._backend.preview(job)

    def runs(self) -> list[Run]:
        """Runs submitted by gkeml (in the namespace, or the local run directory), newest first."""
        return [self._handle(snap) for snap in self._backend.runs()]

    def get_run(self, name: str) -> Run:
        """The run called `name`; raises `NotFoundError` when there is none."""
        return self._handle(self._backend.get_run(name))

    def serve(self, svc: ServeModel) -> ServeHandle:
        """Deploy a model server and return its handle (Kubernetes only: the local backend
        raises `ConfigError`)."""
        return self._backend.serve(svc)

    def wait_all(self, runs: list[Run], timeout: float | None = None) -> list[RunStatus]:
        """Wait for several runs at once (sharing watch streams on Kubernetes)."""
        return self._backend.service.wait([r.ref for r in runs], timeout)

    def _handle(self, snap: RunSnapshot) -> Run:
        return Run(self._backend.service, snap.ref)

    def plan_setup(self, setup: ClusterSetup) -> SetupPlan:
        """What applying `setup` would create or change on the cluster (reads only)."""
        from gkeml_sdk.backends.kubernetes.setup.setup_apply import plan_setup

        return plan_setup(self._kube("plan_setup"), setup)

    def apply_setup(
        self, setup: ClusterSetup, *, worker_kubeconfigs: Mapping[str, str] | None = None
    ) -> SetupPlan:
        """Server-side apply `setup`'s Kueue objects that differ from the cluster's;
        `worker_kubeconfigs` (MultiKueue worker name -> kubeconfig text) become the Secrets
        the manager's MultiKueueClusters read."""
        from gkeml_sdk.backends.kubernetes.setup.setup_apply import apply_setup

        return apply_setup(self._kube("apply_setup"), setup, worker_kubeconfigs or {})

    def __repr__(self) -> str:
        return f"Client(backend={self.backend_name!r})"

    def _kube(self, verb: str) -> KubeClient:
        kube: KubeClient | None = getattr(self._backend, "kube", None)
        if kube is None:
            raise ConfigError(
                f"{verb} sets up Kueue on a cluster; the local backend has none: use Client() "
                "or Client(kubernetes=KubernetesSettings(...))"
            )
        return kube


def _chosen(
    backend: str | None, kubernetes: KubernetesSettings | None, local: LocalSettings | None
) -> BackendName:
    """The backend the arguments name; a contradiction is a `ConfigError`, never a guess."""
    if backend is not None and backend not in BACKENDS:
        raise ConfigError(
            f"unknown backend {backend!r}: use backend='kubernetes' (GKE through your "
            "kubeconfig) or backend='local' (processes on this machine)"
        )
    if kubernetes is not None and local is not None:
        raise ConfigError(
            "Client takes one backend's settings: pass kubernetes=KubernetesSettings(...) "
            "or local=LocalSettings(...), not both"
        )
    given: BackendName | None = (
        "kubernetes" if kubernetes is not None else "local" if local is not None else None
    )
    if backend is not None and given is not None and backend != given:
        raise ConfigError(
            f"backend={backend!r} with {given}= settings: drop backend= (the settings say "
            f"which backend), or pass {backend}= settings instead"
        )
    if given is not None:
        return given
    return "local" if backend == "local" else "kubernetes"
