"""Priorities and Kueue queues of tenants: a PriorityClass and a WorkloadPriorityClass per
tier, a ResourceFlavor per GPU, a ClusterQueue per tenant in one shared Cohort (tier
semantics as preemption policy) and its LocalQueue (Kueue docs: "Cluster Queue",
"Preemption", "Workload Priority Class")."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gkeml_sdk.core import kinds
from gkeml_sdk.core.labels import sdk_labels
from gkeml_sdk.core.objects import Obj
from gkeml_sdk.tenancy import names
from gkeml_sdk.tenancy.nodes import DEDICATED_KEY, dedicated, toleration
from gkeml_sdk.tenancy.tier import Tier

if TYPE_CHECKING:
    from gkeml_sdk.tenancy.fields import TenantFields

STORAGE = "ephemeral-storage"
# Placeholder pods rank below every tier, so any real pod preempts them.
RESERVE_PRIORITY = -10


def cluster_objects(tier: Tier) -> list[Obj]:
    """The cluster-scoped priority objects of a tier (shared by its tenants): their content
    follows from their name (`names.tier_class`), never from another field of the tier.

    Example:
        >>> [o["kind"] for o in cluster_objects(Tier(name="A"))]
        ['PriorityClass', 'WorkloadPriorityClass']
    """
    klass = {
        "apiVersion": kinds.SCHEDULING,
        "kind": "PriorityClass",
        "metadata": {"name": names.tier_class(tier), "labels": sdk_labels()},
        "value": tier.priority,
        # A preemptible tier waits for free GPUs instead of evicting others.
        "preemptionPolicy": "Never" if tier.preemptible else "PreemptLowerPriority",
        "description": f"gkeml tenants of tier {tier.key} at priority {tier.priority}",
    }
    workload = {
        "apiVersion": kinds.KUEUE,
        "kind": "WorkloadPriorityClass",
        "metadata": {"name": names.tier_class(tier), "labels": sdk_labels()},
        "value": tier.priority,
        "description": f"gkeml tenants of tier {tier.key} at priority {tier.priority}",
    }
    return [klass, workload]


def shared_objects() -> list[Obj]:
    """The Cohort every tenant's ClusterQueue joins and the placeholder pods' PriorityClass."""
    cohort = {
        "apiVersion": kinds.KUEUE,
        "kind": "Cohort",
        "metadata": {"name": names.COHORT, "labels": sdk_labels()},
        "spec": {},
    }
    reserve = {
        "apiVersion": kinds.SCHEDULING,
        "kind": "PriorityClass",
        "metadata": {"name": names.RESERVE_CLASS, "labels": sdk_labels()},
        "value": RESERVE_PRIORITY,
        "preemptionPolicy": "Never",
        "description": "gkeml placeholders holding a cold standby's GPUs; any pod preempts them",
    }
    return [cohort, reserve]


def flavor_name(label: str, owner: str = "") -> str:
    """ResourceFlavor of the nodes of one GPU label: shared, or of one tenant's own nodes
    (its name in the flavor's, so no tenant can redefine another's).

    Example:
        >>> flavor_name("nvidia-l4"), flavor_name("nvidia-l4", "tenant-a")
        ('gkeml-nvidia-l4', 'gkeml-tenant-a-nvidia-l4')
    """
    return f"gkeml-{owner}-{label}" if owner else f"gkeml-{label}"


def tenant_flavor(tenant: TenantFields, label: str) -> str:
    """The flavor the tenant's pods of GPU `label` are admitted to."""
    return flavor_name(label, tenant.name if dedicated(tenant) else "")


def flavors(tenant: TenantFields) -> list[Obj]:
    """A ResourceFlavor per GPU the tenant's models use, selecting its row's node label; a
    dedicated tenant's select, and tolerate, its own tainted nodes."""
    rows = {m.gpu.label: m.gpu for m in tenant.models}  # a GPU label is one row
    objects = []
    for label, row in rows.items():
        spec: Obj = {"nodeLabels": {row.selector_label: label}}
        if dedicated(tenant):
            spec["nodeLabels"][DEDICATED_KEY] = tenant.name
            spec["nodeTaints"] = [
                {"key": DEDICATED_KEY, "value": tenant.name, "effect": "NoSchedule"}
            ]
            spec["tolerations"] = [toleration(tenant)]
        objects.append(
            {
                "apiVersion": kinds.KUEUE,
                "kind": "ResourceFlavor",
                "metadata": {"name": tenant_flavor(tenant, label), "labels": sdk_labels()},
                "spec": spec,
            }
        )
    return objects


def queues(tenant: TenantFields, storage_gi: dict[str, int]) -> list[Obj]:
    """The tenant's ClusterQueue and LocalQueue. `storage_gi` is the ephemeral storage per
    GPU label the tenant's pods request at their maximum (Kueue admits only what its
    ClusterQueue covers)."""
    by_label: dict[str, int] = {}
    resource: dict[str, str] = {}  # GPU label -> the resource name its row's pods request
    for model in tenant.models:
        label = model.gpu.label
        resource[label] = model.gpu.resource
        peak = (model.max_replicas + tenant.standby_pods) * model.gpus_per_replica
        by_label[label] = by_label.get(label, 0) + peak
    # One resource group: every flavor lists every covered resource in the same order
    # (Kueue's rule), with no quota of a resource its GPU's row does not request.
    covered = tenant.gpu_resources
    flavor_rows = []
    for label, gpus in by_label.items():
        quota = dict.fromkeys(covered, 0) | {resource[label]: min(gpus, tenant.gpu_quota)}
        rows = [{"name": name, "nominalQuota": str(n)} for name, n in quota.items()]
        storage = {"name": STORAGE, "nominalQuota": f"{storage_gi.get(label, 0)}Gi"}
        flavor_rows.append({"name": tenant_flavor(tenant, label), "resources": [*rows, storage]})
    spec: Obj = {
        "cohortName": names.COHORT,
        "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": tenant.namespace}},
        "resourceGroups": [{"coveredResources": [*covered, STORAGE], "flavors": flavor_rows}],
        "preemption": _preemption(tenant.tier),
    }
    cluster_queue = {
        "apiVersion": kinds.KUEUE,
        "kind": "ClusterQueue",
        "metadata": {"name": tenant.name, "labels": names.tenant_labels(tenant)},
        "spec": spec,
    }
    local = {
        "apiVersion": kinds.KUEUE,
        "kind": "LocalQueue",
        "metadata": names.metadata(tenant, tenant.name),
        "spec": {"clusterQueue": tenant.name},
    }
    return [cluster_queue, local]


def _preemption(tier: Tier) -> Obj:
    if tier.isolation == "exclusive":
        # Lends its idle GPUs, takes them back from any borrower, and may preempt lower tiers
        # while it borrows itself.
        return {
            "reclaimWithinCohort": "Any",
            "borrowWithinCohort": {"policy": "LowerPriority"},
            "withinClusterQueue": "LowerPriority",
        }
    if tier.isolation == "shared":
        # Borrows idle GPUs; reclaims its own only from lower priorities.
        return {"reclaimWithinCohort": "LowerPriority", "withinClusterQueue": "LowerPriority"}
    # Preemptible: borrows what is idle and gives it back; never evicts anyone.
    return {"reclaimWithinCohort": "Never", "withinClusterQueue": "Never"}
