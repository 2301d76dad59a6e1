"""`pods/proxy` on the fake API server answers as kube-apiserver does: 404 for an unknown
pod, 503 for a pod without an IP or with nothing listening, the pod's answer otherwise;
and Leases refuse a stale update with 409."""

from __future__ import annotations

from typing import Any

from tests.kubeapi import KubeAPIServer
from tests.kubeapi.rawhttp import send

pytest_plugins = ["tests.kubeapi.fixtures"]

PROXY = "/api/v1/namespaces/ml/pods/p:8000/proxy/wake_up"


def pod(ip: str | None) -> dict[str, Any]:
    status = {"phase": "Running", **({"podIP": ip} if ip else {})}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "ml"},
        "spec": {"containers": [{"name": "c", "image": "i", "ports": [{"containerPort": 8000}]}]},
        "status": status,
    }


def test_proxy_reaches_only_a_pod_that_listens(kube_api: KubeAPIServer) -> None:
    code, body = send(kube_api, "POST", PROXY, {})
    assert (code, body["reason"]) == (404, "NotFound")
    kube_api.store.put(pod(None))
    code, body = send(kube_api, "POST", PROXY, {})
    assert (code, body["reason"]) == (503, "ServiceUnavailable")
    kube_api.store.put(pod("10.0.0.9"))
    code, body = send(kube_api, "POST", PROXY, {})
    assert code == 503 and "connection refused" in body["message"]
    calls = []
    kube_api.pod_proxy.serve("ml", "p", 8000, lambda m, path, b: (calls.append(path), (200, {}))[1])
    # A client quotes ':' in the pod segment; the server decodes the path first.
    code, _ = send(kube_api, "POST", PROXY.replace("p:8000", "p%3A8000") + "?level=1", {})
    assert code == 200 and calls == ["/wake_up?level=1"]


def test_a_stale_lease_update_is_a_conflict(kube_api: KubeAPIServer) -> None:
    leases = "/apis/coordination.k8s.io/v1/namespaces/ml/leases"
    lease = {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {"name": "l"},
        "spec": {"holderIdentity": "a", "leaseDurationSeconds": 15},
    }
    code, created = send(kube_api, "POST", leases, lease)
    assert code == 201
    renewed = {**created, "spec": {**created["spec"], "holderIdentity": "b"}}
    assert send(kube_api, "PUT", f"{leases}/l", renewed)[0] == 200
    stale = {**created, "spec": {**created["spec"], "holderIdentity": "c"}}
    code, body = send(kube_api, "PUT", f"{leases}/l", stale)
    assert (code, body["reason"]) == (409, "Conflict")
