"""Tier names and isolation across tenants: conflicting tier definitions and Spot on an
exclusive tier are refused; an exclusive tenant's pods carry a toleration no other tenant's
pods carry and select its own tainted, non-Spot node pool; egress goes to declared ranges."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from gkeml_sdk import SpecError, Tenant, compile_tenants, load_specs
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


def test_a_tier_redefined_by_another_tenant_is_refused_naming_both() -> None:
    a, b, c = tenants()
    intruder = renamed(c, name="tenant-x", tier={"name": "a", "like": "C"})
    with pytest.raises(SpecError) as err:
        compile_tenants([a, b, intruder])
    text = str(err.value)
    assert "'tenant-a'" in text and "'tenant-x'" in text and "tier 'a'" in text
    assert "priority 100000, exclusive" in text and "priority 10, preemptible" in text
    # The same definition under the same name is one shared PriorityClass, not a conflict.
    twin = renamed(a, name="tenant-a2")
    classes = [o for o in compile_tenants([a, twin]).objects if o["kind"] == "PriorityClass"]
    assert [o["metadata"]["name"] for o in classes] == ["gkeml-standby-reserve", "gkeml-tier-a"]


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
