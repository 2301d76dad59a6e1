"""The objects an explanation or a preview reads, gathered by a backend in one pass."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

Obj = Mapping[str, Any]


@dataclass(frozen=True)
class QueueObjects:
    """A LocalQueue and what stands behind it: its ClusterQueue, the other ClusterQueues of its
    cohort (and the Cohort object when there is one), the ResourceFlavors they name, the
    Workloads the reader could see, WorkloadPriorityClass values, AdmissionChecks, and the
    visibility API's pending list.

    Example:
        >>> QueueObjects("team-a", "ml").cluster_queue is None
        True
    """

    queue_name: str
    namespace: str
    local_queue: Obj | None = None
    cluster_queue: Obj | None = None
    cohort_queues: tuple[Obj, ...] = ()
    cohort: Obj | None = None
    flavors: Mapping[str, Obj] = field(default_factory=dict)
    workloads: tuple[Obj, ...] = ()
    priority_classes: Mapping[str, int] = field(default_factory=dict)
    admission_checks: Mapping[str, Obj] = field(default_factory=dict)
    local_queues: tuple[str, ...] = ()  # names of the LocalQueues in the namespace
    pending: Obj | None = None  # visibility API: pendingworkloads of the LocalQueue


@dataclass(frozen=True)
class RunObjects:
    """One attempt of a run as the cluster shows it now.

    Example:
        >>> RunObjects("JobSet", "train").workload is None
        True
    """

    kind: str
    name: str
    job: Obj | None = None
    workload: Obj | None = None
    pods: tuple[Obj, ...] = ()
    events: tuple[Obj, ...] = ()
    provisioning_requests: tuple[Obj, ...] = ()
    queues: QueueObjects | None = None
    job_deleted: bool = False
