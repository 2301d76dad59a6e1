"""Before a job with topology-aware placement: some flavor of its ClusterQueue must be a TAS
flavor (`spec.topologyName`) whose nodes its hardware matches; otherwise Kueue never admits
it ("does not support TopologyAwareScheduling") and nothing says why."""

from __future__ import annotations

from gkeml_sdk.backends.kubernetes.api.kube import KubeClient
from gkeml_sdk.backends.kubernetes.api.resources import resource
from gkeml_sdk.core import kinds
from gkeml_sdk.errors import ConfigError
from gkeml_sdk.training.model import TrainingJob


def check_topology_queue(kube: KubeClient, job: TrainingJob) -> None:
    """Raise `ConfigError`, with the fix, when `job.queue` offers no TAS flavor for its pods
    (a missing LocalQueue or ClusterQueue is the queue check's to report).

    Example:
        >>> check_topology_queue(kube, job)  # doctest: +SKIP
    """
    local = kube.find(resource(kinds.KUEUE, "LocalQueue"), job.queue, job.namespace) or {}
    name = str((local.get("spec") or {}).get("clusterQueue", ""))
    queue = kube.find(resource(kinds.KUEUE, "ClusterQueue"), name) if name else None
    if queue is None:
        return
    selector = job.hardware.node_selector()
    names = [f["name"] for g in (queue.get("spec") or {}).get("resourceGroups") or []
             for f in g.get("flavors") or []]  # fmt: skip
    for flavor_name in names:
        flavor = kube.find(resource(kinds.KUEUE, "ResourceFlavor"), flavor_name) or {}
        spec = flavor.get("spec") or {}
        labels = spec.get("nodeLabels") or {}
        matches = all(labels.get(k, v) == v for k, v in selector.items())
        if spec.get("topologyName") and matches:
            return
    raise ConfigError(
        f"placement={job.placement!r} needs Topology-Aware Scheduling, but ClusterQueue "
        f"{name!r} (LocalQueue {job.queue!r}) has no flavor with a topology for "
        f"{job.accelerator}, so Kueue would never admit the job: ask your platform team for "
        "Capacity(..., topology=True) in the ClusterSetup (`gkeml setup apply`), or drop "
        "placement="
    )
