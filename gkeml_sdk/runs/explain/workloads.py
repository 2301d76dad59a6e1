"""Readers of Kueue Workloads: what they request, what they hold, their priority."""

from __future__ import annotations

from decimal import Decimal

from gkeml_sdk.core.objects import ObjView
from gkeml_sdk.core.quantity import quantity
from gkeml_sdk.runs.explain.quota import FlavorResource
from gkeml_sdk.runs.workload import read_workload


def requests(workload: ObjView | None) -> dict[str, Decimal]:
    """Total resources every pod of the Workload asks for (`count` x per-pod requests).

    Example:
        >>> requests({"spec": {"podSets": [{"count": 2, "template": {"spec": {"containers":
        ...     [{"resources": {"requests": {"nvidia.com/gpu": 8}}}]}}}]}})
        {'nvidia.com/gpu': Decimal('16')}
    """
    totals: dict[str, Decimal] = {}
    for pod_set in ((workload or {}).get("spec") or {}).get("podSets") or []:
        count = int(pod_set.get("count", 1))
        spec = (pod_set.get("template") or {}).get("spec") or {}
        for container in spec.get("containers") or []:
            for res, value in ((container.get("resources") or {}).get("requests") or {}).items():
                totals[res] = totals.get(res, Decimal(0)) + quantity(value) * count
    return totals


def holds(workload: ObjView) -> tuple[str, dict[FlavorResource, Decimal]]:
    """(ClusterQueue, quota per (flavor, resource)) a Workload has reserved; ("", {}) if none.

    Example:
        >>> holds({"status": {"conditions": [{"type": "QuotaReserved", "status": "True"}],
        ...     "admission": {"clusterQueue": "cq", "podSetAssignments": [{"flavors":
        ...     {"nvidia.com/gpu": "f"}, "resourceUsage": {"nvidia.com/gpu": "16"}}]}}})
        ('cq', {('f', 'nvidia.com/gpu'): Decimal('16')})
    """
    view = read_workload(workload)
    if not view.quota_reserved.true or view.finished.true:
        return "", {}
    admission = (workload.get("status") or {}).get("admission") or {}
    used: dict[FlavorResource, Decimal] = {}
    for assignment in admission.get("podSetAssignments") or []:
        flavors = assignment.get("flavors") or {}
        for res, value in (assignment.get("resourceUsage") or {}).items():
            key = (flavors.get(res, ""), res)
            used[key] = used.get(key, Decimal(0)) + quantity(value)
    return view.cluster_queue, used


def priority(workload: ObjView) -> int:
    """`spec.priority` (Kueue copies the priority class value there)."""
    return int(((workload.get("spec") or {}).get("priority")) or 0)


def admitted_at(workload: ObjView) -> str:
    """When the Workload last reserved quota (RFC 3339; '' when unknown)."""
    return read_workload(workload).quota_reserved.since


def label(workload: ObjView) -> str:
    """How a sentence names a Workload: its job's name when Kueue recorded the owner."""
    meta = workload.get("metadata") or {}
    owners = meta.get("ownerReferences") or []
    return str(owners[0].get("name") if owners else meta.get("name", "?"))


def pod_selector(workload: ObjView | None) -> tuple[dict[str, str], list[ObjView]]:
    """(nodeSelector, tolerations) of the first PodSet's pod template."""
    pod_sets = ((workload or {}).get("spec") or {}).get("podSets") or [{}]
    spec = (pod_sets[0].get("template") or {}).get("spec") or {}
    return dict(spec.get("nodeSelector") or {}), list(spec.get("tolerations") or [])


# The PodSet annotations of a topology request (Kueue topology-aware scheduling).
TOPOLOGY_ANNOTATIONS = (
    "kueue.x-k8s.io/podset-required-topology",
    "kueue.x-k8s.io/podset-preferred-topology",
)


def topology_request(workload: ObjView | None) -> str:
    """The topology level the first PodSet's pods ask to share (required or preferred), or "".

    Example:
        >>> topology_request({"spec": {"podSets": [{"topologyRequest": {"preferred": "x"}}]}})
        'x'
    """
    pod_sets = ((workload or {}).get("spec") or {}).get("podSets") or [{}]
    request = pod_sets[0].get("topologyRequest") or {}
    if request.get("required") or request.get("preferred"):
        return str(request.get("required") or request.get("preferred"))
    metadata = (pod_sets[0].get("template") or {}).get("metadata") or {}
    annotations = metadata.get("annotations") or {}
    return next((str(annotations[a]) for a in TOPOLOGY_ANNOTATIONS if annotations.get(a)), "")
