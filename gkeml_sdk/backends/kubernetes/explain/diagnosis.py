"""Read, in one pass, the objects `explain()` and `preview()` interpret: a run's job, Workload,
pods, events and ProvisioningRequests, and its LocalQueue, ClusterQueue, cohort, flavors,
priority classes and admission checks. Each read is best effort: what RBAC hides or a cluster
lacks (no Cohort CRD, no visibility API) is left out, never an error."""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from gkeml_sdk.backends.kubernetes.api.kube import KubeClient
from gkeml_sdk.backends.kubernetes.api.queue_reads import PAGE, Holders, list_pages, quota_holders
from gkeml_sdk.backends.kubernetes.api.resources import Resource, resource
from gkeml_sdk.backends.kubernetes.explain.preemptors import find_preemptor
from gkeml_sdk.backends.kubernetes.runs.attempts import job_resource
from gkeml_sdk.core import kinds
from gkeml_sdk.core.objects import Obj, name, uid
from gkeml_sdk.errors import ClusterError
from gkeml_sdk.runs.explain.explain_run import explain_run
from gkeml_sdk.runs.explain.explanation import Explanation, Preview
from gkeml_sdk.runs.explain.flavor_choice import with_landing_flavor
from gkeml_sdk.runs.explain.inputs import QueueObjects, RunObjects, queues_offering
from gkeml_sdk.runs.explain.preview import preview
from gkeml_sdk.runs.explain.reading import event_time
from gkeml_sdk.runs.workload import read_workload
from gkeml_sdk.scheduling.kueue import JOB_UID_LABEL
from gkeml_sdk.training.model import TrainingJob

if TYPE_CHECKING:
    from gkeml_sdk.backends.kubernetes.runs.track import RunTrack

log = logging.getLogger(__name__)
KUEUE = kinds.KUEUE
WORKLOADS = resource(KUEUE, "Workload")
LOCAL_QUEUES = resource(KUEUE, "LocalQueue")
CLUSTER_QUEUES = resource(KUEUE, "ClusterQueue")
FLAVORS = resource(KUEUE, "ResourceFlavor")
PRIORITIES = resource(KUEUE, "WorkloadPriorityClass")
CHECKS = resource(KUEUE, "AdmissionCheck")
COHORTS = Resource(KUEUE, "Cohort", "cohorts", namespaced=False)
EVENTS = resource(kinds.CORE, "Event")
PODS = resource(kinds.CORE, "Pod")
PROVISIONING = resource(kinds.PROVISIONING_REQUEST, "ProvisioningRequest")
EVENT_PODS = 8  # the most pods whose Events one explain reads
FIRST_PENDING = 1  # pending Workloads asked first for a run's place: the run itself, at the front


def queue_objects(
    kube: KubeClient, namespace: str, queue: str, *, waiting: str = ""
) -> QueueObjects:
    """The LocalQueue `queue` of `namespace` and everything behind it: the Workloads holding
    quota in its ClusterQueue and cohort (selected by the API server), and, for a run still
    waiting (its Workload's name: `waiting`), its place as Kueue's visibility API orders the
    queue, read up to that place (`pending_workloads`); only where that API is not served (or
    not allowed), the Workloads ahead of it from one page of its namespace's. What a waiting
    run's explanation reads does not grow with the Workloads pending behind it.

    Example:
        >>> queue_objects(kube, "ml", "team-a").cluster_queue["spec"]  # doctest: +SKIP
    """
    local_queues = _try(lambda: list_pages(kube, LOCAL_QUEUES, namespace), [])
    lq = next((q for q in local_queues if name(q) == queue), None)
    found = QueueObjects(queue, namespace, lq, local_queues=tuple(name(q) for q in local_queues))
    if lq is None:
        return found
    cq_name = str((lq.get("spec") or {}).get("clusterQueue") or "")
    cq = _try(lambda: kube.find(CLUSTER_QUEUES, cq_name), None) if cq_name else None
    cohort = str(((cq or {}).get("spec") or {}).get("cohortName") or "")
    members: tuple[Obj, ...] = ()
    offers = None  # which queue would take a job is said only from every ClusterQueue
    if cohort:  # no selector picks a cohort's members: ClusterQueues are few, list them
        every = _try(lambda: list_pages(kube, CLUSTER_QUEUES), None)
        members = tuple(
            q
            for q in every or []
            if (q.get("spec") or {}).get("cohortName") == cohort and name(q) != cq_name
        )
        offers = None if every is None else queues_offering(local_queues, every)
    holders = _try(
        lambda: quota_holders(kube, WORKLOADS, {cq_name, *map(name, members)}, namespace),
        Holders((), False),
    )
    workloads = {_key(w): w for w in holders.workloads}
    pending = pending_workloads(kube, namespace, queue, waiting) if waiting else None
    if waiting and pending is None:
        for w in _try(lambda: list_pages(kube, WORKLOADS, namespace, pages=1), []):
            workloads.setdefault(_key(w), w)
    return QueueObjects(
        queue,
        namespace,
        lq,
        cq,
        members,
        _try(lambda: kube.find(COHORTS, cohort), None) if cohort else None,
        {name(f): f for f in _try(lambda: list_pages(kube, FLAVORS), [])},
        tuple(workloads.values()),
        {name(p): int(p.get("value") or 0) for p in _try(lambda: list_pages(kube, PRIORITIES), [])},
        {name(c): c for c in _try(lambda: list_pages(kube, CHECKS), [])},
        found.local_queues,
        pending,
        quota_complete=holders.complete,
        offers=offers,
    )


