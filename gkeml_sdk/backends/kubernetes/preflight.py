"""Checks before a submission, so a mistake fails at once with what to do instead of leaving
a job that Kueue never admits. Results are cached per client."""

from __future__ import annotations

from collections.abc import Callable

from gkeml_sdk.backends.kubernetes.capacity_check import check_provisioning_queue
from gkeml_sdk.backends.kubernetes.kube import KubeClient
from gkeml_sdk.backends.kubernetes.resources import resource
from gkeml_sdk.backends.kubernetes.setup_advice import setup_advice
from gkeml_sdk.core import kinds
from gkeml_sdk.errors import ConfigError, NotFoundError
from gkeml_sdk.scheduling.catalog import mode
from gkeml_sdk.training.model import TrainingJob

INSTALL = {
    kinds.JOBSET: "JobSet is not installed: kubectl apply --server-side -f "
    "https://github.com/kubernetes-sigs/jobset/releases/download/v0.12.0/manifests.yaml",
    kinds.KUEUE: "Kueue (v0.16 or newer) is not installed: kubectl apply "
    "--server-side -f https://github.com/kubernetes-sigs/kueue/releases/download/v0.19.2/"
    "manifests.yaml",
}


class Preflight:
    """Namespace, CRDs, LocalQueue and WorkloadPriorityClass checks for a job.

    Example:
        >>> Preflight(kube).check(job)  # doctest: +SKIP
    """

    def __init__(self, kube: KubeClient) -> None:
        self.kube = kube
        self._passed: set[tuple[str, ...]] = set()

    def check(self, job: TrainingJob) -> None:
        """Raise `ConfigError` (or the API's own error, e.g. 403) when `job` cannot run."""
        apis = [kinds.KUEUE]
        if job.uses_jobset:
            apis.append(kinds.JOBSET)
        for api in apis:
            self._once(("api", api), lambda api=api: self._api(api))
        self.check_namespace(job.namespace)
        self.check_queue(job.namespace, job.queue, advice=lambda: setup_advice(job))
        if mode(job.provisioning).provisioning_class is not None:
            key = ("provisioning", job.namespace, job.queue)
            self._once(key, lambda: check_provisioning_queue(self.kube, job))
        if job.placement is not None:
            from gkeml_sdk.backends.kubernetes.topology_check import check_topology_queue

            topology_key = ("topology", job.namespace, job.queue, repr(job.accelerator))
            self._once(topology_key, lambda: check_topology_queue(self.kube, job))
        if job.priority:
            priority = job.priority
            self._once(("priority", priority), lambda: self._priority(priority))

    def check_namespace(self, namespace: str) -> None:
        """Raise `ConfigError` when the namespace does not exist."""
        self._once(("namespace", namespace), lambda: self._namespace(namespace))

    def check_queue(
        self, namespace: str, queue: str, advice: Callable[[], str] | None = None
    ) -> None:
        """Raise `ConfigError` (listing the ones that exist) when the LocalQueue is missing."""
        self._once(("queue", namespace, queue), lambda: self._queue(namespace, queue, advice))

    def _once(self, key: tuple[str, ...], check: object) -> None:
        if key not in self._passed:
            check()  # type: ignore[operator]
            self._passed.add(key)

    def _api(self, api: str) -> None:
        if self.kube.raw(f"/apis/{api}", action=f"discover {api}", missing_ok=True) is None:
            raise ConfigError(INSTALL[api])

    def _namespace(self, namespace: str) -> None:
        try:
            self.kube.get(resource(kinds.CORE, "Namespace"), namespace)
        except NotFoundError:
            raise ConfigError(
                f"namespace {namespace!r} does not exist: create it "
                f"(kubectl create namespace {namespace}) or submit to one that exists"
            ) from None

    def _queue(self, namespace: str, queue: str, advice: Callable[[], str] | None) -> None:
        queues = resource(kinds.KUEUE, "LocalQueue")
        if self.kube.find(queues, queue, namespace) is not None:
            return
        existing, _ = self.kube.list(queues, namespace)
        names = ", ".join(sorted(q["metadata"]["name"] for q in existing)) or "none"
        raise ConfigError(
            f"LocalQueue {queue!r} does not exist in namespace {namespace!r}, so Kueue "
            f"would never admit the job. LocalQueues there: {names}. Pass queue= one of them, "
            "or ask your platform team for a LocalQueue"
            + (f"; or {advice()}" if advice is not None else "")
        )

    def _priority(self, priority: str) -> None:
        classes = resource(kinds.KUEUE, "WorkloadPriorityClass")
        if self.kube.find(classes, priority) is not None:
            return
        existing, _ = self.kube.list(classes)
        names = ", ".join(sorted(c["metadata"]["name"] for c in existing)) or "none"
        raise ConfigError(
            f"WorkloadPriorityClass {priority!r} does not exist. Existing: {names}. "
            "Pass priority= one of them or leave it unset"
        )
