"""Tier names and isolation across tenants: tier classes are named by tier and value, so
tenants compiled apart never define one two ways; shared, system and gateway namespaces and
two tenants in one namespace are refused; Spot on an exclusive tier is refused; an exclusive
tenant's pods carry a toleration no other tenant's pods carry and select its own tainted,
non-Spot node pool; egress goes to declared ranges."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from gkeml_sdk import SpecError, Tenant, compile_tenants, load_specs
from gkeml_sdk.scheduling.node_storage import GIB, boot_disk_for
from gkeml_sdk.tenancy.nodes import DEDICATED_KEY

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "tenants.yaml"


def tenants() -> list[Tenant]:
    return list(load_specs(EXAMPLE))


def renamed(t: Tenant, **changes: Any) -> Tenant:
    return Tenant.model_validate(t.model_dump() | changes)


def pod_specs(objects: list[dict[str, Any]], namespace: str) -> list[dict[str, Any]]:
    return [
        o["spec"]["template"]["spec"]
        for o in objects
        if o["kind"] == "Deployment" and o["metadata"]["namespace"] == namespace
    ]


def cluster_scoped(objects: list[dict[str, Any]]) -> dict[tuple[str, str], dict[str, Any]]:
    return {
        (o["kind"], o["metadata"]["name"]): o for o in objects if "namespace" not in o["metadata"]
    }


def test_lookalike_tiers_compiled_apart_never_define_one_class_two_ways() -> None:
    a, b, c = tenants()
    intruder = renamed(c, name="tenant-x", namespace="tenant-x", tier={"name": "a", "like": "C"})
    first = cluster_scoped(compile_tenants([a]).objects)
    second = cluster_scoped(compile_tenants([intruder]).objects)
    assert first["WorkloadPriorityClass", "gkeml-tier-a-100000"]["value"] == 100000
    assert second["WorkloadPriorityClass", "gkeml-tier-a-10"]["value"] == 10
    # Every tier of the product and a few lookalikes, each compiled alone: one name, one object.
    variants = [a, b, c, intruder] + [
        renamed(c, name=f"t{i}", namespace=f"t{i}", tier=tier)
        for i, tier in enumerate(
            [
                {"name": "A", "like": "C"},
                {"name": "c", "like": "C", "isolation": "preemptible", "standbys": 3},
                {"name": "c", "like": "C", "priority": 5},
                {"name": "C", "like": "C", "priority": -10},
            ]
        )
    ]
    seen: dict[tuple[str, str], dict[str, Any]] = {}
    for tenant in variants:
        for key, obj in cluster_scoped(compile_tenants([tenant]).objects).items():
            if key[0] in ("PriorityClass", "WorkloadPriorityClass", "Cohort"):
                assert seen.setdefault(key, obj) == obj, key
    assert ("PriorityClass", "gkeml-tier-c--10") in seen
    # Tenants of one tier share its classes.
    twin = renamed(a, name="tenant-a2", namespace="tenant-a2")
    classes = [o for o in compile_tenants([a, twin]).objects if o["kind"] == "PriorityClass"]
    names = [o["metadata"]["name"] for o in classes]
    assert names == ["gkeml-standby-reserve", "gkeml-tier-a-100000"]


def test_two_tenants_naming_one_namespace_are_refused_naming_both() -> None:
    a, b, _ = tenants()
    with pytest.raises(SpecError) as err:
        compile_tenants([a, renamed(b, namespace="tenant-a")])
    assert "tenants 'tenant-a' and 'tenant-b' both name namespace 'tenant-a'" in str(err.value)


@pytest.mark.parametrize(
    "namespace",
    ["kube-system", "kube-public", "kube-node-lease", "default", "gkeml-system", "istio-system",
     "kube-anything", "gke-managed-cim"],
)  # fmt: skip
def test_a_system_or_shared_namespace_is_refused(namespace: str) -> None:
    with pytest.raises(SpecError) as err:
        renamed(tenants()[0], namespace=namespace)
    text = str(err.value)
    assert f"tenant 'tenant-a': namespace '{namespace}' is a system or shared namespace" in text
    assert "cluster DNS in kube-system" in text and "namespace='tenant-a'" in text


def test_a_gateway_namespace_is_refused_naming_its_tenant() -> None:
    a, b, _ = tenants()
    with pytest.raises(SpecError, match="namespace 'serving' is its gateway's"):
        renamed(a, namespace="serving")
    other = renamed(b, gateway="team-gw/gw")
    with pytest.raises(SpecError) as err:
        compile_tenants([other, renamed(a, namespace="team-gw")])
    assert "namespace 'team-gw' is the gateway namespace of tenant 'tenant-b'" in str(err.value)


def test_two_tenants_of_one_name_are_refused() -> None:
    a = tenants()[0]
    with pytest.raises(SpecError, match="two tenants are named 'tenant-a'"):
        compile_tenants([a, a])


def test_spot_on_an_exclusive_tier_is_refused() -> None:
    data = tenants()[0].model_dump()
    data["models"][0]["model"]["spot"] = True
    with pytest.raises(SpecError, match=r"spot=True on an exclusive tier.*tier='C'"):
        Tenant.model_validate(data)


def test_only_the_exclusive_tenant_tolerates_its_dedicated_nodes() -> None:
    objects = compile_tenants(tenants()).objects
    own = {"key": DEDICATED_KEY, "operator": "Equal", "value": "tenant-a", "effect": "NoSchedule"}
    a_pods = pod_specs(objects, "tenant-a")
    assert a_pods and all(own in p["tolerations"] for p in a_pods)
    assert all(p["nodeSelector"][DEDICATED_KEY] == "tenant-a" for p in a_pods)
    for ns in ("tenant-b", "tenant-c"):
        for pod in pod_specs(objects, ns):
            assert not any(t.get("key") == DEDICATED_KEY for t in pod.get("tolerations", []))
            assert DEDICATED_KEY not in pod.get("nodeSelector", {})
    flavors = {o["metadata"]["name"]: o["spec"] for o in objects if o["kind"] == "ResourceFlavor"}
    assert flavors["gkeml-tenant-a-nvidia-l4"]["nodeTaints"] == [
        {"key": DEDICATED_KEY, "value": "tenant-a", "effect": "NoSchedule"}
    ]
    assert "nodeTaints" not in flavors["gkeml-nvidia-l4"]  # tier C's shared Spot flavor
    queue = next(
        o for o in objects if o["kind"] == "ClusterQueue" and o["metadata"]["name"] == "tenant-a"
    )
    assert [f["name"] for f in queue["spec"]["resourceGroups"][0]["flavors"]] == [
        "gkeml-tenant-a-nvidia-l4"
    ]


def test_node_pools_per_tier() -> None:
    a, b, c = tenants()
    (pool_a,) = [p.to_dict()["nodePools"][0] for p in a.node_pools()]
    assert pool_a["name"] == "tenant-a-nvidia-l4"
    assert pool_a["config"]["labels"] == {DEDICATED_KEY: "tenant-a"}
    assert {"key": DEDICATED_KEY, "value": "tenant-a", "effect": "NO_SCHEDULE"} in pool_a["config"][
        "taints"
    ]
    assert "spot" not in pool_a["config"]
    (pool_b,) = [p.to_dict()["nodePools"][0] for p in b.node_pools()]
    assert pool_b["name"] == "gkeml-shared-nvidia-a100-2g-10gb"
    assert pool_b["config"]["accelerators"][0]["gpuPartitionSize"] == "2g.10gb"
    assert "labels" not in pool_b["config"]
    (pool_c,) = [p.to_dict()["nodePools"][0] for p in c.node_pools()]
    assert pool_c["name"] == "gkeml-spot-nvidia-l4" and pool_c["config"]["spot"] is True


def test_a_tenants_pool_holds_the_weights_its_models_download() -> None:
    a = tenants()[0]
    (small,) = a.node_pools()
    assert "diskSizeGb" not in small.to_dict()["nodePools"][0]["config"]  # 16Gi: GKE's 100 GB
    large = a.models[0].model_dump() | {
        "model": {
            "name": "llama-70b",
            "model": "meta-llama/Llama-3.1-70B-Instruct",
            "accelerator": {"model": "l4", "count": 8},
            "hf_token_secret": "hf-token",
        }
    }
    (pool,) = renamed(a, models=[large], gpu_quota=40).node_pools()
    assert pool.boot_disk_gb == boot_disk_for(145 * GIB) == 281  # its 145Gi cache fits a node
    assert pool.node_ephemeral_storage >= 145 * GIB


def test_tenants_whose_names_share_40_characters_get_pools_of_their_own() -> None:
    a = tenants()[0]
    # 40 characters each, the longest tenant name; alike up to the last one.
    first = renamed(a, name="research-team-alpha-vision-models-east-a")
    second = renamed(a, name="research-team-alpha-vision-models-east-b")
    (pool_1,) = [p.to_dict()["nodePools"][0] for p in first.node_pools()]
    (pool_2,) = [p.to_dict()["nodePools"][0] for p in second.node_pools()]
    assert pool_1["name"] != pool_2["name"]
    for pool in (pool_1, pool_2):
        assert len(pool["name"]) <= 40 and pool["name"].startswith("research-team-alpha-")
    assert pool_1["config"]["labels"] == {DEDICATED_KEY: "research-team-alpha-vision-models-east-a"}
    # Deterministic: the same tenant compiles to the same pool every time.
    assert next(p.to_dict() for p in first.node_pools())["nodePools"][0] == pool_1


def test_egress_goes_to_dns_google_apis_and_declared_weight_sources_only() -> None:
    a = renamed(tenants()[0], weight_sources=["203.0.113.0/24"])
    policy = next(
        o
        for o in compile_tenants([a]).objects
        if o["kind"] == "NetworkPolicy" and o["metadata"]["name"] == "allow-dns-and-weights"
    )
    dns, https, metadata = policy["spec"]["egress"]
    assert dns["ports"] == [{"protocol": "UDP", "port": 53}, {"protocol": "TCP", "port": 53}]
    assert https["to"] == [
        {"ipBlock": {"cidr": "199.36.153.8/30"}},
        {"ipBlock": {"cidr": "203.0.113.0/24"}},
    ]
    assert metadata["to"] == [{"ipBlock": {"cidr": "169.254.169.254/32"}}]
    with pytest.raises(SpecError, match=r"weight_sources: 'huggingface\.co' is not a CIDR"):
        renamed(tenants()[0], weight_sources=["huggingface.co"])
