"""The standby manager on the fake API server: tenants applied as a strict server takes
them, a drill per tier within its objective, two managers that never double-create, and a
manager killed mid-failover whose successor finishes the failover."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from gkeml_sdk import KubernetesSettings, compile_tenants, load_specs
from gkeml_sdk.backends.kubernetes.api.kube import KubeClient
from gkeml_sdk.backends.kubernetes.api.lease import LeaseTiming
from gkeml_sdk.backends.kubernetes.api.transport import Transport
from gkeml_sdk.backends.kubernetes.standby.drill import DrillReport
from gkeml_sdk.backends.kubernetes.standby.manager import StandbyManager
from gkeml_sdk.backends.kubernetes.standby.tenant_apply import apply_tenants
from tests.integration.cluster.conftest import FAST_RETRY
from tests.kubeapi import KubeAPIServer
from tests.kubeapi.kubelet import FakeKubelet
from tests.stored_records import UNVERSIONED_TENANT_STATUS

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "tenants.yaml"
# A successor takes over within a second of a crash: for the test of exactly that.
FAST_LEASE = LeaseTiming(lease_seconds=1, renew_deadline_seconds=0.8, retry_seconds=0.2)
# Everywhere else: on a loaded machine a 0.8 s renewal deadline can pass, and a manager that
# steps down between its status write and its Events loses the Events.
STEADY_LEASE = LeaseTiming(lease_seconds=60, renew_deadline_seconds=50, retry_seconds=0.2)
STANDBY_START = 1.0  # a new hot/warm standby pod's start-up on the fake kubelet
COLD_START = 2.0  # a cold standby: the pod starts from nothing


def start_seconds(deployment: dict[str, Any]) -> float:
    name = deployment["metadata"]["name"]
    if not name.endswith("-standby"):
        return 0.0
    return COLD_START if deployment["metadata"]["namespace"] == "tenant-c" else STANDBY_START


def wait(check: Callable[[], Any], timeout: float = 10.0) -> Any:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        value = check()
        if value:
            return value
        time.sleep(0.02)
    raise AssertionError("condition not reached")


@pytest.fixture
def cluster(kube_api_factory: Callable[..., KubeAPIServer]) -> Iterator[Any]:
    server = kube_api_factory(namespaces=("default", "kube-system", "serving"))
    tenants = load_specs(EXAMPLE)
    apply_tenants(KubeClient(Transport(server.api_client(), api_retry=FAST_RETRY)), tenants)
    kubelet = FakeKubelet(server, [t.namespace for t in tenants], start_seconds, 0.2)
    kubelet.start()
    yield server, tenants, kubelet
    kubelet.stop()


def manager(
    server: KubeAPIServer, tenants: Any, identity: str, lease: LeaseTiming = STEADY_LEASE
) -> StandbyManager:
    settings = KubernetesSettings(
        api_client=server.api_client(), api_retry=FAST_RETRY, watch_seconds=30
    )
    return StandbyManager(tenants, settings=settings, identity=identity, lease=lease)


def weights(server: KubeAPIServer, tenant: str, model: str) -> list[int]:
    vs = server.store.get("virtualservices", tenant, f"{tenant}-models")
    rule = next(r for r in vs["spec"]["http"] if r["name"] == model)
    return [r["weight"] for r in rule["route"]]


def lose_primaries(
    server: KubeAPIServer, tenant: str = "tenant-a", model: str = "llama-2-7b"
) -> None:
    # The fake kubelet makes the pods on its own thread: on a loaded machine a test can get
    # here first, and a loss of no pods is no loss.
    pods = wait(lambda: server.store.list("pods", tenant, f"gkeml.dev/serve={model}"))
    for pod in pods:
        not_ready = {"status": {"conditions": [{"type": "Ready", "status": "False"}]}}
        server.store.patch("pods", tenant, pod["metadata"]["name"], not_ready)


def status(server: KubeAPIServer, tenant: str) -> dict[str, str]:
    found = server.store.get("configmaps", tenant, "gkeml-tenant-status")
    return dict((found or {}).get("data") or {})


def test_a_drill_per_tier_meets_its_objective(cluster: Any) -> None:
    server, tenants, kubelet = cluster
    m = manager(server, tenants, "one").start()
    try:
        rows = [m.drill(t.name, t.models[0].name, timeout=30).rows[0] for t in tenants]
    finally:
        m.stop()
    print("\n" + DrillReport(tuple(rows)).table())
    assert all(row.met for row in rows), rows
    a, b, c = rows
    # Hot: the standby already runs and takes traffic (the route moves before the standbys
    # restored after it have started); only the manager's watch delays it.
    assert a.recovery_seconds < a.restore_seconds
    assert (a.standbys_left, a.standbys_restored) == (0, 2)
    assert a.restore_seconds >= STANDBY_START
    # Warm: woken through the API server's pod proxy before the route moves.
    assert ("tiny-llama-1b-standby-0", "/sleep?level=1") in kubelet.engine_calls
    assert ("tiny-llama-1b-standby-0", "/wake_up") in kubelet.engine_calls
    assert b.recovery_seconds >= 0.2 and b.standbys_restored == 1
    # Cold: created on failover; recovery includes its start.
    assert c.recovery_seconds >= COLD_START
    # Users' requests during the failover: the cold tier routes all to the lost primary
    # until its standby has started, so at least the requests of those 2 s fail.
    assert all(row.requests >= 1 and 0 <= row.failed <= row.requests for row in rows)
    assert c.failed >= 1
    for tenant in ("tenant-a", "tenant-b", "tenant-c"):
        data = status(server, tenant)
        assert data["failover_count"] == "1" and data["last_failover"]
        assert data["failing_over"] == ""
    events = {e["reason"] for e in server.store.list("events", "tenant-a")}
    assert {"PrimaryLost", "FailedOver", "FailedBack"} <= events
    # Back to the normal split after the drill.
    assert weights(server, "tenant-a", "llama-2-7b") == [95, 5]
    assert (
        server.store.get("deployments", "tenant-a", "llama-2-7b-standby")["spec"]["replicas"] == 2
    )


COSTS = {
    "tenant-a": (  # hot
        "llama-2-7b",
        [
            ("PUT", "configmaps"),  # failover_count, last_failover, failing_over
            ("GET", "virtualservices"),  # read under the Lease: its resourceVersion
            ("PUT", "virtualservices"),  # route 0/100, with that resourceVersion
            ("PATCH", "deployments"),  # standbys 2 -> 4: restore the count
            ("POST", "events"),  # PrimaryLost
            ("POST", "events"),  # FailedOver
        ],
    ),
    "tenant-b": (  # warm
        "tiny-llama-1b",
        [
            ("PUT", "configmaps"),
            ("POST", "pods"),  # POST .../pods/POD:8000/proxy/wake_up, before the route moves
            ("GET", "virtualservices"),
            ("PUT", "virtualservices"),
            ("PATCH", "deployments"),  # 1 -> 2
            ("POST", "events"),
            ("POST", "events"),
        ],
    ),
    "tenant-c": (  # cold
        "qwen-7b",
        [
            ("PUT", "configmaps"),
            ("PATCH", "deployments"),  # 0 -> 1: the cold standby starts
            ("POST", "events"),
            ("GET", "virtualservices"),  # once it is ready
            ("PUT", "virtualservices"),
            ("POST", "events"),
        ],
    ),
}


def frozen_clock() -> float:
    """A clock that never moves: no resync, no throttled allocation write, during a count."""
    return 0.0


@pytest.mark.parametrize("tenant", sorted(COSTS))
def test_what_one_failover_costs_in_api_requests(cluster: Any, tenant: str) -> None:
    server, tenants, kubelet = cluster
    model, expected = COSTS[tenant]
    the_tenant = next(t for t in tenants if t.name == tenant)
    settings = KubernetesSettings(
        api_client=server.api_client(), api_retry=FAST_RETRY, watch_seconds=30
    )
    m = StandbyManager(
        tenants, settings=settings, identity="one", lease=STEADY_LEASE, clock=frozen_clock
    )
    m.start()
    worker = lambda: next(w for w in m.workers if w.tenant.name == tenant)  # noqa: E731
    standbys = f"gkeml.dev/serve={model}-standby"
    pods = lambda: server.store.list("pods", tenant, standbys)  # noqa: E731
    asleep = the_tenant.tier.standby_level == "warm"
    running = 0 if the_tenant.tier.standby_level == "cold" else the_tenant.tier.standbys
    try:
        assert m.ready.wait(10)
        wait(lambda: status(server, tenant).get("ready_seen"))
        wait(lambda: len([p for p in pods() if p["status"].get("conditions")]) == running, 20)
        if asleep:  # the warm standby is put to sleep before the count starts
            wait(lambda: all(kubelet.sleeping[(tenant, p["metadata"]["name"])] for p in pods()))
        wait(lambda: worker().clean and m.elector.leading)
        before = time.monotonic()
        lose_primaries(server, tenant, model)  # the test plays the kubelet: not a request
        wait(lambda: weights(server, tenant, model) == [0, 100], timeout=20)
        events = lambda: server.store.list("events", tenant)  # noqa: E731
        wait(lambda: len(events()) == sum(1 for c in expected if c[1] == "events"))
        wait(lambda: worker().clean)
        log = [r for r in list(server.request_log) if r.started >= before and not r.watch]
    finally:
        m.stop()
    calls = [
        (r.method, r.path.split(f"/namespaces/{tenant}/")[1].split("/")[0])
        for r in log
        if f"/namespaces/{tenant}/" in r.path
    ]
    print(f"\none failover of {tenant}/{model}: {len(calls)} API requests: {calls}")
    assert sorted(calls) == sorted(expected)
    assert {r.method for r in log if "/leases/" in r.path} <= {"GET", "PUT"}
    assert all(r.status in (200, 201) for r in log if f"/namespaces/{tenant}/" in r.path)


def test_two_managers_never_double_create_standbys(cluster: Any) -> None:
    server, tenants, _ = cluster
    server.store.delete("deployments", "tenant-a", "llama-2-7b-standby")
    before = time.monotonic()
    first, second = manager(server, tenants, "one"), manager(server, tenants, "two")
    first.start()
    second.start()
    try:
        wait(lambda: server.store.get("deployments", "tenant-a", "llama-2-7b-standby"))
        time.sleep(1.0)
        assert first.leading != second.leading
        # Writes that took effect: a pass that runs before its watch shows the create may send
        # it again, and the server refuses that one (409 AlreadyExists).
        writes = [
            r
            for r in list(server.request_log)
            if r.started >= before
            and r.method != "GET"
            and (r.status is None or r.status < 300)  # no answer: counted, it may have landed
            and (
                r.path.endswith("/deployments/llama-2-7b-standby")
                or (r.method == "POST" and r.path.endswith("/tenant-a/deployments"))
            )
        ]
        assert len(writes) == 1
        lease = server.store.get("leases", "default", "gkeml-standby-manager")
        assert lease["spec"]["holderIdentity"] in ("one", "two")
    finally:
        first.stop()
        second.stop()


def test_a_manager_killed_mid_failover_is_finished_by_the_next(cluster: Any) -> None:
    server, tenants, _ = cluster
    first = manager(server, tenants, "one", FAST_LEASE).start()
    wait(lambda: status(server, "tenant-a").get("ready_seen") and first.leading)
    wait(lambda: weights(server, "tenant-a", "llama-2-7b") == [95, 5])
    # The route update fails while the first manager runs: it dies before finishing.
    rule = server.faults.inject("500", count=None, match=("PUT", "virtualservices"))
    lose_primaries(server)
    wait(lambda: status(server, "tenant-a")["failing_over"] == "llama-2-7b")
    wait(lambda: rule.hits >= 1)
    first.stop(release=False)  # a crash: the Lease is left to expire
    server.faults.clear()
    assert weights(server, "tenant-a", "llama-2-7b") == [95, 5]
    second = manager(server, tenants, "two", FAST_LEASE).start()
    try:
        wait(lambda: weights(server, "tenant-a", "llama-2-7b") == [0, 100], timeout=10)
        assert status(server, "tenant-a")["failover_count"] == "1"
        lease = server.store.get("leases", "default", "gkeml-standby-manager")
        assert lease["spec"]["holderIdentity"] == "two"
        assert lease["spec"]["leaseTransitions"] == 1
    finally:
        second.stop()


def status_configmap(tenant: str, data: dict[str, str]) -> dict[str, Any]:
    meta = {"name": "gkeml-tenant-status", "namespace": tenant}
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": data}


def test_a_status_written_before_schemas_keeps_its_count_and_gains_a_schema(cluster: Any) -> None:
    server, tenants, _ = cluster
    server.store.put(status_configmap("tenant-a", UNVERSIONED_TENANT_STATUS))
    m = manager(server, tenants, "one").start()
    try:
        data = wait(lambda: (d := status(server, "tenant-a")).get("schema") == "1" and d)
    finally:
        m.stop()
    assert m.error is None
    assert (data["failover_count"], data["last_failover"]) == ("2", "2026-01-01T00:00:00Z")


def test_a_drill_through_the_inference_gateway_moves_the_httproute(
    kube_api_factory: Callable[..., KubeAPIServer],
) -> None:
    server = kube_api_factory(namespaces=("default", "kube-system", "serving"))
    a = load_specs(EXAMPLE)[0]
    gateway = type(a).model_validate(
        a.model_dump() | {"routing": "inference-gateway", "gateway_cidrs": ["10.129.0.0/23"]}
    )
    kube = KubeClient(Transport(server.api_client(), api_retry=FAST_RETRY))
    for obj in compile_tenants([gateway]).objects:
        # GKE's HealthCheckPolicy/GCPBackendPolicy CRDs are not published: this cluster lacks them.
        if obj["kind"] not in ("HealthCheckPolicy", "GCPBackendPolicy"):
            kube.apply(obj)
    kubelet = FakeKubelet(server, ["tenant-a"], start_seconds)
    kubelet.start()
    m = manager(server, [gateway], "one").start()
    try:
        row = m.drill("tenant-a", "llama-2-7b", timeout=30).rows[0]
    finally:
        m.stop()
        kubelet.stop()
    assert row.met and row.recovery_seconds < STANDBY_START
    route = server.store.get("httproutes", "tenant-a", "tenant-a-models")
    rule = next(r for r in route["spec"]["rules"] if r["name"] == "llama-2-7b")
    assert [b["weight"] for b in rule["backendRefs"]] == [95, 5]  # failed back after the drill
    assert status(server, "tenant-a")["failover_count"] == "1"
