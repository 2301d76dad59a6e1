"""The fake kube-apiserver's storage kinds: cluster-scoped paths, the apiserver's defaults,
and the update rules that keep StorageClass, PersistentVolume and claim specs immutable."""

from __future__ import annotations

from typing import Any

from kubernetes import client

from tests.gke_crds import GCP_DATA_SOURCE
from tests.kubeapi.rawhttp import send

pytest_plugins = ["tests.kubeapi.fixtures"]

SC_PATH = "/apis/storage.k8s.io/v1/storageclasses"
PV_PATH = "/api/v1/persistentvolumes"
PVC_PATH = "/api/v1/namespaces/ml/persistentvolumeclaims"
APPLY = "?fieldManager=t&force=true"
YAML = "application/apply-patch+yaml"
CRD = GCP_DATA_SOURCE


def storage_class(**fields: Any) -> dict[str, Any]:
    return {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
            "metadata": {"name": "hdml"}, "provisioner": "pd.csi.storage.gke.io",
            "parameters": {"type": "hyperdisk-ml"}, **fields}  # fmt: skip


def claim(size: str = "300Gi", **spec: Any) -> dict[str, Any]:
    body = {"accessModes": ["ReadOnlyMany"], "storageClassName": "hdml",
            "resources": {"requests": {"storage": size}}, **spec}  # fmt: skip
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
            "metadata": {"name": "w", "namespace": "ml"}, "spec": body}  # fmt: skip


def volume(handle: str = "p/z/i/default-pool/default-container") -> dict[str, Any]:
    spec = {"capacity": {"storage": "12000Gi"}, "accessModes": ["ReadWriteMany"],
            "storageClassName": "", "csi": {"driver": "parallelstore.csi.storage.gke.io",
                                            "volumeHandle": handle}}  # fmt: skip
    return {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "ml-s"},
            "spec": spec}  # fmt: skip


def test_storage_class_defaults_and_immutable_parameters(kube_api):
    code, created = send(kube_api, "POST", SC_PATH, storage_class())
    assert code == 201
    assert (created["reclaimPolicy"], created["volumeBindingMode"]) == ("Delete", "Immediate")
    assert "namespace" not in created["metadata"]
    code, body = send(kube_api, "PATCH", f"{SC_PATH}/hdml{APPLY}",
                      storage_class(parameters={"type": "pd-ssd"}), YAML)  # fmt: skip
    assert code == 422
    assert body["message"] == (
        'StorageClass.storage.k8s.io "hdml" is invalid: parameters: Forbidden: updates to '
        "parameters are forbidden."
    )
    code, body = send(kube_api, "PATCH", f"{SC_PATH}/hdml{APPLY}",
                      storage_class(volumeBindingMode="WaitForFirstConsumer"), YAML)  # fmt: skip
    assert code == 422
    assert body["details"]["causes"] == [
        {
            "reason": "FieldValueInvalid",
            "message": 'Invalid value: "WaitForFirstConsumer": field is immutable',
            "field": "volumeBindingMode",
        }
    ]
    labelled = storage_class(metadata={"name": "hdml", "labels": {"a": "b"}})
    assert send(kube_api, "PATCH", f"{SC_PATH}/hdml{APPLY}", labelled, YAML)[0] == 200
    # Cluster-scoped: there is no namespaced path.
    code, _ = send(kube_api, "GET", "/apis/storage.k8s.io/v1/namespaces/ml/storageclasses/hdml")
    assert code == 404


def test_claim_defaults_data_source_and_immutable_spec(kube_api):
    ref = {"apiGroup": "datalayer.gke.io", "kind": "GCPDataSource", "name": "w"}
    code, created = send(kube_api, "POST", PVC_PATH, claim(dataSourceRef=ref))
    assert code == 201
    assert created["spec"]["volumeMode"] == "Filesystem"
    assert created["spec"]["dataSource"] == ref  # AnyVolumeDataSource keeps both in step
    assert created["status"] == {"phase": "Pending"}
    code, body = send(kube_api, "PATCH", f"{PVC_PATH}/w{APPLY}",
                      claim("400Gi", dataSourceRef=ref), YAML)  # fmt: skip
    assert code == 422
    assert body["message"] == (
        'PersistentVolumeClaim "w" is invalid: spec: Forbidden: spec is immutable after '
        "creation except resources.requests and volumeAttributesClassName for bound claims"
    )
    # Bound: the claim may grow, but not shrink below its capacity.
    status = {"phase": "Bound", "capacity": {"storage": "300Gi"}}
    kube_api.store.update_status("persistentvolumeclaims", "ml", "w", status)
    grown = claim("400Gi", dataSourceRef=ref)
    assert send(kube_api, "PATCH", f"{PVC_PATH}/w{APPLY}", grown, YAML)[0] == 200
    code, body = send(kube_api, "PATCH", f"{PVC_PATH}/w{APPLY}",
                      claim("200Gi", dataSourceRef=ref), YAML)  # fmt: skip
    assert code == 422
    assert body["details"]["causes"][0] == {
        "reason": "FieldValueForbidden",
        "message": "Forbidden: field can not be less than status.capacity",
        "field": "spec.resources.requests.storage",
    }


def test_claim_shape_is_validated(kube_api):
    bad = claim()
    bad["spec"]["accessModes"] = "ReadOnlyMany"
    code, body = send(kube_api, "POST", PVC_PATH, bad)
    assert code == 422 and body["details"]["causes"][0]["field"] == "spec.accessModes"


def test_persistent_volume_is_cluster_scoped_and_its_source_immutable(kube_api):
    code, created = send(kube_api, "POST", PV_PATH, volume())
    assert code == 201
    assert created["spec"]["persistentVolumeReclaimPolicy"] == "Retain"
    assert created["status"] == {"phase": "Pending"}
    assert send(kube_api, "GET", "/api/v1/namespaces/ml/persistentvolumes/ml-s")[0] == 404
    code, body = send(kube_api, "PATCH", f"{PV_PATH}/ml-s{APPLY}", volume("other"), YAML)
    assert code == 422
    assert body["message"] == (
        'PersistentVolume "ml-s" is invalid: spec.persistentvolumesource: Forbidden: '
        "spec.persistentvolumesource is immutable after creation"
    )
    core = client.CoreV1Api(kube_api.api_client())
    assert [v.metadata.name for v in core.list_persistent_volume().items] == ["ml-s"]
    storage = client.StorageV1Api(kube_api.api_client())
    assert storage.list_storage_class().items == []


def test_gcp_data_source_crd_validates_its_uri(kube_api):
    kube_api.install_crd(CRD)
    source = {"apiVersion": "datalayer.gke.io/v1", "kind": "GCPDataSource",
              "metadata": {"name": "w"},
              "spec": {"cloudStorage": {"serviceAccountName": "loader",
                                        "uri": "gs://llm-weights/llama"}}}  # fmt: skip
    path = "/apis/datalayer.gke.io/v1/namespaces/ml/gcpdatasources"
    code, body = send(kube_api, "POST", path, source)
    assert code == 422 and body["details"]["causes"][0]["field"] == "spec.cloudStorage.uri"
    source["spec"]["cloudStorage"]["uri"] = "gs://llm-weights/llama/"
    assert send(kube_api, "POST", path, source)[0] == 201
