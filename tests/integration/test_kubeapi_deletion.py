"""Deletion in the fake kube-apiserver as a real control plane does it (admission-rules.md §4):
Foreground keeps the owner visible while dependents go, Background answers a Status, applies
land on a terminating object and vanish with it, watches expire after compaction."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

from tests.kubeapi import KubeAPIServer
from tests.kubeapi.rawhttp import send, send_text

pytest_plugins = ["tests.kubeapi.fixtures"]

NS = "ml"
JS_PATH = f"/apis/jobset.x-k8s.io/v1alpha2/namespaces/{NS}/jobsets"
JOB_PATH = f"/apis/batch/v1/namespaces/{NS}/jobs"
APPLY = "application/apply-patch+yaml"


def jobset_config(name: str, labels: dict[str, str] | None = None) -> dict[str, Any]:
    pod = {"restartPolicy": "Never", "containers": [{"name": "main", "image": "busybox:1.36"}]}
    return {
        "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet",
        "metadata": {"name": name, "labels": labels or {}},
        "spec": {
            "replicatedJobs": [
                {"name": "worker", "replicas": 1, "template": {"spec": {"template": {"spec": pod}}}}
            ]
        },
    }


def running_jobset(srv: KubeAPIServer, name: str, child_finalizers: list[str] = ()) -> str:
    """A JobSet applied through the API, with a status and one child Job (as the JobSet
    controller would create it); returns the JobSet's uid."""
    code, body = send(
        srv, "PATCH", f"{JS_PATH}/{name}?fieldManager=probe", jobset_config(name), APPLY
    )
    assert code == 201, body
    uid = body["metadata"]["uid"]
    srv.store.update_status("jobsets", NS, name, {"restarts": 1, "replicatedJobsStatus": []})
    ref = {
        "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet",
        "name": name,
        "uid": uid,
        "controller": True,
        "blockOwnerDeletion": True,
    }
    pod = {"restartPolicy": "Never", "containers": [{"name": "main", "image": "busybox:1.36"}]}
    srv.store.put(
        {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {
                "name": f"{name}-worker-0",
                "namespace": NS,
                "ownerReferences": [ref],
                "finalizers": list(child_finalizers),
            },
            "spec": {"template": {"spec": pod}},
        }
    )
    return str(uid)


def delete(srv: KubeAPIServer, path: str, policy: str) -> tuple[int, Any]:
    return send(srv, "DELETE", path, {"kind": "DeleteOptions", "propagationPolicy": policy})


def wait_gone(srv: KubeAPIServer, path: str, timeout: float = 120.0) -> float:
    # `timeout` only turns a hang into a failure: a loaded machine stretches every delay.
    start = time.monotonic()
    while send(srv, "GET", path)[0] != 404:
        assert time.monotonic() - start < timeout, f"{path} still exists"
        time.sleep(0.01)
    return time.monotonic() - start


def test_foreground_delete_answers_the_object_and_keeps_it_until_dependents_are_gone(
    kube_api: KubeAPIServer,
):
    uid = running_jobset(kube_api, "fg")
    code, body = delete(kube_api, f"{JS_PATH}/fg", "Foreground")
    assert code == 200 and body["kind"] == "JobSet"
    m = body["metadata"]
    assert m["uid"] == uid and m["deletionTimestamp"]
    assert m["finalizers"] == ["foregroundDeletion"] and m["deletionGracePeriodSeconds"] == 0
    code, now = send(kube_api, "GET", f"{JS_PATH}/fg")
    assert code == 200 and now["metadata"]["deletionTimestamp"]
    # the child Job was deleted in foreground too, and is gone before its owner
    gone_after = wait_gone(kube_api, f"{JS_PATH}/fg")
    assert gone_after > 0.1  # visible for a realistic moment (real: 0.09-0.35 s)
    assert send(kube_api, "GET", f"{JOB_PATH}/fg-worker-0")[0] == 404


def test_a_child_holding_a_finalizer_keeps_the_owner_terminating(kube_api: KubeAPIServer):
    running_jobset(kube_api, "held", child_finalizers=["example.com/hold"])
    assert delete(kube_api, f"{JS_PATH}/held", "Foreground")[0] == 200
    time.sleep(0.6)  # three times the default delay
    code, body = send(kube_api, "GET", f"{JS_PATH}/held")
    assert code == 200 and body["metadata"]["finalizers"] == ["foregroundDeletion"]
    code, child = send(kube_api, "GET", f"{JOB_PATH}/held-worker-0")
    assert code == 200 and child["metadata"]["deletionTimestamp"]
    # the garbage collector already took the child's own foregroundDeletion finalizer
    assert child["metadata"]["finalizers"] == ["example.com/hold"]
    release = {"metadata": {"finalizers": None}}
    code, _ = send(
        kube_api, "PATCH", f"{JOB_PATH}/held-worker-0", release, "application/merge-patch+json"
    )
    assert code == 200
    wait_gone(kube_api, f"{JS_PATH}/held")


