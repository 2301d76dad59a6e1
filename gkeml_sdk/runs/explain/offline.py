"""The queues a job would meet in a cluster that holds only the given Kueue objects (a
`ClusterSetup`'s compiled objects): "will it fit?" asked of a setup file, with no cluster."""

from __future__ import annotations

from collections.abc import Iterable

from gkeml_sdk.core.objects import ObjView, name
from gkeml_sdk.runs.explain.inputs import QueueObjects, queues_offering


def queues_of(objects: Iterable[ObjView], namespace: str, queue: str) -> QueueObjects:
    """The LocalQueue `queue` of `namespace` among `objects`, and what stands behind it, in a
    cluster where nothing runs yet (no Workloads hold quota).

    Example:
        >>> lq = {"kind": "LocalQueue", "metadata": {"name": "a", "namespace": "ml"},
        ...       "spec": {"clusterQueue": "a"}}
        >>> cq = {"kind": "ClusterQueue", "metadata": {"name": "a"}, "spec": {}}
        >>> found = queues_of([lq, cq], "ml", "a")
        >>> found.cluster_queue is cq, found.local_queues
        (True, ('a',))
    """
    by_kind: dict[str, list[ObjView]] = {}
    for obj in objects:
        by_kind.setdefault(str(obj.get("kind", "")), []).append(obj)
    local_queues = [
        q
        for q in by_kind.get("LocalQueue", [])
        if (q.get("metadata") or {}).get("namespace") == namespace
    ]
    lq = next((q for q in local_queues if name(q) == queue), None)
    names = tuple(name(q) for q in local_queues)
    if lq is None:
        return QueueObjects(queue, namespace, None, local_queues=names)
    cq_name = str((lq.get("spec") or {}).get("clusterQueue") or "")
    cluster_queues = by_kind.get("ClusterQueue", [])
    cq = next((q for q in cluster_queues if name(q) == cq_name), None)
    cohort = str(((cq or {}).get("spec") or {}).get("cohortName") or "")
    members = tuple(
        q
        for q in cluster_queues
        if cohort and (q.get("spec") or {}).get("cohortName") == cohort and name(q) != cq_name
    )
    cohorts = {name(c): c for c in by_kind.get("Cohort", [])}
    return QueueObjects(
        queue,
        namespace,
        lq,
        cq,
        members,
        cohorts.get(cohort) if cohort else None,
        {name(f): f for f in by_kind.get("ResourceFlavor", [])},
        (),
        {name(p): int(p.get("value") or 0) for p in by_kind.get("WorkloadPriorityClass", [])},
        {name(c): c for c in by_kind.get("AdmissionCheck", [])},
        names,
        offers=queues_offering(local_queues, cluster_queues),
    )
