"""The objects an explanation or a preview reads, gathered by a backend in one pass."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from gkeml_sdk.core.objects import ObjView, name
from gkeml_sdk.runs.preemptor import Preemptor


@dataclass(frozen=True)
class QueueObjects:
    """A LocalQueue and what stands behind it: its ClusterQueue, the other ClusterQueues of its
    cohort (and the Cohort object when there is one), the ResourceFlavors they name, the
    Workloads the reader could see, WorkloadPriorityClass values, AdmissionChecks, and the
    visibility API's pending list. `quota_complete` says the Workloads include every one
    admitted to the ClusterQueue and its cohort, so quota is counted from them.

    Example:
        >>> QueueObjects("team-a", "ml").cluster_queue is None
        True
    """

    queue_name: str
    namespace: str
    local_queue: ObjView | None = None
    cluster_queue: ObjView | None = None
    cohort_queues: tuple[ObjView, ...] = ()
    cohort: ObjView | None = None
    flavors: Mapping[str, ObjView] = field(default_factory=dict)
    workloads: tuple[ObjView, ...] = ()
    priority_classes: Mapping[str, int] = field(default_factory=dict)
    admission_checks: Mapping[str, ObjView] = field(default_factory=dict)
    local_queues: tuple[str, ...] = ()  # names of the LocalQueues in the namespace
    pending: ObjView | None = None  # visibility API: pendingworkloads of the LocalQueue
    quota_complete: bool = False
    # The namespace's LocalQueues by the flavors their ClusterQueues have quota in; None when
    # the reader did not see every ClusterQueue (then no queue can be named).
    offers: Mapping[str, tuple[str, ...]] | None = None


@dataclass(frozen=True)
class RunObjects:
    """One attempt of a run as the cluster shows it now.

    Example:
        >>> RunObjects("JobSet", "train").workload is None
        True
    """

    kind: str
    name: str
    job: ObjView | None = None
    workload: ObjView | None = None
    pods: tuple[ObjView, ...] = ()
    events: tuple[ObjView, ...] = ()
    provisioning_requests: tuple[ObjView, ...] = ()
    queues: QueueObjects | None = None
    job_deleted: bool = False
    preemptor: Preemptor | None = None  # the Workload Kueue's Preempted message names


def queues_offering(
    local_queues: Iterable[ObjView], cluster_queues: Iterable[ObjView]
) -> dict[str, tuple[str, ...]]:
    """The LocalQueues by the flavors their ClusterQueue has a nominal quota above zero in:
    where a job that needs a flavor can be sent.

    Example:
        >>> cq = {"metadata": {"name": "a"}, "spec": {"resourceGroups": [{"flavors": [
        ...     {"name": "spot", "resources": [{"name": "cpu", "nominalQuota": "8"}]},
        ...     {"name": "std", "resources": [{"name": "cpu", "nominalQuota": 0}]}]}]}}
        >>> lq = {"metadata": {"name": "team-a"}, "spec": {"clusterQueue": "a"}}
        >>> queues_offering([lq], [cq])
        {'spot': ('team-a',)}
    """
    held: dict[str, set[str]] = {}
    for cq in cluster_queues:
        for group in (cq.get("spec") or {}).get("resourceGroups") or []:
            for flavor in group.get("flavors") or []:
                quotas = [str(r.get("nominalQuota", "0")) for r in flavor.get("resources") or []]
                if any(q.strip("0.") for q in quotas):
                    held.setdefault(name(cq), set()).add(str(flavor.get("name")))
    offers: dict[str, list[str]] = {}
    for lq in local_queues:
        for flavor in sorted(held.get(str((lq.get("spec") or {}).get("clusterQueue")), ())):
            offers.setdefault(flavor, []).append(name(lq))
    return {f: tuple(sorted(qs)) for f, qs in offers.items()}
