"""Tenant compile: every object valid, routing 95/5 with 3 x 5 s retries, standbys per tier,
isolation and queue objects."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from gkeml_sdk import Tenant, load_specs
from gkeml_sdk.tenancy.manifests import compile_tenant, compile_tenants
from tests.schemas import validate_object

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "tenants.yaml"
A, B, C = load_specs(EXAMPLE)


def find(objects: list[dict[str, Any]], kind: str, name: str) -> dict[str, Any]:
    return next(o for o in objects if o["kind"] == kind and o["metadata"]["name"] == name)


def env(deployment: dict[str, Any]) -> dict[str, str]:
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    return {e["name"]: e.get("value", "") for e in container.get("env", [])}


def selects(selector: dict[str, str], deployment: dict[str, Any]) -> bool:
    labels = deployment["spec"]["template"]["metadata"]["labels"]
    return all(labels.get(k) == v for k, v in selector.items())


@pytest.mark.parametrize("obj", compile_tenants([A, B, C]).objects, ids=repr)
def test_every_compiled_object_validates(obj: dict[str, Any]) -> None:
    validate_object(obj)


def test_tenant_a_llama_routes_95_5_with_three_5s_retries() -> None:
    vs = find(A.compile().objects, "VirtualService", "tenant-a-models")
    rule = next(r for r in vs["spec"]["http"] if r["name"] == "llama-2-7b")
    assert rule["match"] == [
        {"headers": {"x-tenant-id": {"exact": "tenant-a"}, "x-model-name": {"exact": "llama-2-7b"}}}
    ]
    route = {r["destination"]["host"]: r["weight"] for r in rule["route"]}
    assert route == {
        "llama-2-7b.tenant-a.svc.cluster.local": 95,
        "llama-2-7b-standby.tenant-a.svc.cluster.local": 5,
    }
    assert (rule["retries"]["attempts"], rule["retries"]["perTryTimeout"]) == (3, "5s")
    assert vs["spec"]["gateways"] == ["serving/llm-gateway"]
    # No model header: the tenant's models by weight (100 : 50).
    default = vs["spec"]["http"][-1]
    assert [r["weight"] for r in default["route"]] == [67, 33]


def test_destination_rules_eject_failing_primaries_and_standbys() -> None:
    objects = A.compile().objects
    for name in ("llama-2-7b", "llama-2-7b-standby"):
        rule = find(objects, "DestinationRule", name)
        assert rule["spec"]["host"] == f"{name}.tenant-a.svc.cluster.local"
        assert rule["spec"]["trafficPolicy"]["outlierDetection"]["maxEjectionPercent"] == 100


def test_hot_standbys_run_spread_over_zones_carry_their_env_and_share_one_budget() -> None:
    objects = A.compile().objects
    primary = find(objects, "Deployment", "llama-2-7b")
    standby = find(objects, "Deployment", "llama-2-7b-standby")
    assert standby["spec"]["replicas"] == 2
    anti = standby["spec"]["template"]["spec"]["affinity"]["podAntiAffinity"]
    term = anti["requiredDuringSchedulingIgnoredDuringExecution"][0]
    assert term["topologyKey"] == "topology.kubernetes.io/zone"
    assert selects(term["labelSelector"]["matchLabels"], standby)
    assert not selects(term["labelSelector"]["matchLabels"], primary)
    assert env(standby) | {"HF_HOME": ""} == env(standby) | {
        "TENANT_ID": "tenant-a",
        "STANDBY_LEVEL": "hot",
        "STANDBY_GPU_MEMORY_GB": "24.0",
        "HF_HOME": "",
    }
    budgets = [o for o in objects if o["kind"] == "PodDisruptionBudget"]
    over_llama = [b for b in budgets if selects(b["spec"]["selector"]["matchLabels"], primary)]
    assert len(over_llama) == 1 and over_llama[0]["spec"]["minAvailable"] == 2
    assert selects(over_llama[0]["spec"]["selector"]["matchLabels"], standby)
    hpa = find(objects, "HorizontalPodAutoscaler", "llama-2-7b")
    assert (hpa["spec"]["minReplicas"], hpa["spec"]["maxReplicas"]) == (3, 10)
    assert hpa["spec"]["behavior"]["scaleUp"]["stabilizationWindowSeconds"] == 0


def test_standby_service_selects_only_standbys() -> None:
    objects = A.compile().objects
    service = find(objects, "Service", "llama-2-7b-standby")
    assert selects(service["spec"]["selector"], find(objects, "Deployment", "llama-2-7b-standby"))
    assert not selects(service["spec"]["selector"], find(objects, "Deployment", "llama-2-7b"))


def test_warm_standby_starts_vllm_in_sleep_mode_and_takes_no_share() -> None:
    objects = B.compile().objects
    standby = find(objects, "Deployment", "tiny-llama-1b-standby")
    args = standby["spec"]["template"]["spec"]["containers"][0]["args"]
    assert "--enable-sleep-mode" in args and standby["spec"]["replicas"] == 1
    assert env(standby)["VLLM_SERVER_DEV_MODE"] == "1" and env(standby)["STANDBY_LEVEL"] == "warm"
    primary = find(objects, "Deployment", "tiny-llama-1b")
    assert "--enable-sleep-mode" not in primary["spec"]["template"]["spec"]["containers"][0]["args"]
    rule = find(objects, "VirtualService", "tenant-b-models")["spec"]["http"][0]
    assert [r["weight"] for r in rule["route"]] == [100, 0]


def test_cold_standby_is_a_zero_replica_deployment_whose_gpus_a_placeholder_holds() -> None:
    objects = C.compile().objects
    standby = find(objects, "Deployment", "qwen-7b-standby")
    assert standby["spec"]["replicas"] == 0
    reserve = find(objects, "Deployment", "qwen-7b-reserve")
    pod = reserve["spec"]["template"]["spec"]
    assert pod["priorityClassName"] == "gkeml-standby-reserve"
    assert pod["containers"][0]["resources"]["requests"]["nvidia.com/gpu"] == 1
    assert pod["nodeSelector"] == standby["spec"]["template"]["spec"]["nodeSelector"]
    klass = find(compile_tenants([C]).objects, "PriorityClass", "gkeml-standby-reserve")
    tier_c = find(compile_tenants([C]).objects, "PriorityClass", "gkeml-tier-c-10")
    assert klass["value"] < tier_c["value"] and klass["preemptionPolicy"] == "Never"
    assert tier_c["preemptionPolicy"] == "Never"


def test_cluster_queues_share_a_cohort_with_the_tier_preemption() -> None:
    objects = compile_tenants([A, B, C]).objects
    cqs = {o["metadata"]["name"]: o["spec"] for o in objects if o["kind"] == "ClusterQueue"}
    assert {s["cohortName"] for s in cqs.values()} == {"gkeml-tenants"}
    assert cqs["tenant-a"]["preemption"]["reclaimWithinCohort"] == "Any"
    assert cqs["tenant-a"]["preemption"]["borrowWithinCohort"] == {"policy": "LowerPriority"}
    assert cqs["tenant-b"]["preemption"]["reclaimWithinCohort"] == "LowerPriority"
    assert cqs["tenant-c"]["preemption"]["reclaimWithinCohort"] == "Never"
    gpus = cqs["tenant-a"]["resourceGroups"][0]["flavors"][0]["resources"][0]
    assert gpus == {"name": "nvidia.com/gpu", "nominalQuota": "16"}
    local = find(objects, "LocalQueue", "tenant-a")
    assert local["spec"]["clusterQueue"] == "tenant-a"
    primary = find(objects, "Deployment", "llama-2-7b")
    assert primary["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == "tenant-a"
    assert primary["spec"]["template"]["spec"]["priorityClassName"] == "gkeml-tier-a-100000"
    assert find(objects, "WorkloadPriorityClass", "gkeml-tier-a-100000")["value"] == 100000


def test_namespace_is_walled_in() -> None:
    objects = A.compile().objects
    quota = find(objects, "ResourceQuota", "gpu-quota")
    assert quota["spec"]["hard"] == {"requests.nvidia.com/gpu": "16"}
    deny = find(objects, "NetworkPolicy", "default-deny")["spec"]
    assert deny == {"podSelector": {}, "policyTypes": ["Ingress", "Egress"]}
    gateway = find(objects, "NetworkPolicy", "allow-gateway")["spec"]["ingress"][0]["from"][0]
    assert gateway["namespaceSelector"]["matchLabels"] == {"kubernetes.io/metadata.name": "serving"}
    role = find(objects, "Role", "tenant-reader")
    assert {v for rule in role["rules"] for v in rule["verbs"]} == {"get", "list", "watch"}
    account = find(objects, "ServiceAccount", "tenant-serving")
    assert account["automountServiceAccountToken"] is False
    primary = find(objects, "Deployment", "llama-2-7b")
    assert primary["spec"]["template"]["spec"]["serviceAccountName"] == "tenant-serving"


def test_compile_is_deterministic() -> None:
    assert compile_tenant(A).to_yaml() == compile_tenant(load_specs(EXAMPLE)[0]).to_yaml()


GATEWAY = Tenant.model_validate(
    A.model_dump() | {"routing": "inference-gateway", "gateway_cidrs": ["10.129.0.0/23"]}
)
NO_SCHEMA = {"HealthCheckPolicy", "GCPBackendPolicy"}  # GKE's CRDs are not published


@pytest.mark.parametrize(
    "obj",
    [o for o in compile_tenants([GATEWAY]).objects
     if o["kind"] not in NO_SCHEMA],
    ids=repr,
)  # fmt: skip
def test_inference_gateway_objects_validate(obj: dict[str, Any]) -> None:
    validate_object(obj)


def test_inference_gateway_routes_95_5_over_pools_of_primary_and_standby() -> None:
    objects = GATEWAY.compile().objects
    route = find(objects, "HTTPRoute", "tenant-a-models")
    assert route["spec"]["parentRefs"] == [{"name": "llm-gateway", "namespace": "serving"}]
    rule = next(r for r in route["spec"]["rules"] if r["name"] == "llama-2-7b")
    headers = {h["name"]: h["value"] for h in rule["matches"][0]["headers"]}
    assert headers == {"x-tenant-id": "tenant-a", "x-model-name": "llama-2-7b"}
    assert [(b["kind"], b["name"], b["weight"]) for b in rule["backendRefs"]] == [
        ("InferencePool", "llama-2-7b", 95),
        ("InferencePool", "llama-2-7b-standby", 5),
    ]
    pool = find(objects, "InferencePool", "llama-2-7b-standby")
    assert selects(
        pool["spec"]["selector"]["matchLabels"], find(objects, "Deployment", "llama-2-7b-standby")
    )
    assert not selects(
        pool["spec"]["selector"]["matchLabels"], find(objects, "Deployment", "llama-2-7b")
    )
    assert pool["spec"]["endpointPickerRef"]["name"] == "llama-2-7b-standby-epp"
    health = find(objects, "HealthCheckPolicy", "llama-2-7b-standby")
    assert health["spec"]["targetRef"]["name"] == "llama-2-7b-standby"
    assert not [o for o in objects if o["kind"] in ("VirtualService", "DestinationRule")]
    callers = find(objects, "NetworkPolicy", "allow-gateway")["spec"]["ingress"][0]
    assert {"ipBlock": {"cidr": "10.129.0.0/23"}} in callers["from"]
    assert {"protocol": "TCP", "port": 9002} in callers["ports"]
