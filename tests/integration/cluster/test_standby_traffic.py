"""The failover bench's router (`tests/bench/traffic.py`) routes as the compiled route does:
one pick by weight per request, every retry to the destination picked, so the lost primary's
share fails until the route moves; a standby the route points at serves only while its
engine is awake."""

from __future__ import annotations

import random
from typing import Any

from gkeml_sdk.backends.kubernetes.standby.user_traffic import pick, route_split
from gkeml_sdk.tenancy.routes import RETRY_ATTEMPTS
from tests.bench.traffic import Router, get
from tests.integration.cluster.test_tenants import (
    FAST_LEASE,
    cluster,
    lose_primaries,
    manager,
    wait,
)

__all__ = ["cluster"]
MODEL, STANDBY = "llama-2-7b", "llama-2-7b-standby"


def ready(server: Any, tenant: str, serve: str) -> bool:
    pods = server.store.list("pods", tenant, f"gkeml.dev/serve={serve}")
    return bool(pods) and all(p["status"].get("conditions") for p in pods)


def test_the_lost_primarys_share_fails_with_its_retries_until_the_route_moves(
    cluster: Any,
) -> None:
    server, _, kubelet = cluster
    wait(lambda: ready(server, "tenant-a", STANDBY))
    lose_primaries(server, "tenant-a", MODEL)  # no manager: the route stays 95/5
    with Router(kubelet, [("tenant-a", MODEL)], seed=3) as router:
        answers = [get(router.port(MODEL), "/v1/completions") for _ in range(200)]
        route = server.store.get("virtualservices", "tenant-a", "tenant-a-models")
        draws = random.Random(3)
        chosen = [pick(route_split(route, MODEL), draws) for _ in range(200)]
        assert [body for _, body in answers] == [
            b"no healthy upstream" if c == MODEL else b"standby" for c in chosen
        ]
        assert router.tries(MODEL) == chosen.count(MODEL) * (1 + RETRY_ATTEMPTS)
        assert router.tries(STANDBY) == chosen.count(STANDBY)


def test_a_route_at_a_sleeping_standby_fails_until_it_is_woken(cluster: Any) -> None:
    server, _, kubelet = cluster
    tenant, model = "tenant-b", "tiny-llama-1b"
    wait(lambda: ready(server, tenant, f"{model}-standby"))
    lose_primaries(server, tenant, model)
    vs = server.store.get("virtualservices", tenant, f"{tenant}-models")
    rule = next(r for r in vs["spec"]["http"] if r["name"] == model)
    rule["route"][0]["weight"], rule["route"][1]["weight"] = 0, 100
    server.store.put(vs)
    pod = (tenant, f"{model}-standby-0")
    kubelet.sleeping[pod] = True  # a late /sleep
    with Router(kubelet, [(tenant, model)]) as router:
        assert get(router.port(model), "/")[0] == 503
        kubelet.sleeping[pod] = False
        assert get(router.port(model), "/") == (200, b"standby")


def test_a_drill_with_the_leader_killed_counts_the_requests_failed_during_the_takeover(
    cluster: Any,
) -> None:
    server, tenants, _ = cluster
    leader = manager(server, tenants, "one", FAST_LEASE).start()
    wait(lambda: leader.leading and leader.ready.is_set())
    survivor = manager(server, tenants, "two", FAST_LEASE).start()
    try:
        wait(lambda: survivor.ready.is_set())
        killed = lambda: leader.stop(release=False, wait=False)  # noqa: E731 - a crash
        row = survivor.drill("tenant-b", "tiny-llama-1b", timeout=30, on_loss=killed).rows[0]
    finally:
        leader.stop(release=False)
        survivor.stop()
    assert row.met and survivor.elector.holder == "two"
    # Tier B routes nothing to its standby until the survivor took the Lease and woke it:
    # the requests of that time failed, retries and all.
    assert 1 <= row.failed <= row.requests
