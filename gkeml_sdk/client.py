"""`Client`: one facade over interchangeable backends that take the same job and return the
same kind of run handle."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

from gkeml_sdk.errors import ConfigError
from gkeml_sdk.run import Run, RunStatus
from gkeml_sdk.spec.job import TrainingJob
from gkeml_sdk.spec.retry import RetryPolicy

if TYPE_CHECKING:
    from gkeml_sdk.cluster.serving.handle import ServeHandle
    from gkeml_sdk.spec.serving.model import ServeModel

BackendName = Literal["kubernetes", "local"]


class Backend(Protocol):
    """What every backend offers; `Client` delegates to one of these."""

    def submit(self, job: TrainingJob, retry: RetryPolicy | None) -> Run: ...

    def runs(self) -> list[Run]: ...

    def get_run(self, name: str) -> Run: ...

    def wait_all(self, runs: list[Run], timeout: float | None) -> list[RunStatus]: ...


class Client:
    """Submit and follow runs on GKE (`backend="kubernetes"`, the default) or on this machine
    (`backend="local"`). `backend_options` go to the backend, e.g. `retry=RetrySettings(...)`
    and `watch_seconds=` for Kubernetes.

    Example:
        >>> from gkeml_sdk import Client, TrainingJob
        >>> client = Client(backend="local")  # doctest: +SKIP
        >>> job = TrainingJob(name="hello", command=["python", "-V"])
        >>> run = client.submit(job)  # doctest: +SKIP
        >>> run.wait().state  # doctest: +SKIP
        <RunState.SUCCEEDED: 'Succeeded'>
    """

    def __init__(
        self,
        backend: BackendName = "kubernetes",
        *,
        namespace: str | None = None,
        context: str | None = None,
        kubeconfig: str | Path | None = None,
        api_client: Any = None,
        run_dir: str | Path | None = None,
        **backend_options: Any,
    ) -> None:
        self.backend_name = backend
        self._backend: Backend
        if backend == "local":
            from gkeml_sdk.local.backend import LocalBackend

            self._backend = LocalBackend(run_dir=run_dir, namespace=namespace, **backend_options)
        elif backend == "kubernetes":
            from gkeml_sdk.cluster.backend import KubernetesBackend

            self._backend = KubernetesBackend(
                namespace=namespace,
                context=context,
                kubeconfig=kubeconfig,
                api_client=api_client,
                **backend_options,
            )
        else:
            raise ConfigError(
                f"unknown backend {backend!r}: use backend='kubernetes' (GKE through your "
                "kubeconfig) or backend='local' (processes on this machine)"
            )

    def submit(self, job: TrainingJob, *, retry: RetryPolicy | None = None) -> Run:
        """Start `job` and return its run handle (does not wait)."""
        return self._backend.submit(job, retry)

    def runs(self) -> list[Run]:
        """Runs submitted by gkeml (in the namespace, or the local run directory), newest first."""
        return self._backend.runs()

    def get_run(self, name: str) -> Run:
        """The run called `name`; raises `NotFoundError` when there is none."""
        return self._backend.get_run(name)

    def serve(self, svc: ServeModel) -> ServeHandle:
        """Deploy a model server (Kubernetes backend only) and return its handle."""
        serve = getattr(self._backend, "serve", None)
        if serve is None:
            raise ConfigError(
                f"the {self.backend_name} backend cannot serve models: use Client() with a "
                "cluster, or svc.compile() to see the manifests"
            )
        handle: ServeHandle = serve(svc)
        return handle

    def wait_all(self, runs: list[Run], timeout: float | None = None) -> list[RunStatus]:
        """Wait for several runs at once (sharing watch streams on Kubernetes)."""
        return self._backend.wait_all(runs, timeout)

    def __repr__(self) -> str:
        return f"Client(backend={self.backend_name!r})"
