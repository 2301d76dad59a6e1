"""Checks before a submission, so a mistake fails at once with what to do instead of leaving
a job that Kueue never admits, or one whose checkpoints a preemption would lose. What passed is
remembered per client for `PREFLIGHT_SECONDS`, so a client reused (a notebook submitting job
after job) pays only its submissions' writes, and notices a queue deleted a minute later."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from gkeml_sdk.backends.kubernetes.api.config import JobQuotas
from gkeml_sdk.backends.kubernetes.api.kube import KubeClient
from gkeml_sdk.backends.kubernetes.api.queue_reads import list_pages
from gkeml_sdk.backends.kubernetes.api.resources import resource
from gkeml_sdk.backends.kubernetes.setup.capacity_check import check_provisioning_queue
from gkeml_sdk.backends.kubernetes.setup.setup_advice import setup_advice
from gkeml_sdk.core import kinds
from gkeml_sdk.core.objects import Obj
from gkeml_sdk.errors import ClusterError, ConfigError, NotFoundError
from gkeml_sdk.scheduling.catalog import mode
from gkeml_sdk.storage.checkpoints import durable_volume
from gkeml_sdk.training.model import TrainingJob
from gkeml_sdk.training.rules import checkpoint_problem

log = logging.getLogger(__name__)
LOCAL_QUEUES = resource(kinds.KUEUE, "LocalQueue")
CLUSTER_QUEUES = resource(kinds.KUEUE, "ClusterQueue")
COHORTS = resource(kinds.KUEUE, "Cohort")

PREFLIGHT_SECONDS = 60.0  # how long a passed check (and a queue's preemption policy) is trusted

INSTALL = {
    kinds.JOBSET: "JobSet is not installed: kubectl apply --server-side -f "
    "https://github.com/kubernetes-sigs/jobset/releases/download/v0.12.0/manifests.yaml",
    kinds.KUEUE: "Kueue (v0.16 or newer) is not installed: kubectl apply "
    "--server-side -f https://github.com/kubernetes-sigs/kueue/releases/download/v0.19.2/"
    "manifests.yaml",
}


class Preflight:
    """Namespace, CRDs, LocalQueue, WorkloadPriorityClass and (given `quotas`) project quota
    checks for a job; each check that passed is not made again for `fresh_for` seconds (on
    `clock`).

    Example:
        >>> Preflight(kube).check(job)  # doctest: +SKIP
    """

    def __init__(
        self,
        kube: KubeClient,
        *,
        fresh_for: float = PREFLIGHT_SECONDS,
        clock: Callable[[], float] = time.monotonic,
        quotas: JobQuotas | None = None,
    ) -> None:
        self.kube = kube
        self.quotas = quotas
        self.fresh_for, self._clock = fresh_for, clock
        self._passed: dict[tuple[str, ...], float] = {}  # check -> when it passed
        # (namespace, queue) -> (when read, why Kueue may preempt its workloads; None: unreadable).
        self._preemptors: dict[tuple[str, str], tuple[float, list[str] | None]] = {}

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
            from gkeml_sdk.backends.kubernetes.setup.topology_check import check_topology_queue

            topology_key = ("topology", job.namespace, job.queue, repr(job.accelerator))
            self._once(topology_key, lambda: check_topology_queue(self.kube, job))
        if job.priority:
            priority = job.priority
            self._once(("priority", priority), lambda: self._priority(priority))
        if self.quotas is not None:
            quotas = self.quotas
            # What the quotas are asked depends on the hardware, its count and the modes.
            asked = (repr(job.accelerator), str(job.nodes), str(job.spot), job.provisioning)
            quota_key = ("quota", *asked, ",".join(job.capacity), str(job.reservation))
            self._once(quota_key, lambda: _warn(quotas.for_job(job)))
        self.check_preemption(job)

    def check_preemption(self, job: TrainingJob) -> None:
        """Raise `SpecError` when `job` keeps its checkpoints in the pod (an emptyDir) on a
        queue whose ClusterQueues let Kueue preempt it: a preempted job starts again in new
        pods, as after a Spot reclaim. When the ClusterQueues cannot be read, log why the
        job may lose them instead (users are often not allowed to read ClusterQueues)."""
        if job.stateless or durable_volume(job.checkpoint_dir, job.volumes) is not None:
            return
        key = (job.namespace, job.queue)
        if not self._fresh(self._preemptors.get(key, (None,))[0]):
            now = self._clock()
            try:
                self._preemptors[key] = (now, preemptors(self.kube, *key))
            except ClusterError as exc:
                self._preemptors[key] = (now, None)
                log.warning(
                    "job %r keeps its checkpoints in an emptyDir, and whether queue %r lets "
                    "Kueue preempt it is unknown (%s): a preempted job starts again in new pods "
                    "without them. Set checkpoint_dir='gs://BUCKET/PATH' (or a claim), or "
                    "stateless=True when it keeps no state",
                    job.name,
                    job.queue,
                    exc,
                )
        reasons = self._preemptors[key][1]
        problem = checkpoint_problem(job, preempted="; ".join(reasons or []))
        if problem is not None:
            raise problem

    def check_namespace(self, namespace: str) -> None:
        """Raise `ConfigError` when the namespace does not exist."""
        self._once(("namespace", namespace), lambda: self._namespace(namespace))

    def check_queue(
        self, namespace: str, queue: str, advice: Callable[[], str] | None = None
    ) -> None:
        """Raise `ConfigError` (listing the ones that exist) when the LocalQueue is missing."""
        self._once(("queue", namespace, queue), lambda: self._queue(namespace, queue, advice))

    def _once(self, key: tuple[str, ...], check: object) -> None:
        if not self._fresh(self._passed.get(key)):
            check()  # type: ignore[operator]
            self._passed[key] = self._clock()

    def _fresh(self, since: float | None) -> bool:
        return since is not None and self._clock() - since < self.fresh_for

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


def _warn(sentences: list[str]) -> None:
    # A quota the job may wait for, or one not read: the submission goes on, said once.
    for sentence in sentences:
        log.warning("%s", sentence)


def preemptors(kube: KubeClient, namespace: str, queue: str) -> list[str]:
    """Why Kueue may preempt a workload of LocalQueue `queue`, one reason per ClusterQueue
    policy that allows it: its own ClusterQueue preempting for higher priorities
    (`withinClusterQueue`), and any other ClusterQueue of its cohort tree taking back lent
    quota (`reclaimWithinCohort`) or preempting while it borrows (`borrowWithinCohort`).
    [] when none does; `ClusterError` when the queues cannot be read.

    Example:
        >>> preemptors(kube, "ml", "team-a")[0]  # doctest: +SKIP
        "ClusterQueue 'acc-cq' preempts for higher-priority workloads (withinClusterQueue=...)"
    """
    local = kube.get(LOCAL_QUEUES, queue, namespace)
    name = str((local.get("spec") or {}).get("clusterQueue") or "")
    own = kube.get(CLUSTER_QUEUES, name)
    found = []
    within = _preemption(own).get("withinClusterQueue") or "Never"
    if within != "Never":
        found.append(
            f"ClusterQueue {name!r} preempts for higher-priority workloads "
            f"(withinClusterQueue={within})"
        )
    cohort = str((own.get("spec") or {}).get("cohortName") or "")
    if not cohort:
        return found
    root = _roots(kube)
    for other in list_pages(kube, CLUSTER_QUEUES):
        theirs = str((other.get("spec") or {}).get("cohortName") or "")
        other_name = other["metadata"]["name"]
        if other_name == name or not theirs or root(theirs) != root(cohort):
            continue
        policy = _preemption(other)
        reclaim = policy.get("reclaimWithinCohort") or "Never"
        borrowing = policy.get("borrowWithinCohort")
        borrow = (borrowing.get("policy") if isinstance(borrowing, dict) else None) or "Never"
        if reclaim != "Never":
            found.append(
                f"ClusterQueue {other_name!r} of cohort {theirs!r} takes back quota it lends "
                f"(reclaimWithinCohort={reclaim})"
            )
        if borrow != "Never":
            found.append(
                f"ClusterQueue {other_name!r} of cohort {theirs!r} preempts while it borrows "
                f"(borrowWithinCohort.policy={borrow})"
            )
    return found


def _preemption(cluster_queue: Obj) -> Obj:
    spec = cluster_queue.get("spec")
    found = spec.get("preemption") if isinstance(spec, dict) else None
    return found if isinstance(found, dict) else {}


def _roots(kube: KubeClient) -> Callable[[str], str]:
    """The root of a cohort in Kueue's cohort tree (Cohort objects name their parent): the
    ClusterQueues of one tree lend to and reclaim from each other."""
    try:
        cohorts = list_pages(kube, COHORTS)
    except NotFoundError:  # no Cohort API: every cohort is its own tree
        cohorts = []
    parent = {
        str(c["metadata"]["name"]): str((c.get("spec") or {}).get("parentName") or "")
        for c in cohorts
    }

    def root(cohort: str) -> str:
        seen = {cohort}
        while parent.get(cohort) and parent[cohort] not in seen:  # Kueue refuses cycles
            cohort = parent[cohort]
            seen.add(cohort)
        return cohort

    return root
