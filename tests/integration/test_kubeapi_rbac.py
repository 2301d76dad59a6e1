"""RBAC in the fake API server, as kube-apiserver's authorizer decides: a Role's rules bind
in their namespace only, resourceNames allow named requests only (never list or create),
subresources are their own resource (`pods/proxy`), and the Forbidden message is the real
one. Requests without a registered token stay the admin."""

from __future__ import annotations

import json
from typing import Any

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

from tests.kubeapi import KubeAPIServer


@pytest.fixture
def api(kube_api: KubeAPIServer) -> Any:
    kube_api.create_namespace("a")
    kube_api.create_namespace("b")
    for ns in ("a", "b"):
        for name in ("x", "y"):
            meta = {"name": name, "namespace": ns}
            kube_api.store.put({"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta})
    role = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "Role",
        "metadata": {"name": "reader", "namespace": "a"},
        "rules": [
            {
                "apiGroups": [""],
                "resources": ["configmaps"],
                "resourceNames": ["x"],
                "verbs": ["get"],
            },
            {"apiGroups": [""], "resources": ["pods/proxy"], "verbs": ["create"]},
        ],
    }
    binding = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "RoleBinding",
        "metadata": {"name": "reader", "namespace": "a"},
        "subjects": [{"kind": "ServiceAccount", "name": "sa", "namespace": "a"}],
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "reader"},
    }
    kube_api.store.put(role)
    kube_api.store.put(binding)
    kube_api.rbac.add_token("t", "a", "sa")
    api_client = kube_api.api_client(retries=False)
    api_client.set_default_header("Authorization", "Bearer t")
    return client.CoreV1Api(api_client)


def refusal(call: Any) -> str:
    with pytest.raises(ApiException) as err:
        call()
    assert err.value.status == 403
    return str(json.loads(err.value.body)["message"])


def test_a_role_allows_its_named_object_in_its_namespace_only(api: Any) -> None:
    assert api.read_namespaced_config_map("x", "a").metadata.name == "x"
    user = 'User "system:serviceaccount:a:sa"'
    assert refusal(lambda: api.read_namespaced_config_map("y", "a")) == (
        f'configmaps "y" is forbidden: {user} cannot get resource "configmaps" in API group "" '
        'in the namespace "a"'
    )
    assert "cannot list resource" in refusal(lambda: api.list_namespaced_config_map("a"))
    assert 'in the namespace "b"' in refusal(lambda: api.read_namespaced_config_map("x", "b"))
    assert "at the cluster scope" in refusal(lambda: api.list_config_map_for_all_namespaces())


def test_a_subresource_is_its_own_resource(api: Any) -> None:
    refused = refusal(lambda: api.read_namespaced_pod("p", "a"))
    assert 'cannot get resource "pods"' in refused
    # pods/proxy create is granted: the request passes authorization and finds no pod.
    with pytest.raises(ApiException) as err:
        api.connect_post_namespaced_pod_proxy_with_path("p:8000", "a", "wake_up")
    assert err.value.status == 404


def test_requests_without_a_registered_token_stay_the_admin(kube_api: KubeAPIServer) -> None:
    v1 = client.CoreV1Api(kube_api.api_client())
    assert v1.list_namespace().items
