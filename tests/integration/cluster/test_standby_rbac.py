"""The standby manager does its job with exactly its namespaced Roles (`standby_manager_rbac`:
one per tenant namespace, one for its Lease) on an API server that enforces RBAC, and is
refused (403) without any one of their rules."""

from __future__ import annotations

from typing import Any

import pytest

from gkeml_sdk import KubernetesSettings
from gkeml_sdk.backends.kubernetes.api.lease import LeaseTiming
from gkeml_sdk.backends.kubernetes.standby.manager import StandbyManager
from gkeml_sdk.backends.kubernetes.standby.rbac import standby_manager_rbac
from gkeml_sdk.files import load_specs
from tests.integration.cluster.conftest import FAST_RETRY
from tests.integration.cluster.test_tenants import (
    EXAMPLE,
    cluster,
    lose_primaries,
    status,
    wait,
    weights,
)
from tests.kubeapi import KubeAPIServer

__all__ = ["cluster"]
TOKEN = "standby-manager-token"
LEASE = LeaseTiming(lease_seconds=60, renew_deadline_seconds=50, retry_seconds=0.2)


def key(rule: Any) -> str:
    named = "@" + "+".join(rule["resourceNames"]) if rule.get("resourceNames") else ""
    return f"{'+'.join(rule['resources'])}:{'+'.join(rule['verbs'])}{named}"


def as_service_account(server: KubeAPIServer, tenants: Any, without: str = "") -> StandbyManager:
    for obj in standby_manager_rbac(tenants, "default", "gkeml-controller"):
        if obj["kind"] == "Role":
            obj["rules"] = [r for r in obj["rules"] if key(r).split("@")[0] != without]
        server.store.put(obj)
    server.rbac.add_token(TOKEN, "default", "gkeml-controller")
    api = server.api_client()
    api.set_default_header("Authorization", f"Bearer {TOKEN}")
    settings = KubernetesSettings(api_client=api, api_retry=FAST_RETRY, watch_seconds=30)
    return StandbyManager(tenants, settings=settings, identity="sa", lease=LEASE)


def refused(server: KubeAPIServer) -> list[Any]:
    return [
        r
        for r in list(server.request_log)
        if r.headers.get("authorization") == f"Bearer {TOKEN}" and r.status == 403
    ]


def test_the_manager_fails_over_with_exactly_its_rules(cluster: Any) -> None:
    server, tenants, kubelet = cluster
    server.store.delete("deployments", "tenant-c", "qwen-7b-reserve")  # created again
    server.store.delete("virtualservices", "tenant-c", "tenant-c-models")  # created again
    m = as_service_account(server, tenants).start()
    try:
        wait(lambda: m.ready.is_set())
        wait(lambda: server.store.get("deployments", "tenant-c", "qwen-7b-reserve"))
        wait(lambda: server.store.get("virtualservices", "tenant-c", "tenant-c-models"))
        wait(lambda: ("tiny-llama-1b-standby-0", "/sleep?level=1") in kubelet.engine_calls)
        lose_primaries(server, "tenant-a", "llama-2-7b")
        lose_primaries(server, "tenant-b", "tiny-llama-1b")
        wait(lambda: weights(server, "tenant-a", "llama-2-7b") == [0, 100], timeout=15)
        wait(lambda: weights(server, "tenant-b", "tiny-llama-1b") == [0, 100], timeout=15)
        wait(
            lambda: {e["reason"] for e in server.store.list("events", "tenant-a")} >= {"FailedOver"}
        )
    finally:
        m.stop()
    assert m.error is None and refused(server) == []
    assert ("tiny-llama-1b-standby-0", "/wake_up") in kubelet.engine_calls
    assert status(server, "tenant-a")["failover_count"] == "1"
    # Requests really were authorized as the ServiceAccount, not as the admin.
    sent = [r for r in server.request_log if r.headers.get("authorization") == f"Bearer {TOKEN}"]
    assert len(sent) > 20


def rule_keys(tenants: Any) -> list[str]:
    """Each distinct rule of the manager's Roles, names left out (they differ per tenant)."""
    found = []
    for obj in standby_manager_rbac(tenants, "default", "gkeml-controller"):
        found += [key(r).split("@")[0] for r in obj.get("rules") or []]
    return list(dict.fromkeys(found))


EXAMPLE_TENANTS = load_specs(EXAMPLE)


@pytest.mark.parametrize("missing", rule_keys(EXAMPLE_TENANTS))
def test_without_any_one_rule_the_manager_is_refused(cluster: Any, missing: str) -> None:
    server, tenants, _ = cluster
    server.store.delete("deployments", "tenant-c", "qwen-7b-reserve")  # created again
    server.store.delete("virtualservices", "tenant-c", "tenant-c-models")  # created again
    m = as_service_account(server, tenants, without=missing).start()
    try:
        wait(lambda: refused(server) or m.ready.is_set(), timeout=15)
        if not refused(server):  # only a failover needs this rule (it writes Events)
            lose_primaries(server, "tenant-a", "llama-2-7b")
        wait(lambda: refused(server), timeout=15)
    finally:
        m.stop(release=False)
    (first, *_) = refused(server)
    resource, verbs = missing.split(":")
    assert f"/{resource.split('/')[0]}" in first.path or (
        resource == "pods/proxy" and "/proxy" in first.path
    )
    sent = {"POST": {"create"}, "PUT": {"update"}, "PATCH": {"patch"}}.get(first.method)
    assert (sent or {"get", "list", "watch"}) & set(verbs.split("+"))