def pending_workloads(
    kube: KubeClient, namespace: str, queue: str, workload: str = ""
) -> dict[str, Any] | None:
    """Kueue's visibility API answer for a LocalQueue, in Kueue's order (None when not served
    or not allowed): its first `PAGE` pending Workloads; with `workload` (one of them, by
    name), pages from `FIRST_PENDING` items on, each twice the last (Kueue's `offset` and
    `limit`), until it is found, the queue ends or `PAGE` items were read: what is read
    follows its place, not how many wait behind it."""
    path = (
        f"/apis/{kinds.KUEUE_VISIBILITY}/namespaces/{namespace}"
        f"/localqueues/{queue}/pendingworkloads"
    )

    def read(offset: int, limit: int) -> dict[str, Any] | None:
        query = [("limit", str(limit))] + ([("offset", str(offset))] if offset else [])
        answer = _try(
            lambda: kube.raw(path, action="read queue position", missing_ok=True, query=query),
            None,
        )
        return answer if isinstance(answer, dict) else None

    if not workload:
        return read(0, PAGE)
    items: list[Any] = []
    limit = FIRST_PENDING
    while True:
        answer = read(len(items), limit)
        if answer is None:
            return None
        page = list(answer.get("items") or [])
        items += page
        mine = any((i.get("metadata") or {}).get("name") == workload for i in page)
        if mine or len(page) < limit or len(items) >= PAGE:
            return {**answer, "items": items}
        limit = min(2 * limit, PAGE - len(items))


def explain(kube: KubeClient, run: RunTrack) -> Explanation:
    """Read a run's objects once and say why it is where it is."""
    return explain_run(run_objects(kube, run))


def preview_job(kube: KubeClient, job: TrainingJob, default_namespace: str) -> Preview:
    """Read a job's queues once and say what Kueue would do with it now."""
    namespace = job.namespace if "namespace" in job.model_fields_set else default_namespace
    workload, queues = job.compile().workload or {}, queue_objects(kube, namespace, job.queue)
    # The capacity engineer's addition: which flavor of an ordered queue it would get.
    return with_landing_flavor(preview(workload, queues), workload, queues)


def run_objects(kube: KubeClient, run: RunTrack) -> RunObjects:
    """The current attempt of `run` as the cluster shows it now."""
    res = job_resource(run.record)
    ns = run.namespace
    job = _try(lambda: kube.find(res, run.object_name(), ns), None)
    if job is not None and run.record.current.uid and uid(job) != run.record.current.uid:
        job = None  # a same-named object of someone else
    workload = None
    if job is not None:
        selector = f"{JOB_UID_LABEL}={uid(job)}"
        workloads = _try(lambda: kube.list(WORKLOADS, ns, label_selector=selector)[0], [])
        workload = workloads[0] if workloads else None
    pods = _try(lambda: kube.list(PODS, ns, label_selector=run.pod_selector())[0], [])
    requests = [
        r
        for r in _try(lambda: list_pages(kube, PROVISIONING, ns), [])
        if workload is not None
        and any(
            o.get("name") == name(workload)
            for o in (r.get("metadata") or {}).get("ownerReferences") or []
        )
    ]
    return RunObjects(
        res.kind,
        run.object_name(),
        job,
        workload,
        tuple(pods),
        _events(kube, ns, [(res.kind, run.object_name()), *_subjects(workload, pods, requests)]),
        tuple(requests),
        queue_objects(kube, ns, run.record.job.queue, waiting=_waiting(workload)),
        job_deleted=job is None and (run.record.cancelled or run.seen_job()),
        preemptor=_try(lambda: find_preemptor(kube, ns, _preempted_message(workload)), None),
    )


def _events(kube: KubeClient, namespace: str, about: list[tuple[str, str]]) -> tuple[Obj, ...]:
    """The Events of these (kind, name) objects, oldest first: one field-selected list each,
    as `kubectl describe` reads them, never the whole namespace's (other runs' included)."""
    found: list[Obj] = []
    for kind, subject in about:
        selector = f"involvedObject.kind={kind},involvedObject.name={subject}"
        read = functools.partial(list_pages, kube, EVENTS, namespace, field_selector=selector)
        found += _try(read, [])
    return tuple(sorted(found, key=event_time))


def _subjects(workload: Obj | None, pods: list[Obj], requests: list[Obj]) -> list[tuple[str, str]]:
    """The Workload, the ProvisioningRequests and the first pods that are not healthy: pods
    of one run fail alike, and the Events of a ready or succeeded pod explain nothing."""
    about = [("Workload", name(workload))] if workload is not None else []
    about += [("ProvisioningRequest", name(r)) for r in requests]
    troubled = [p for p in pods if not _healthy(p)]
    return about + [("Pod", name(p)) for p in troubled[:EVENT_PODS]]


def _healthy(pod: Obj) -> bool:
    status = pod.get("status") or {}
    phase = status.get("phase")
    containers = status.get("containerStatuses") or []
    ready = bool(containers) and all(c.get("ready") for c in containers)
    return phase == "Succeeded" or (phase == "Running" and ready)


def _key(obj: Obj) -> tuple[str, str]:
    return str((obj.get("metadata") or {}).get("namespace") or ""), name(obj)


def _waiting(workload: Obj | None) -> str:
    """The name of `workload` while it waits for quota, else ''."""
    if workload is None or read_workload(workload).quota_reserved.true:
        return ""
    return name(workload)


def _preempted_message(workload: Any) -> str:
    view = read_workload(workload)
    if view.preemption is None:
        return ""
    return view.preempted.message or view.evicted.message


def _try(read: Callable[[], Any], default: Any) -> Any:
    try:
        return read()
    except ClusterError as exc:  # forbidden, not installed, or unreachable: leave it out
        log.info("explain: %s", exc)
        return default
