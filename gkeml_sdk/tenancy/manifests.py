"""Tenant -> every object it needs, in apply order: the cluster-scoped priorities and
queues, the namespace and its walls, then per model its servers, standbys and routing."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TYPE_CHECKING

from gkeml_sdk.core.manifests import Manifests
from gkeml_sdk.core.objects import Obj
from gkeml_sdk.tenancy import queues, routes
from gkeml_sdk.tenancy.isolation import egress_notes, isolation_objects
from gkeml_sdk.tenancy.model_servers import compiled_model
from gkeml_sdk.tenancy.rules import check_tenants

if TYPE_CHECKING:
    from gkeml_sdk.tenancy.fields import TenantFields

_GI = re.compile(r"^(\d+)Gi$")


def compile_tenant(tenant: TenantFields) -> Manifests:
    """The objects of one tenant, cluster-scoped ones included.

    Example:
        >>> from gkeml_sdk import load_specs
        >>> m = compile_tenant(load_specs("examples/tenants.yaml")[0])
        >>> sorted({o["kind"] for o in m.objects})[:4]
        ['ClusterQueue', 'Cohort', 'Deployment', 'DestinationRule']
    """
    return compile_tenants([tenant])


def compile_tenants(tenants: Iterable[TenantFields]) -> Manifests:
    """Several tenants: the objects they share (tier classes, flavors, the Cohort) once.
    Tenants that would define one cluster-wide object two ways are refused (`SpecError`)."""
    tenants = list(tenants)
    check_tenants(tenants)
    objects: list[Obj] = [*queues.shared_objects()]
    namespaced: list[Obj] = []
    notes: list[str] = []
    for tenant in tenants:
        objects += queues.cluster_objects(tenant.tier) + queues.flavors(tenant)
        compiled = [compiled_model(tenant, m) for m in tenant.models]
        per_model = [m.objects for m in compiled]
        notes += [note for m in compiled for note in m.notes] + egress_notes(tenant)
        served = [o for group in per_model for o in group]
        tenant_queues = queues.queues(tenant, _storage_gi(tenant, served))
        objects.append(tenant_queues[0])
        namespaced += isolation_objects(tenant) + tenant_queues[1:]
        for model, group in zip(tenant.models, per_model, strict=True):
            namespaced += group + routes.standby_backends(group, model)
        namespaced.append(routes.router(tenant))
    return Manifests(objects=_unique(objects) + namespaced, notes=tuple(notes))


def _storage_gi(tenant: TenantFields, objects: list[Obj]) -> dict[str, int]:
    """Ephemeral storage (GiB) per GPU label the tenant's Kueue-managed pods request at peak."""
    keys = dict.fromkeys(m.gpu.selector_label for m in tenant.models)  # the rows' label keys
    totals: dict[str, int] = {}
    for obj in objects:
        if (
            obj["kind"] != "Deployment"
            or "kueue.x-k8s.io/queue-name" not in obj["metadata"]["labels"]
        ):
            continue
        pod = obj["spec"]["template"]["spec"]
        selector = pod["nodeSelector"]
        label = next((selector[key] for key in keys if key in selector), "")
        replicas = _peak_replicas(obj, objects)
        for container in pod["containers"]:
            match = _GI.match(
                str(container["resources"].get("requests", {}).get("ephemeral-storage", ""))
            )
            if match:
                totals[label] = totals.get(label, 0) + int(match[1]) * replicas
    return totals


def _peak_replicas(deployment: Obj, objects: list[Obj]) -> int:
    name = deployment["metadata"]["name"]
    for obj in objects:
        if (
            obj["kind"] == "HorizontalPodAutoscaler"
            and obj["spec"]["scaleTargetRef"]["name"] == name
        ):
            return int(obj["spec"]["maxReplicas"])
    return max(int(deployment["spec"].get("replicas", 1)), 1)


def _unique(objects: list[Obj]) -> list[Obj]:
    seen: dict[tuple[str, str], Obj] = {}
    for obj in objects:
        seen.setdefault((obj["kind"], obj["metadata"]["name"]), obj)
    return list(seen.values())
