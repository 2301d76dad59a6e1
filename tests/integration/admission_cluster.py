"""Rebuilds, on the fake API server, the state each recorded admission probe started from
(../shared/fixtures/admission-real: namespace adm-facts, queue objects, the target object
suspended / admitted / terminating as the probe's `setup` says)."""

from __future__ import annotations

import copy
import time
from typing import Any

from tests.kubeapi import KubeAPIServer
from tests.kubeapi.rawhttp import send

NS = "adm-facts"
KQ = "/apis/kueue.x-k8s.io/v1beta2"
JS = f"/apis/jobset.x-k8s.io/v1alpha2/namespaces/{NS}/jobsets"
JOBS = f"/apis/batch/v1/namespaces/{NS}/jobs"
LWS = f"/apis/leaderworkerset.x-k8s.io/v1/namespaces/{NS}/leaderworkersets"
APPLY = "application/apply-patch+yaml"
RUNNING_STATUS = {  # what the JobSet controller wrote on the recorded running JobSets
    "conditions": [
        {
            "lastTransitionTime": "2026-12-01T03:15:10Z",
            "message": "jobset is resumed",
            "reason": "ResumeJobs",
            "status": "False",
            "type": "Suspended",
        }
    ],
    "replicatedJobsStatus": [
        {"active": 1, "failed": 0, "name": "worker", "ready": 0, "succeeded": 0, "suspended": 0}
    ],
    "restarts": 0,
}
HOLD = "adm-facts.example.com/hold"


def ok(result: tuple[int, Any], *codes: int) -> Any:
    code, body = result
    assert code in codes, f"setup request failed: {code} {body}"
    return body


def queues(srv: KubeAPIServer, default_queue: bool) -> None:
    """ResourceFlavor adm-facts-rf, ClusterQueue adm-facts-cq, LocalQueue lq (+ default)."""
    ok(send(srv, "POST", f"{KQ}/resourceflavors", kq("ResourceFlavor", "adm-facts-rf", {})), 201)
    quota = [
        {"name": "cpu", "nominalQuota": "100"},
        {"name": "memory", "nominalQuota": "100Gi"},
        {"name": "nvidia.com/gpu", "nominalQuota": "16"},
    ]
    cq = {
        "namespaceSelector": {},
        "resourceGroups": [
            {
                "coveredResources": ["cpu", "memory", "nvidia.com/gpu"],
                "flavors": [{"name": "adm-facts-rf", "resources": quota}],
            }
        ],
    }
    ok(send(srv, "POST", f"{KQ}/clusterqueues", kq("ClusterQueue", "adm-facts-cq", cq)), 201)
    for name in ("lq", "default") if default_queue else ("lq",):
        lq = kq("LocalQueue", name, {"clusterQueue": "adm-facts-cq"})
        ok(send(srv, "POST", f"{KQ}/namespaces/{NS}/localqueues", lq), 201)


def kq(kind: str, name: str, spec: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": kind,
        "metadata": {"name": name},
        "spec": spec,
    }


def pod_spec(image: str = "busybox:1.36") -> dict[str, Any]:
    return {
        "restartPolicy": "Never",
        "containers": [
            {
                "name": "main",
                "image": image,
                "command": ["sleep", "3600"],
                "resources": {"requests": {"cpu": "1"}},
            }
        ],
    }


def jobset(name: str, labels: dict[str, str] | None = None, **spec: Any) -> dict[str, Any]:
    job = {"parallelism": 2, "completions": 2, "backoffLimit": 0, "template": {"spec": pod_spec()}}
    return {
        "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet",
        "metadata": {"name": name, "namespace": NS, "labels": labels or {}},
        "spec": {
            "replicatedJobs": [{"name": "worker", "replicas": 1, "template": {"spec": job}}],
            **spec,
        },
    }


def job(name: str, labels: dict[str, str]) -> dict[str, Any]:
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "namespace": NS, "labels": labels},
        "spec": {"parallelism": 1, "completions": 1, "template": {"spec": pod_spec()}},
    }


def admit(srv: KubeAPIServer, plural: str, name: str, status: dict[str, Any] | None = None) -> None:
    """What Kueue's admission does to the job: an Update by manager `kueue` unsuspends it."""
    srv.store.patch(plural, NS, name, {"spec": {"suspend": False}}, manager="kueue")
    if status is not None:
        srv.store.update_status(plural, NS, name, copy.deepcopy(status))


def child_job(srv: KubeAPIServer, owner: dict[str, Any], hold: bool) -> None:
    """The JobSet controller's child Job `<name>-worker-0` (blocks the owner's deletion)."""
    m = owner["metadata"]
    ref = {
        "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet",
        "name": m["name"],
        "uid": m["uid"],
        "controller": True,
        "blockOwnerDeletion": True,
    }
    child = job(f"{m['name']}-worker-0", {"jobset.sigs.k8s.io/jobset-name": m["name"]})
    child["metadata"].update(ownerReferences=[ref], finalizers=[HOLD] if hold else [])
    srv.store.put(child)


def applied_running(srv: KubeAPIServer, name: str, hold: bool) -> dict[str, Any]:
    """A queue-labelled JobSet created by SSA (manager probe), admitted, with a child Job."""
    labels = {"kueue.x-k8s.io/queue-name": "lq"}
    if name != "fg-natural":  # the recorded fg-natural JobSet had no run-id label
        labels["run-id"] = "1"
    config = jobset(name, labels)
    created = ok(
        send(srv, "PATCH", f"{JS}/{name}?fieldManager=probe&force=true", config, APPLY), 201
    )
    admit(srv, "jobsets", name, RUNNING_STATUS)
    child_job(srv, created, hold)
    return dict(created)


def delete(srv: KubeAPIServer, path: str, policy: str) -> Any:
    return ok(
        send(srv, "DELETE", path, {"kind": "DeleteOptions", "propagationPolicy": policy}), 200
    )


def release(srv: KubeAPIServer, job_name: str) -> None:
    srv.store.patch("jobs", NS, job_name, {"metadata": {"finalizers": None}})


def wait_status(srv: KubeAPIServer, path: str, code: int, timeout: float = 3.0) -> float:
    start = time.monotonic()
    while send(srv, "GET", path)[0] != code:
        assert time.monotonic() - start < timeout, f"GET {path} never answered {code}"
        time.sleep(0.01)
    return time.monotonic() - start
