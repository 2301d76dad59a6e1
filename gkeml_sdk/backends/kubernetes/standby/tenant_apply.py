"""`gkeml tenant apply`: every compiled object of the tenants, server-side applied in order
(cluster-scoped priorities and queues, then each namespace and what lives in it), after one
read of what the cluster already holds. Nothing is written when a tenant would take a
namespace another tenant's objects are in, take over the ClusterQueue of a same-named tenant
of another namespace, or redefine a cluster-scoped object that exists with another
definition: tenants applied from different files stay apart."""

from __future__ import annotations

from collections.abc import Sequence

from gkeml_sdk.backends.kubernetes.api.kube import KubeClient
from gkeml_sdk.backends.kubernetes.api.resources import resource_of
from gkeml_sdk.backends.kubernetes.api.shared_apply import differences
from gkeml_sdk.core.objects import Obj
from gkeml_sdk.errors import ClusterError
from gkeml_sdk.tenancy.manifests import compile_tenants
from gkeml_sdk.tenancy.model import Tenant
from gkeml_sdk.tenancy.names import TENANT_LABEL


def apply_tenants(kube: KubeClient, tenants: Sequence[Tenant]) -> list[str]:
    """Apply the tenants' objects; returns `Kind/name` of each, in order. `ClusterError`
    naming both tenants (or the object and its differing fields), before anything is
    written, when they would collide with what the cluster holds (`check_apart`).

    Example:
        >>> apply_tenants(kube, load_specs("examples/tenants.yaml"))[:2]  # doctest: +SKIP
        ['Cohort/gkeml-tenants', 'PriorityClass/gkeml-standby-reserve']
    """
    objects = compile_tenants(tenants).objects
    check_apart(kube, objects, [t.name for t in tenants])
    done = []
    for obj in objects:
        kube.apply(obj)
        done.append(f"{obj['kind']}/{obj['metadata']['name']}")
    return done


def check_apart(kube: KubeClient, objects: Sequence[Obj], tenants: Sequence[str]) -> None:
    """Read each cluster-scoped object of `objects` (the compiled objects of `tenants`,
    namespaces included) and refuse one that belongs to another tenant or exists with
    another definition. Reads only.

    Example:
        >>> check_apart(kube, compile_tenants(tenants).objects, ["tenant-a"])  # doctest: +SKIP
    """
    for obj in objects:
        meta = obj["metadata"]
        if "namespace" in meta:
            continue
        found = kube.find(resource_of(obj), meta["name"], None)
        if found is not None:
            _refuse_collision(obj, found, tenants)


def _refuse_collision(obj: Obj, found: Obj, tenants: Sequence[str]) -> None:
    kind, name = obj["kind"], obj["metadata"]["name"]
    ours = _tenant(obj)
    theirs = _tenant(found)
    applying = [ours] if ours else list(tenants)
    action = f"apply tenant{'s' * (len(applying) > 1)} {', '.join(map(repr, applying))}"
    if kind == "Namespace":
        if theirs and theirs != ours:
            raise ClusterError(
                action,
                status=409,
                reason="Conflict",
                message=f"namespace {name!r} is tenant {theirs!r}'s (label {TENANT_LABEL}="
                f"{theirs}); tenant {ours!r} names it too, and its quota, NetworkPolicies "
                f"and route would replace {theirs!r}'s",
                hint=f"give tenant {ours!r} a namespace of its own (namespace: {ours})",
            )
        return
    if kind == "ClusterQueue":
        selector = (obj.get("spec") or {}).get("namespaceSelector")
        held = (found.get("spec") or {}).get("namespaceSelector")
        if theirs != ours or held != selector:
            where = _namespace_of(held) or "another namespace"
            raise ClusterError(
                action,
                status=409,
                reason="Conflict",
                message=f"ClusterQueue {name!r} is the queue of tenant {theirs or '(none)'!r} "
                f"in namespace {where!r}; tenant {ours!r} of namespace "
                f"{_namespace_of(selector)!r} would take it over",
                hint=f"give tenant {ours!r} another name: a tenant's name names its "
                "ClusterQueue, flavors and node pools cluster-wide",
            )
        return
    changed = differences(obj, found)
    if changed:
        who = f"tenant {theirs!r}" if theirs else "another tenant file or a person"
        raise ClusterError(
            action,
            status=409,
            reason="Conflict",
            message=f"{kind} {name!r} exists with another definition, written by {who} ("
            + "; ".join(changed)
            + "); applying would redefine it for every tenant that uses it",
            hint=f"compare the tenant files that define it, or delete {kind} {name} if no "
            "tenant uses it any more",
        )


def _tenant(obj: Obj) -> str:
    return str(((obj.get("metadata") or {}).get("labels") or {}).get(TENANT_LABEL) or "")


def _namespace_of(selector: object) -> str:
    labels = (selector or {}).get("matchLabels") if isinstance(selector, dict) else None
    return str((labels or {}).get("kubernetes.io/metadata.name") or "")
