"""`KubernetesBackend`: what `Client(kubernetes=KubernetesSettings(...))` talks to. It connects
to the cluster once; runs go through its `KubeRunService` (the `Client` makes `Run` handles over
it from the snapshots it returns: the backend never makes or calls a handle), and it previews
jobs and serves models."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from gkeml_sdk.backends.kubernetes.api.config import KubernetesSettings, connect
from gkeml_sdk.backends.kubernetes.api.kube import KubeClient
from gkeml_sdk.backends.kubernetes.api.streams import SharedStreams
from gkeml_sdk.backends.kubernetes.api.transport import Transport
from gkeml_sdk.backends.kubernetes.explain.diagnosis import preview_job
from gkeml_sdk.backends.kubernetes.run_service import KubeRunService
from gkeml_sdk.backends.kubernetes.runs.attempts import Attempts
from gkeml_sdk.backends.kubernetes.runs.liveness import LEASE_READ_SECONDS, ControllerWatch
from gkeml_sdk.backends.kubernetes.runs.run_records import RunRecords
from gkeml_sdk.backends.kubernetes.setup.preflight import Preflight
from gkeml_sdk.errors import ConfigError
from gkeml_sdk.runs.retry import RetryPolicy
from gkeml_sdk.runs.service import ProgressCallback, RunRef, RunSnapshot
from gkeml_sdk.runs.states import RunStatus
from gkeml_sdk.training.model import TrainingJob

if TYPE_CHECKING:
    from gkeml_sdk.backends.kubernetes.serving.serve_handle import ServeHandle
    from gkeml_sdk.runs.explain.explanation import Preview
    from gkeml_sdk.serving.model import ServeModel


class KubernetesBackend:
    """The `Client(kubernetes=KubernetesSettings(...))` implementation.

    Example:
        >>> backend = KubernetesBackend(KubernetesSettings(namespace="ml"))  # doctest: +SKIP
        >>> backend.get_run("llama-ft").status.state  # doctest: +SKIP
        <RunState.RUNNING: 'Running'>
    """

    def __init__(self, settings: KubernetesSettings | None = None) -> None:
        settings = settings or KubernetesSettings()
        api, default_namespace = connect(
            kubeconfig=settings.kubeconfig, context=settings.context, api_client=settings.api_client
        )
        self.settings = settings
        self.namespace = settings.namespace or default_namespace
        self.transport = Transport(
            api, api_retry=settings.api_retry, request_timeout=settings.request_timeout
        )
        self.kube = KubeClient(self.transport)
        self.preflight = Preflight(self.kube, quotas=settings.quotas)
        self.attempts = Attempts(self.kube, deletion_timeout=settings.deletion_timeout)
        # One stream per kind and namespace for every wait, log follower and controller of
        # this backend, whatever thread follows it.
        self.streams = SharedStreams(self.kube, watch_seconds=settings.watch_seconds)
        self.service = KubeRunService(
            self.kube,
            self.streams,
            namespace=self.namespace,
            attempts=self.attempts,
            controller=ControllerWatch(
                self.kube, settings.controller_namespace, fresh_for=LEASE_READ_SECONDS
            ),
            worker_streams=_worker_streams,
        )

    @property
    def controller(self) -> ControllerWatch:
        """Whether a run controller acts for a namespace (judged from its Lease's changes)."""
        return self.service.controller

    @property
    def records(self) -> RunRecords:
        """The run records' reads and conditional writes."""
        return self.service.records

    def submit(self, job: TrainingJob, retry: RetryPolicy | None) -> RunSnapshot:
        """Check, record and create attempt 1 of `job`; idempotent for an identical spec."""
        if "namespace" not in job.model_fields_set:
            job = job.with_changes(namespace=self.namespace)
        self.preflight.check(job)
        return self.service.submit(job, retry)

    def runs(self) -> list[RunSnapshot]:
        """Runs recorded in the namespace, newest first, each with its state read; then those
        whose record cannot be read, listed as UNREADABLE with why. The same few paginated
        lists whatever the number of runs (see `run_listing`)."""
        return self.service.list_runs()

    def get_run(self, name: str) -> RunSnapshot:
        """The run called `name` in the namespace, resumed where its record left it."""
        return self.service.find(name)

    def wait_all(
        self,
        refs: list[RunRef],
        timeout: float | None,
        progress: bool | ProgressCallback = False,
        stop: threading.Event | None = None,
    ) -> list[RunStatus]:
        """Follow the runs `refs` name until each is final (see `KubeRunService.wait`)."""
        return self.service.wait(refs, timeout, progress, stop)

    @property
    def watch_connections(self) -> int:
        """Watch connections opened so far by this backend's streams (for diagnostics)."""
        return self.streams.connections

    def preview(self, job: TrainingJob) -> Preview:
        """What Kueue would do with `job` now, from one read of its queues (submits nothing)."""
        return preview_job(self.kube, job, self.namespace)

    def serve(self, svc: ServeModel) -> ServeHandle:
        """Apply a model server's objects and return its handle (see `serving`)."""
        from gkeml_sdk.backends.kubernetes.serving.serve_handle import serve

        return serve(self, svc)


def _worker_streams(worker: object) -> SharedStreams:
    """The shared streams of a MultiKueue worker cluster reached by `worker`."""
    if not isinstance(worker, KubernetesSettings):
        raise ConfigError(
            f"worker_logs needs the worker cluster's KubernetesSettings, not {worker!r}: "
            "for example KubernetesSettings(context='worker-1')"
        )
    return KubernetesBackend(worker).streams