def test_background_delete_answers_status_and_leaves_held_children_terminating(
    kube_api: KubeAPIServer,
):
    uid = running_jobset(kube_api, "bg", child_finalizers=["example.com/hold"])
    code, body = delete(kube_api, f"{JS_PATH}/bg", "Background")
    assert code == 200
    assert body["kind"] == "Status" and body["status"] == "Success"
    assert body["details"] == {
        "name": "bg",
        "group": "jobset.x-k8s.io",
        "kind": "jobsets",
        "uid": uid,
    }
    assert send(kube_api, "GET", f"{JS_PATH}/bg")[0] == 404
    code, child = send(kube_api, "GET", f"{JOB_PATH}/bg-worker-0")
    assert code == 200 and child["metadata"]["deletionTimestamp"]
    # a new JobSet of the same name can be created while the old child still terminates
    code, again = send(
        kube_api, "PATCH", f"{JS_PATH}/bg?fieldManager=probe", jobset_config("bg"), APPLY
    )
    assert code == 201 and again["metadata"]["uid"] != uid


def test_apply_onto_a_terminating_object_lands_on_it_and_vanishes_with_it(
    kube_api_factory: Callable[..., KubeAPIServer],
):
    srv = kube_api_factory(foreground_delete_seconds=None)
    uid = running_jobset(srv, "re")
    assert delete(srv, f"{JS_PATH}/re", "Foreground")[0] == 200
    config = jobset_config("re", {"gkeml.dev/run-id": "2"})
    code, body = send(srv, "PATCH", f"{JS_PATH}/re?fieldManager=probe&force=true", config, APPLY)
    assert code == 200
    m = body["metadata"]
    assert m["uid"] == uid and m["deletionTimestamp"] and m["labels"]["gkeml.dev/run-id"] == "2"
    assert body["status"] == {"restarts": 1, "replicatedJobsStatus": []}  # the old status
    assert send(srv, "GET", f"{JS_PATH}/re")[1]["metadata"]["labels"]["gkeml.dev/run-id"] == "2"
    srv.finish_deletions()
    assert send(srv, "GET", f"{JS_PATH}/re")[0] == 404  # the applied run is lost with it
    code, body = send(srv, "PATCH", f"{JS_PATH}/re?fieldManager=probe&force=true", config, APPLY)
    assert code == 201 and body["metadata"]["uid"] != uid


def test_held_foreground_deletion_waits_for_finish(kube_api_factory: Callable[..., KubeAPIServer]):
    srv = kube_api_factory(foreground_delete_seconds=None)
    running_jobset(srv, "wait")
    assert delete(srv, f"{JS_PATH}/wait", "Foreground")[0] == 200
    time.sleep(0.3)
    assert send(srv, "GET", f"{JS_PATH}/wait")[0] == 200
    assert send(srv, "GET", f"{JOB_PATH}/wait-worker-0")[0] == 200  # also held
    srv.finish_deletions()
    assert send(srv, "GET", f"{JS_PATH}/wait")[0] == 404
    assert send(srv, "GET", f"{JOB_PATH}/wait-worker-0")[0] == 404


def test_no_new_finalizers_on_a_terminating_object(kube_api: KubeAPIServer):
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "finalizers": ["a/b"]}}
    assert send(kube_api, "POST", f"/api/v1/namespaces/{NS}/configmaps", cm)[0] == 201
    assert delete(kube_api, f"/api/v1/namespaces/{NS}/configmaps/c", "Background")[0] == 200
    patch = {"metadata": {"finalizers": ["a/b", "c/d"]}}
    code, body = send(
        kube_api,
        "PATCH",
        f"/api/v1/namespaces/{NS}/configmaps/c",
        patch,
        "application/merge-patch+json",
    )
    assert code == 422
    assert body["message"] == (
        'ConfigMap "c" is invalid: metadata.finalizers: Forbidden: '
        "no new finalizers can be added if the object is being deleted"
    )
    # removing one is how a controller lets it go
    code, _ = send(
        kube_api,
        "PATCH",
        f"/api/v1/namespaces/{NS}/configmaps/c",
        {"metadata": {"finalizers": None}},
        "application/merge-patch+json",
    )
    assert code == 200
    assert send(kube_api, "GET", f"/api/v1/namespaces/{NS}/configmaps/c")[0] == 404


