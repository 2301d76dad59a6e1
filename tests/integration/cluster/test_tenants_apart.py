"""Tenants compiled and applied apart (two files, two `gkeml tenant apply`) stay apart on the
API server: lookalike tiers are other classes, and a second apply that would take another
tenant's namespace or ClusterQueue, or redefine a cluster-scoped object, is refused naming
both before it writes anything."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from gkeml_sdk import Tenant, load_specs
from gkeml_sdk.backends.kubernetes.api.kube import KubeClient
from gkeml_sdk.backends.kubernetes.api.transport import Transport
from gkeml_sdk.backends.kubernetes.standby.tenant_apply import apply_tenants
from gkeml_sdk.errors import ClusterError
from tests.integration.cluster.conftest import FAST_RETRY
from tests.integration.cluster.test_tenants import EXAMPLE
from tests.kubeapi import KubeAPIServer

WRITES = ("POST", "PUT", "PATCH", "DELETE")


@pytest.fixture
def server(kube_api_factory: Callable[..., KubeAPIServer]) -> KubeAPIServer:
    return kube_api_factory(namespaces=("default", "kube-system", "serving"))


def apply(server: KubeAPIServer, *tenants: Tenant) -> list[str]:
    kube = KubeClient(Transport(server.api_client(), api_retry=FAST_RETRY))
    return apply_tenants(kube, tenants)


def changed(t: Tenant, **changes: Any) -> Tenant:
    return Tenant.model_validate(t.model_dump() | changes)


def tenant_a() -> Tenant:
    return load_specs(EXAMPLE)[0]


def writes(server: KubeAPIServer) -> int:
    return sum(server.count(method=m) for m in WRITES)


def refused(server: KubeAPIServer, *tenants: Tenant) -> str:
    before = writes(server)
    with pytest.raises(ClusterError) as err:
        apply(server, *tenants)
    assert writes(server) == before, "nothing is written"
    return str(err.value)


def test_a_lookalike_tier_applied_apart_is_another_class(server: KubeAPIServer) -> None:
    a = tenant_a()
    apply(server, a)
    lookalike = changed(
        load_specs(EXAMPLE)[2],
        name="tenant-x",
        namespace="tenant-x",
        tier={"name": "a", "like": "C"},
    )
    apply(server, lookalike)
    classes = {o["metadata"]["name"]: o["value"] for o in server.store.list("priorityclasses", "")}
    wpcs = {
        o["metadata"]["name"]: o["value"] for o in server.store.list("workloadpriorityclasses", "")
    }
    assert classes["gkeml-tier-a-100000"] == wpcs["gkeml-tier-a-100000"] == 100000
    assert classes["gkeml-tier-a-10"] == wpcs["gkeml-tier-a-10"] == 10
    apply(server, a)  # applying a tenant again changes nothing of the other's


def test_a_tenant_naming_another_tenants_namespace_is_refused(server: KubeAPIServer) -> None:
    a, b, _ = load_specs(EXAMPLE)
    apply(server, a)
    text = refused(server, changed(b, namespace="tenant-a"))
    assert "apply tenant 'tenant-b'" in text
    assert (
        "namespace 'tenant-a' is tenant 'tenant-a''s" in text
        and "tenant 'tenant-b' names it" in text
    )


def test_a_same_named_tenant_of_another_namespace_is_refused(server: KubeAPIServer) -> None:
    a = tenant_a()
    apply(server, a)
    text = refused(server, changed(a, namespace="tenant-a2"))
    assert (
        "ClusterQueue 'tenant-a' is the queue of tenant 'tenant-a' in namespace 'tenant-a'" in text
    )
    assert "tenant 'tenant-a' of namespace 'tenant-a2' would take it over" in text


def test_a_cluster_scoped_object_defined_otherwise_is_refused(server: KubeAPIServer) -> None:
    c = load_specs(EXAMPLE)[2]  # its GPUs' flavor is shared by every tenant of that GPU
    apply(server, c)
    flavor = server.store.get("resourceflavors", "", "gkeml-nvidia-l4")
    flavor["spec"]["nodeLabels"] = {"cloud.google.com/gke-accelerator": "nvidia-tesla-t4"}
    server.store.put(flavor)  # another tenant file (or a person) defined it otherwise
    text = refused(server, changed(c, name="tenant-y", namespace="tenant-y"))
    assert "apply tenant 'tenant-y'" in text
    assert "ResourceFlavor 'gkeml-nvidia-l4' exists with another definition" in text
    assert "'nvidia-tesla-t4' on the cluster, 'nvidia-l4' compiled" in text
