"""The fake kube-apiserver answers metadata-only reads as kube-apiserver does (an `Accept`
asking for PartialObjectMetadata(List) of meta.k8s.io, as client-go's metadata client sends),
refuses what it refuses (406 NotAcceptable), and holds annotations to 256 KiB in all."""

from __future__ import annotations

import json
from typing import Any

from tests.kubeapi.rawhttp import send, send_text

pytest_plugins = ["tests.kubeapi.fixtures"]

CM_PATH = "/api/v1/namespaces/ml/configmaps"
JOBSETS = "/apis/jobset.x-k8s.io/v1alpha2/namespaces/ml/jobsets"
LIST = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"
ONE = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1"
SERVED = "application/json, application/yaml, application/vnd.kubernetes.protobuf"


def configmap(name: str, **meta: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": "ml", **meta},
            "data": {"code": "x" * 10_000}}  # fmt: skip


def test_a_list_of_metadata_only_carries_no_data(kube_api):
    for name in ("a", "b", "c"):
        assert send(kube_api, "POST", CM_PATH, configmap(name, labels={"k": "v"}))[0] == 201
    code, body = send(kube_api, "GET", f"{CM_PATH}?labelSelector=k&limit=2", accept=LIST)
    assert code == 200
    assert (body["kind"], body["apiVersion"]) == ("PartialObjectMetadataList", "meta.k8s.io/v1")
    assert body["metadata"]["continue"] and "resourceVersion" in body["metadata"]
    assert [i["metadata"]["name"] for i in body["items"]] == ["a", "b"]
    for item in body["items"]:
        assert set(item) == {"kind", "apiVersion", "metadata"}
        assert (item["kind"], item["apiVersion"]) == ("PartialObjectMetadata", "meta.k8s.io/v1")
        assert item["metadata"]["labels"] == {"k": "v"} and item["metadata"]["uid"]
    sent = kube_api.request_log[-1].sent
    assert sent < 2_000  # no 10 KB of data per item
    code, rest = send(kube_api, "GET", f"{CM_PATH}?labelSelector=k&limit=2&continue="
                      f"{body['metadata']['continue']}", accept=LIST)  # fmt: skip
    assert [i["metadata"]["name"] for i in rest["items"]] == ["c"]
    # An empty list's items are null (a nil Go slice, no omitempty), and v1beta1 is served too.
    beta = LIST.replace("v=v1", "v=v1beta1")
    code, none = send(kube_api, "GET", f"{CM_PATH}?labelSelector=nothing", accept=beta)
    assert (code, none["apiVersion"], none["items"]) == (200, "meta.k8s.io/v1beta1", None)


def test_custom_resources_and_single_objects_as_metadata(kube_api):
    assert send(kube_api, "POST", CM_PATH, configmap("a"))[0] == 201
    code, one = send(kube_api, "GET", f"{CM_PATH}/a", accept=ONE)
    assert (code, one["kind"], "data" in one) == (200, "PartialObjectMetadata", False)
    code, listed = send(kube_api, "GET", JOBSETS, accept=LIST)
    assert (code, listed["kind"], listed["items"]) == (200, "PartialObjectMetadataList", None)


def test_what_kube_apiserver_refuses_is_refused(kube_api):
    assert send(kube_api, "POST", CM_PATH, configmap("a"))[0] == 201
    code, body = send(kube_api, "GET", CM_PATH, accept=ONE)
    assert (code, body["reason"]) == (406, "NotAcceptable")
    assert body["message"] == (
        "you requested PartialObjectMetadata, but the requested object is a list "
        "(*v1.ConfigMapList)"
    )
    code, body = send(kube_api, "GET", f"{CM_PATH}/a", accept=LIST)
    assert (code, body["message"]) == (
        406,
        "you requested PartialObjectMetadataList, but the requested object is not a list "
        "(*v1.ConfigMap)",
    )
    for accept in (
        "application/json;as=Pod;g=meta.k8s.io;v=v1",
        "application/json;as=PartialObjectMetadataList;g=apps;v=v1",
        "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v2",
        "text/html",
    ):
        code, body = send(kube_api, "GET", CM_PATH, accept=accept)
        assert (code, body["message"]) == (
            406,
            f"only the following media types are accepted: {SERVED}",
        ), accept
    # A clause it cannot serve is skipped for the next one, as the real negotiation does.
    code, body = send(kube_api, "GET", CM_PATH, accept="application/json;as=Pod;v=v1, */*")
    assert (code, body["kind"], body["items"][0]["data"]["code"][:1]) == (200, "ConfigMapList", "x")


def test_a_metadata_only_watch_sends_metadata(kube_api):
    assert send(kube_api, "POST", CM_PATH, configmap("a"))[0] == 201
    code, text = send_text(kube_api, "GET", f"{CM_PATH}?watch=1&timeoutSeconds=1", accept=ONE)
    events = [json.loads(line) for line in text.splitlines() if line.strip()]
    assert code == 200 and [e["type"] for e in events] == ["ADDED"]
    assert set(events[0]["object"]) == {"kind", "apiVersion", "metadata"}
    assert events[0]["object"]["kind"] == "PartialObjectMetadata"


def test_annotations_hold_256_kib_with_their_keys(kube_api):
    fits = {"a": "x" * (256 * 1024 - 1)}  # 1 byte of key
    assert send(kube_api, "POST", CM_PATH, configmap("fits", annotations=fits))[0] == 201
    over = {"ab": "x" * (256 * 1024 - 1)}
    code, body = send(kube_api, "POST", CM_PATH, configmap("over", annotations=over))
    assert (code, body["reason"]) == (422, "Invalid")
    assert body["details"]["causes"] == [
        {
            "reason": "FieldValueTooLong",
            "message": "Too long: may not be more than 262144 bytes",
            "field": "metadata.annotations",
        }
    ]