def test_watch_sees_terminating_then_deleted(kube_api: KubeAPIServer):
    running_jobset(kube_api, "w")
    rv = send(kube_api, "GET", JS_PATH)[1]["metadata"]["resourceVersion"]
    delete(kube_api, f"{JS_PATH}/w", "Foreground")
    wait_gone(kube_api, f"{JS_PATH}/w")
    _, text = send_text(kube_api, "GET", f"{JS_PATH}?watch=1&resourceVersion={rv}&timeoutSeconds=1")
    events = [json.loads(line) for line in text.splitlines()]
    kinds = [(e["type"], bool(e["object"]["metadata"].get("deletionTimestamp"))) for e in events]
    assert kinds == [("MODIFIED", True), ("DELETED", True)]


def test_watch_from_a_compacted_rv_gets_410_and_list_then_rewatch_works(
    kube_api: KubeAPIServer,
):
    running_jobset(kube_api, "a")
    old_rv = send(kube_api, "GET", JS_PATH)[1]["metadata"]["resourceVersion"]
    running_jobset(kube_api, "b")
    kube_api.compact()
    code, text = send_text(kube_api, "GET", f"{JS_PATH}?watch=1&resourceVersion={old_rv}")
    event = json.loads(text.splitlines()[0])
    assert code == 200 and event["type"] == "ERROR"
    assert event["object"]["code"] == 410 and event["object"]["reason"] == "Expired"
    assert event["object"]["message"].startswith(f"too old resource version: {old_rv} (")
    listed = send(kube_api, "GET", JS_PATH)[1]
    assert [i["metadata"]["name"] for i in listed["items"]] == ["a", "b"]
    rv = listed["metadata"]["resourceVersion"]
    kube_api.store.patch("jobsets", NS, "a", {"metadata": {"labels": {"x": "y"}}})
    code, text = send_text(
        kube_api, "GET", f"{JS_PATH}?watch=1&resourceVersion={rv}&timeoutSeconds=1"
    )
    events = [json.loads(line) for line in text.splitlines()]
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in events] == [("MODIFIED", "a")]


def test_a_delete_precondition_that_does_not_hold_is_a_conflict_as_kube_apiserver_says(
    kube_api: KubeAPIServer,
):
    uid = running_jobset(kube_api, "pre")
    path = f"{JS_PATH}/pre"
    rv = send(kube_api, "GET", path)[1]["metadata"]["resourceVersion"]
    options = {"kind": "DeleteOptions", "propagationPolicy": "Background"}
    code, body = send(kube_api, "DELETE", path, {**options, "preconditions": {"uid": "0" * 8}})
    assert code == 409 and body["reason"] == "Conflict"
    # rest.BeforeDelete names the kind (not the resource), here and in details.
    assert body["message"] == (
        f'Operation cannot be fulfilled on JobSet.jobset.x-k8s.io "pre": the UID in the '
        f"precondition (00000000) does not match the UID in record ({uid}). The object might "
        "have been deleted and then recreated"
    )
    assert body["details"] == {"name": "pre", "group": "jobset.x-k8s.io", "kind": "JobSet"}
    stale = {**options, "preconditions": {"uid": uid, "resourceVersion": str(int(rv) - 1)}}
    code, body = send(kube_api, "DELETE", path, stale)
    assert code == 409 and "the ResourceVersion in the precondition" in body["message"]
    assert body["message"].endswith("The object might have been modified")
    assert send(kube_api, "GET", path)[0] == 200  # neither delete took effect
    matching = {**options, "preconditions": {"uid": uid, "resourceVersion": rv}}
    assert send(kube_api, "DELETE", path, matching)[0] == 200


def test_an_update_with_a_stale_resource_version_is_a_conflict(kube_api: KubeAPIServer):
    path = f"/api/v1/namespaces/{NS}/configmaps"
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "rec"}, "data": {"a": "1"}}
    code, made = send(kube_api, "POST", path, cm)
    assert code == 201
    first = {**made, "data": {"a": "2"}}
    assert send(kube_api, "PUT", f"{path}/rec", first)[0] == 200
    code, body = send(kube_api, "PUT", f"{path}/rec", {**made, "data": {"a": "3"}})
    assert code == 409 and body["reason"] == "Conflict"
    assert body["message"] == (
        'Operation cannot be fulfilled on configmaps "rec": the object has been modified; '
        "please apply your changes to the latest version and try again"
    )
    assert send(kube_api, "GET", f"{path}/rec")[1]["data"] == {"a": "2"}
