"""Gateway API CRDs (shared/crds/gateway-api/<version>/) are served and validated by the fake
API server like every other custom resource: schema types and defaults."""

from __future__ import annotations

from typing import Any

from tests.kubeapi import KubeAPIServer
from tests.kubeapi.rawhttp import send

pytest_plugins = ["tests.kubeapi.fixtures"]

ROUTES = "/apis/gateway.networking.k8s.io/v1/namespaces/ml/httproutes"


def route(port: Any) -> dict[str, Any]:
    return {
        "apiVersion": "gateway.networking.k8s.io/v1",
        "kind": "HTTPRoute",
        "metadata": {"name": "r"},
        "spec": {
            "parentRefs": [{"name": "gw"}],
            "rules": [{"backendRefs": [{"name": "s", "port": port}]}],
        },
    }


def test_httproute_from_a_versioned_subfolder_is_validated_and_defaulted(kube_api: KubeAPIServer):
    code, body = send(kube_api, "POST", ROUTES, route("eighty"))
    assert code == 422
    assert body["details"]["causes"][0]["field"] == "spec.rules[0].backendRefs[0].port"
    code, body = send(kube_api, "POST", ROUTES, route(80))
    assert code == 201
    assert body["spec"]["parentRefs"][0]["kind"] == "Gateway"  # schema default
    assert body["spec"]["rules"][0]["matches"] == [{"path": {"type": "PathPrefix", "value": "/"}}]
