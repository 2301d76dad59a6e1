"""The Node objects GKE makes from a node pool request (an item of `NodePool.to_dict()
["nodePools"]`), for the test API server: labels, taints and extended resources from the SDK's
own node model (`gkeml_sdk.scheduling.gke_nodes.pool_nodes`, not a second copy), one Node per
node the pool can grow to, as if the cluster autoscaler had scaled it up.

What the model leaves open, each node fills in: its hostname and the GCE topology labels GKE
gives A3-and-newer nodes (one block and sub-block per pool, each node its own host). Allocatable
ephemeral storage is the node model's too (`scheduling.node_storage`: the boot disk, or the
Local SSDs, as the pool request sets them; 47060071478 for GKE's default 100 GB boot disk, as
https://cloud.google.com/kubernetes-engine/docs/concepts/plan-node-sizes shows it), pods GKE's
default 110. CPU and memory are not
published: the SDK's catalog has no machine shapes and compiled pods request neither. A pool
GKE can never create (a machine not sold in its mode) has no nodes; a GPU pool whose driver GKE
does not install publishes no GPUs (its device plugin has none to offer until a driver-installer
DaemonSet runs, which is not modelled)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gkeml_sdk.hardware import gpu_labels
from gkeml_sdk.scheduling.gke_nodes import HOSTNAME_LABEL, NODE_OWN_VALUE, pool_nodes
from gkeml_sdk.scheduling.topology import LEVELS

Obj = dict[str, Any]
MAX_PODS = "110"
_STAMP = "2026-01-01T00:00:00Z"


def node_objects(
    pool: Mapping[str, Any], workload_policies: Mapping[str, str] | None = None
) -> list[Obj]:
    """Every Node of one pool request, named `gke-<pool>-<i>`.

    Example:
        >>> pool = {"name": "l4", "config": {"machineType": "g2-standard-8", "accelerators": [
        ...     {"acceleratorCount": "1", "acceleratorType": "nvidia-l4",
        ...      "gpuDriverInstallationConfig": {"gpuDriverVersion": "LATEST"}}]},
        ...     "autoscaling": {"totalMaxNodeCount": 2}}
        >>> [n["metadata"]["name"] for n in node_objects(pool)]
        ['gke-l4-0', 'gke-l4-1']
        >>> node_objects(pool)[0]["status"]["allocatable"]["nvidia.com/gpu"]
        '1'
    """
    nodes = pool_nodes(pool, workload_policies)
    if nodes.never:
        return []
    extended = dict(nodes.allocatable)
    if nodes.gpus and not nodes.driver:
        extended.pop(gpu_labels.GPU_RESOURCE, None)
    out = []
    for index in range(nodes.max_nodes):
        node_name = f"gke-{nodes.pool}-{index}"
        own = {
            HOSTNAME_LABEL: node_name,
            LEVELS[2][1]: node_name,
            LEVELS[0][1]: f"{nodes.pool}-block",
            LEVELS[1][1]: f"{nodes.pool}-subblock",
        }
        labels = {k: (own[k] if v == NODE_OWN_VALUE else v) for k, v in nodes.labels.items()}
        allocatable = {res: str(n) for res, n in extended.items()}
        allocatable.update({"ephemeral-storage": str(nodes.ephemeral_storage), "pods": MAX_PODS})
        out.append(
            {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {"name": node_name, "labels": labels},
                "spec": {"taints": [dict(t) for t in nodes.taints]},
                "status": {
                    "capacity": dict(allocatable),
                    "allocatable": allocatable,
                    "conditions": [
                        {
                            "type": "Ready",
                            "status": "True",
                            "reason": "KubeletReady",
                            "lastTransitionTime": _STAMP,
                        }
                    ],
                },
            }
        )
    return out
