"""What `gkeml controller install --tenants` grants, asked of an API server that enforces
RBAC with the installed ServiceAccount's token: each request issue 34 found the old grants
allowed is refused (403) by the authorizer, and what the controller and the standby manager
need still passes authorization. Every authenticated user may read the controller's one
Lease, and nothing else there."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from gkeml_sdk import KubernetesSettings, controller_manifests, install_controller, load_specs
from tests.kubeapi import KubeAPIServer
from tests.kubeapi.rawhttp import send

ROOT = Path(__file__).resolve().parents[2]
TENANTS = ROOT / "examples" / "tenants.yaml"
TOKEN = "controller-token"
NOTEBOOK = "notebook-token"
ACCOUNT = 'User "system:serviceaccount:gkeml-system:gkeml-controller"'
LEASES = "/apis/coordination.k8s.io/v1/namespaces"


@pytest.fixture
def server(kube_api_factory: Callable[..., KubeAPIServer]) -> KubeAPIServer:
    namespaces = ("default", "kube-system", "ml", "team-x", "tenant-a", "tenant-b", "tenant-c")
    server = kube_api_factory(namespaces=namespaces, crd_dir=None)
    tenants = load_specs(TENANTS)
    manifests = controller_manifests(
        ["ml"], image="registry.example/gkeml:1", tenants=tenants, tenants_yaml=TENANTS.read_text()
    )
    # Applied through the API as the admin, as `gkeml controller install` does.
    install_controller(manifests, settings=KubernetesSettings(api_client=server.api_client()))
    server.rbac.add_token(TOKEN, "gkeml-system", "gkeml-controller")
    server.rbac.add_token(NOTEBOOK, "ml", "default")
    return server


def lease(name: str, namespace: str) -> dict[str, Any]:
    spec = {"holderIdentity": "ghost", "leaseDurationSeconds": 2**31 - 1}
    meta = {"name": name, "namespace": namespace}
    return {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": meta, "spec": spec}


def deployment(namespace: str) -> dict[str, Any]:
    pod = {"containers": [{"name": "x", "image": "attacker/img"}], "serviceAccountName": "admin"}
    template = {"metadata": {"labels": {"a": "b"}}, "spec": pod}
    spec = {"selector": {"matchLabels": {"a": "b"}}, "template": template}
    meta = {"name": "x", "namespace": namespace}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta, "spec": spec}


CANCEL = {
    "apiVersion": "v1",
    "kind": "ConfigMap",
    "metadata": {"name": "train-gkeml-cancelled", "labels": {"gkeml.dev/run-id": "train"}},
}
HOST_PATH = {
    "apiVersion": "v1",
    "kind": "PersistentVolume",
    "metadata": {"name": "root"},
    "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
             "hostPath": {"path": "/"}},
}  # fmt: skip
STORAGE_CLASS = {
    "apiVersion": "storage.k8s.io/v1",
    "kind": "StorageClass",
    "metadata": {"name": "x"},
    "provisioner": "pd.csi.storage.gke.io",
}
MERGE = {"metadata": {"labels": {"x": "y"}}}

APPS = "/apis/apps/v1/namespaces"
CORE = "/api/v1/namespaces"
# what -> (method, path, body, the verb and resource the refusal names)
FORBIDDEN: dict[str, tuple[str, str, Any, str]] = {
    "create a Deployment in kube-system": (
        "POST",
        f"{APPS}/kube-system/deployments",
        deployment("kube-system"),
        "create deployments",
    ),
    "patch a Deployment in kube-system": (
        "PATCH",
        f"{APPS}/kube-system/deployments/coredns",
        MERGE,
        "patch deployments",
    ),
    "create a Deployment in a namespace it does not manage": (
        "POST",
        f"{APPS}/team-x/deployments",
        deployment("team-x"),
        "create deployments",
    ),
    "patch a tenant's Deployment the manager does not own": (
        "PATCH",
        f"{APPS}/tenant-a/deployments/llama-2-7b",
        MERGE,
        "patch deployments",
    ),
    "patch a Pod in kube-system": (
        "PATCH",
        f"{CORE}/kube-system/pods/coredns-1",
        MERGE,
        "patch pods",
    ),
    "patch a Pod in a managed namespace": ("PATCH", f"{CORE}/ml/pods/train-0", MERGE, "patch pods"),
    "POST pods/proxy in kube-system": (
        "POST",
        f"{CORE}/kube-system/pods/coredns-1:8080/proxy/sleep",
        None,
        "create pods/proxy",
    ),
    "POST pods/proxy in a managed namespace": (
        "POST",
        f"{CORE}/ml/pods/train-0:8000/proxy/sleep",
        None,
        "create pods/proxy",
    ),
    "create a cancel marker in an unmanaged namespace": (
        "POST",
        f"{CORE}/team-x/configmaps",
        CANCEL,
        "create configmaps",
    ),
    "create a cancel marker in a managed namespace": (
        "POST",
        f"{CORE}/ml/configmaps",
        CANCEL,
        "create configmaps",
    ),
    "create a ghost controller Lease in a managed namespace": (
        "POST",
        f"{LEASES}/ml/leases",
        lease("gkeml-run-controller", "ml"),
        "create leases",
    ),
    "create a Lease in kube-system": (
        "POST",
        f"{LEASES}/kube-system/leases",
        lease("x", "kube-system"),
        "create leases",
    ),
    "patch the controller's Lease": (
        "PATCH",
        f"{LEASES}/gkeml-system/leases/gkeml-run-controller",
        MERGE,
        "patch leases",
    ),
    "update another Lease in the controller's namespace": (
        "PUT",
        f"{LEASES}/gkeml-system/leases/other",
        lease("other", "gkeml-system"),
        "update leases",
    ),
    "create a PersistentVolume": (
        "POST",
        "/api/v1/persistentvolumes",
        HOST_PATH,
        "create persistentvolumes",
    ),
    "create a StorageClass": (
        "POST",
        "/apis/storage.k8s.io/v1/storageclasses",
        STORAGE_CLASS,
        "create storageclasses",
    ),
    "list every namespace's pods": ("GET", "/api/v1/pods", None, "list pods"),
    "read Secrets": ("GET", f"{CORE}/ml/secrets", None, "list secrets"),
}


@pytest.mark.parametrize("what", FORBIDDEN)
def test_the_installed_account_is_refused(server: KubeAPIServer, what: str) -> None:
    method, path, body, names = FORBIDDEN[what]
    content = "application/merge-patch+json" if method == "PATCH" else "application/json"
    status, answer = send(server, method, path, body, content, token=TOKEN)
    assert status == 403, answer
    verb, resource = names.split()
    assert answer["reason"] == "Forbidden"
    assert f'{ACCOUNT} cannot {verb} resource "{resource}"' in answer["message"]


ALLOWED = [
    # The run controller in its managed namespace, and its one Lease.
    ("GET", "/api/v1/namespaces/ml/configmaps?labelSelector=gkeml.dev%2Frun-record%3Dtrue", 200),
    ("GET", "/apis/jobset.x-k8s.io/v1alpha2/namespaces/ml/jobsets/train", 404),
    ("POST", f"{LEASES}/gkeml-system/leases", 201),
    ("GET", f"{LEASES}/gkeml-system/leases/gkeml-run-controller", 200),
    # The standby manager in a tenant namespace: the engine's sleep and wake.
    ("POST", "/api/v1/namespaces/tenant-b/pods/tiny-llama-1b-standby-0:8000/proxy/wake_up", 404),
    ("GET", "/apis/apps/v1/namespaces/tenant-a/deployments/llama-2-7b-standby", 404),
]


def test_what_the_controller_and_the_manager_need_passes_authorization(
    server: KubeAPIServer,
) -> None:
    for method, path, expected in ALLOWED:
        body = lease("gkeml-run-controller", "gkeml-system") if method == "POST" else None
        if "proxy" in path:
            body = None
        status, answer = send(server, method, path, body, token=TOKEN)
        assert status == expected, (method, path, answer)  # 404: authorized, then not found


def test_every_authenticated_user_may_read_only_the_controller_lease(
    server: KubeAPIServer,
) -> None:
    assert send(server, "GET", f"{LEASES}/gkeml-system/leases/gkeml-run-controller",
                token=NOTEBOOK)[0] == 404  # fmt: skip
    for path in (f"{LEASES}/gkeml-system/leases/other", f"{LEASES}/gkeml-system/leases"):
        assert send(server, "GET", path, token=NOTEBOOK)[0] == 403
    put = lease("gkeml-run-controller", "gkeml-system")
    status, _ = send(server, "PUT", f"{LEASES}/gkeml-system/leases/gkeml-run-controller", put,
                     token=NOTEBOOK)  # fmt: skip
    assert status == 403


def test_without_rollouts_it_may_not_create_a_deployment_where_it_manages_runs(
    kube_api_factory: Callable[..., KubeAPIServer],
) -> None:
    server = kube_api_factory(namespaces=("ml",), crd_dir=None)
    manifests = controller_manifests(["ml"], image="registry.example/gkeml:1", rollouts=False)
    assert (
        "--no-rollouts"
        in manifests.objects[-1]["spec"]["template"]["spec"]["containers"][0]["args"]
    )
    install_controller(manifests, settings=KubernetesSettings(api_client=server.api_client()))
    server.rbac.add_token(TOKEN, "gkeml-system", "gkeml-controller")
    post = ("POST", f"{APPS}/ml/deployments", deployment("ml"))
    status, answer = send(server, *post, token=TOKEN)
    assert status == 403, answer
    assert f'{ACCOUNT} cannot create resource "deployments"' in answer["message"]
    # With rollouts (the default) it may, there only: the rollouts it drives need it.
    install_controller(
        controller_manifests(["ml"], image="registry.example/gkeml:1"),
        settings=KubernetesSettings(api_client=server.api_client()),
    )
    assert send(server, *post, token=TOKEN)[0] == 201
