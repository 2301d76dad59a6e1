"""`gkeml tenant apply`: every compiled object of the tenants, server-side applied in order
(cluster-scoped priorities and queues, then each namespace and what lives in it)."""

from __future__ import annotations

from collections.abc import Sequence

from gkeml_sdk.backends.kubernetes.kube import KubeClient
from gkeml_sdk.tenancy.manifests import compile_tenants
from gkeml_sdk.tenancy.model import Tenant


def apply_tenants(kube: KubeClient, tenants: Sequence[Tenant]) -> list[str]:
    """Apply the tenants' objects; returns `Kind/name` of each, in order.

    Example:
        >>> apply_tenants(kube, load_specs("examples/tenants.yaml"))[:2]  # doctest: +SKIP
        ['Cohort/gkeml-tenants', 'PriorityClass/gkeml-standby-reserve']
    """
    done = []
    for obj in compile_tenants(tenants).objects:
        kube.apply(obj)
        done.append(f"{obj['kind']}/{obj['metadata']['name']}")
    return done
