"""The Kueue objects of the recordings (ClusterQueues, flavor, priorities, the DWS admission
check) and the ClusterQueue status Kueue reports, for tests that replay the recordings."""

from __future__ import annotations

from typing import Any

from gkeml_sdk import Accelerator, TrainingJob
from tests.kueue_usage import flavors_reservation

END = float("inf")
KUEUE = "kueue.x-k8s.io/v1beta2"


def gang(name: str, nodes: int = 2, **kw: Any) -> TrainingJob:
    kw.setdefault("queue", "team-a")
    kw.setdefault("stateless", True)  # busybox `true` keeps nothing to resume from
    return TrainingJob(name=name, image="busybox", command=["true"],
                       accelerator=Accelerator("h100", count=8), nodes=nodes, **kw)  # fmt: skip


def cluster_queue(name: str, **spec: Any) -> dict[str, Any]:
    resources = [
        {"name": "cpu", "nominalQuota": "64"},
        {"name": "nvidia.com/gpu", "nominalQuota": "16"},
    ]
    return {
        "apiVersion": KUEUE,
        "kind": "ClusterQueue",
        "metadata": {"name": name},
        "spec": {
            "namespaceSelector": {},
            "preemption": {"withinClusterQueue": "LowerPriority"},
            "resourceGroups": [{"coveredResources": ["cpu", "nvidia.com/gpu"],
                                "flavors": [{"name": "acc-flavor", "resources": resources}]}],
            **spec,
        },
    }  # fmt: skip


def kueue_reports_usage(server: Any) -> None:
    """Write each ClusterQueue's `status.flavorsReservation` from the Workloads that hold quota
    in it, as Kueue's ClusterQueue controller does."""
    workloads = server.store.list("workloads")
    for cq in server.store.list("clusterqueues"):
        name = cq["metadata"]["name"]
        status = {"flavorsReservation": flavors_reservation(name, workloads)}
        server.store.update_status("clusterqueues", None, name, status)


def install(cluster: Any) -> Any:
    """The recordings' Kueue objects: acc-cq (16 GPUs, LowerPriority preemption), the DWS
    queue acc-dws-cq with its ProvisioningRequest admission check, the flavor and priorities."""
    cluster.store.put(cluster_queue("acc-cq"))
    dws = {"admissionChecksStrategy": {"admissionChecks": [{"name": "acc-dws"}]}}
    cluster.store.put(cluster_queue("acc-dws-cq", **dws))
    cluster.store.put({"apiVersion": KUEUE, "kind": "ResourceFlavor",
                       "metadata": {"name": "acc-flavor"}, "spec": {}})  # fmt: skip
    cluster.store.put({"apiVersion": KUEUE, "kind": "WorkloadPriorityClass",
                       "metadata": {"name": "acc-high"}, "value": 1000})  # fmt: skip
    cluster.store.put({
        "apiVersion": KUEUE, "kind": "AdmissionCheck", "metadata": {"name": "acc-dws"},
        "spec": {"controllerName": "kueue.x-k8s.io/provisioning-request", "parameters": {
            "apiGroup": "kueue.x-k8s.io", "kind": "ProvisioningRequestConfig", "name": "dws"}},
    })  # fmt: skip
    return cluster
