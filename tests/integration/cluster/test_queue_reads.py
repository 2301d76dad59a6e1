"""The reads behind preview and explain against the test API server as a real one answers:
selectable fields of the Workload CRD, pages with an expired continue token, a server that
cannot select on the field; and Kueue's ClusterQueue status lag on the explicit clock."""

from __future__ import annotations

import copy
from typing import Any

from gkeml_sdk.backends.kubernetes.api.kube import KubeClient
from gkeml_sdk.backends.kubernetes.api.queue_reads import list_pages, quota_holders
from gkeml_sdk.backends.kubernetes.api.transport import Transport
from gkeml_sdk.backends.kubernetes.explain.diagnosis import WORKLOADS
from tests.kubeapi import KubeAPIServer
from tests.kubeapi.crds import load_crd_dir
from tests.kubeapi.fixtures import require_shared_crds
from tests.kubeapi.kueue_status import ManualClock
from tests.kubeapi.rawhttp import send

from .conftest import FAST_RETRY
from .kueue_objects import cluster_queue

KUEUE = "kueue.x-k8s.io/v1beta2"


def workload(name: str, cq: str = "", finished: bool = False, gpus: int = 8) -> dict[str, Any]:
    status: dict[str, Any] = {}
    if cq:
        conditions = [{"type": "QuotaReserved", "status": "True", "reason": "QuotaReserved",
                       "message": "", "lastTransitionTime": "2026-11-29T14:35:06Z"},
                      {"type": "Admitted", "status": "True", "reason": "Admitted",
                       "message": "", "lastTransitionTime": "2026-11-29T14:35:06Z"}]  # fmt: skip
        if finished:
            conditions.append({**conditions[0], "type": "Finished", "reason": "Succeeded"})
        assignment = {"name": "node", "count": 1, "flavors": {"nvidia.com/gpu": "acc-flavor"},
                      "resourceUsage": {"nvidia.com/gpu": str(gpus)}}  # fmt: skip
        status = {"conditions": conditions,
                  "admission": {"clusterQueue": cq, "podSetAssignments": [assignment]}}  # fmt: skip
    container = {"name": "c", "image": "i", "resources": {"requests": {"nvidia.com/gpu": gpus}}}
    return {
        "apiVersion": KUEUE, "kind": "Workload",
        "metadata": {"name": name, "namespace": "ml"},
        "spec": {"queueName": "team-a", "podSets": [
            {"name": "node", "count": 1, "template": {"spec": {"containers": [container]}}}]},
        "status": status,
    }  # fmt: skip


def kube(server: Any) -> KubeClient:
    return KubeClient(Transport(server.api_client(), api_retry=FAST_RETRY))


def test_workloads_select_on_the_admitted_cluster_queue_and_nothing_else(cluster: Any) -> None:
    for wl in (workload("a", "acc-cq"), workload("b", "other-cq"), workload("c")):
        cluster.store.put(wl)
    base = "/apis/kueue.x-k8s.io/v1beta2/namespaces/ml/workloads?fieldSelector="
    code, body = send(cluster, "GET", base + "status.admission.clusterQueue%3Dacc-cq")
    assert code == 200 and [i["metadata"]["name"] for i in body["items"]] == ["a"]
    code, body = send(cluster, "GET", base + "status.admission.clusterQueue!%3D")
    assert code == 200 and [i["metadata"]["name"] for i in body["items"]] == ["a", "b"]
    code, body = send(cluster, "GET", base + "spec.queueName%3Dteam-a")
    assert code == 400 and body["message"] == "field label not supported: spec.queueName"


def test_holders_come_in_pages_and_an_expired_token_lists_again(cluster: Any) -> None:
    for i in range(5):
        cluster.store.put(workload(f"w{i}", "acc-cq"))
    client = kube(cluster)
    compacted = []

    def compact_once(info: Any) -> bool:
        if info.query.get("continue") and not compacted:  # a write, then etcd compacts
            cluster.store.put(workload("w5"))
            compacted.append(cluster.compact())
        return False

    cluster.faults.inject("500", count=None, match=compact_once)
    cluster.clear_request_log()
    found = list_pages(client, WORKLOADS, "ml", limit=2)
    assert [w["metadata"]["name"] for w in found] == [f"w{i}" for i in range(6)]
    answers = [(r.query.get("limit"), r.status) for r in cluster.request_log]
    assert answers == [("2", 200), ("2", 410), (None, 200)]


def test_without_selectable_fields_every_workload_is_read_and_filtered() -> None:
    crd_dir = require_shared_crds()
    crds = [c for c in load_crd_dir(crd_dir) if c["spec"]["group"] == "kueue.x-k8s.io"]
    old = copy.deepcopy(next(c for c in crds if c["spec"]["names"]["kind"] == "Workload"))
    for version in old["spec"]["versions"]:
        version.pop("selectableFields", None)  # Kueue before the field was selectable
    with KubeAPIServer(crd_dir, exclude_crds=["workloads"], namespaces=["ml"]) as server:
        server.install_crd(old)
        server.store.put(cluster_queue("acc-cq"))
        for wl in (workload("a", "acc-cq"), workload("b", "other-cq"), workload("c")):
            server.store.put(wl)
        held = quota_holders(kube(server), WORKLOADS, {"acc-cq"}, "ml")
        assert held.complete and [w["metadata"]["name"] for w in held.workloads] == ["a"]
        assert [r.status for r in server.request_log] == [400, 200]


def test_cluster_queue_status_trails_the_workloads_by_one_batch_period(cluster: Any) -> None:
    cluster.store.put(cluster_queue("acc-cq"))
    clock = ManualClock()
    status = cluster.play_cluster_queue_status(clock)

    def reserved() -> tuple[str, int, int]:
        got = cluster.store.get("clusterqueues", None, "acc-cq")["status"]
        gpus = next(r for r in got["flavorsReservation"][0]["resources"] if "gpu" in r["name"])
        return gpus["total"], got["reservingWorkloads"], got["pendingWorkloads"]

    assert reserved() == ("0", 0, 0)
    cluster.store.put(workload("a", "acc-cq"))
    clock.advance(0.6)
    cluster.store.put(workload("b", "acc-cq"))
    cluster.store.put(workload("c"))
    clock.advance(0.39)
    assert reserved() == ("0", 0, 0), "the batch started by `a` is not due yet"
    clock.advance(0.01)
    assert reserved() == ("16", 2, 1), "one reconcile at a+1 s reflects a, b and c"
    cluster.store.put(workload("a", "acc-cq", finished=True))
    clock.advance(1.0)
    assert reserved() == ("8", 1, 1) and status.reconciles == 3
