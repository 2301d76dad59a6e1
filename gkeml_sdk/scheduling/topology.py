"""GKE's node topology labels, from the widest domain to a single node, as Kueue's
Topology-Aware Scheduling reads them (https://cloud.google.com/kubernetes-engine/docs/
how-to/compact-placement, https://kueue.sigs.k8s.io/docs/concepts/topology_aware_scheduling/)."""

from __future__ import annotations

# Short name -> node label, ordered from the highest level to the lowest, as Kueue's
# Topology lists them; kubernetes.io/hostname may only be the last.
LEVELS: tuple[tuple[str, str], ...] = (
    ("block", "cloud.google.com/gce-topology-block"),
    ("subblock", "cloud.google.com/gce-topology-subblock"),
    ("host", "cloud.google.com/gce-topology-host"),
    ("hostname", "kubernetes.io/hostname"),
)
# Levels one machine stands for: "required" there puts every pod on one machine.
SINGLE_MACHINE_LEVELS = ("host", "hostname")
# Node labels a JobSet can keep each child Job to: a node pool or a rack-sized domain.
EXCLUSIVE: tuple[tuple[str, str], ...] = (
    ("nodepool", "cloud.google.com/gke-nodepool"),
    ("block", "cloud.google.com/gce-topology-block"),
    ("subblock", "cloud.google.com/gce-topology-subblock"),
)
DEFAULT_TOPOLOGY = "gke-default"
# "compact": try one host, then climb to the sub-block and block before spreading.
COMPACT_LEVEL = "host"

TOPOLOGY_ANNOTATION_PREFIX = "kueue.x-k8s.io/podset-"
REQUIRED_ANNOTATION = "kueue.x-k8s.io/podset-required-topology"
PREFERRED_ANNOTATION = "kueue.x-k8s.io/podset-preferred-topology"


def level_label(name: str) -> str:
    """The node label of topology level `name`.

    Example:
        >>> level_label("subblock")
        'cloud.google.com/gce-topology-subblock'
    """
    return dict(LEVELS)[name]
