"""`run.explain()` on every recorded scenario of a real Kueue + JobSet control plane, replayed
onto the fake API server: the controllers' objects and Events up to a moment of the
recording, the ClusterQueue status Kueue would report for the Workloads then holding quota,
and the category and cause the explanation gives."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest

from gkeml_sdk import Accelerator, Category, TrainingJob

from .conftest import make_client, queue
from .replay import Replayer

END = float("inf")
KUEUE = "kueue.x-k8s.io/v1beta2"


def gang(name: str, nodes: int = 2, **kw: Any) -> TrainingJob:
    kw.setdefault("queue", "team-a")
    return TrainingJob(name=name, image="busybox", command=["true"],
                       accelerator=Accelerator("h100", count=8), nodes=nodes, **kw)  # fmt: skip


def cluster_queue(name: str, **spec: Any) -> dict[str, Any]:
    resources = [
        {"name": "cpu", "nominalQuota": "64"},
        {"name": "nvidia.com/gpu", "nominalQuota": "16"},
    ]
    return {
        "apiVersion": KUEUE,
        "kind": "ClusterQueue",
        "metadata": {"name": name},
        "spec": {
            "namespaceSelector": {},
            "preemption": {"withinClusterQueue": "LowerPriority"},
            "resourceGroups": [{"coveredResources": ["cpu", "nvidia.com/gpu"],
                                "flavors": [{"name": "acc-flavor", "resources": resources}]}],
            **spec,
        },
    }  # fmt: skip


def kueue_reports_usage(server: Any) -> None:
    """Write each ClusterQueue's `status.flavorsReservation` from the Workloads that hold quota
    in it, as Kueue's ClusterQueue controller does."""
    for cq in server.store.list("clusterqueues"):
        totals: dict[tuple[str, str], Decimal] = {}
        for wl in server.store.list("workloads"):
            status = wl.get("status") or {}
            held = {c["type"]: c["status"] for c in status.get("conditions") or []}
            admission = status.get("admission") or {}
            if held.get("QuotaReserved") != "True" or held.get("Finished") == "True":
                continue
            if admission.get("clusterQueue") != cq["metadata"]["name"]:
                continue
            for ps in admission.get("podSetAssignments") or []:
                for res, value in (ps.get("resourceUsage") or {}).items():
                    key = (ps["flavors"][res], res)
                    totals[key] = totals.get(key, Decimal(0)) + Decimal(str(value))
        flavors: dict[str, list[dict[str, str]]] = {}
        for (flavor, res), total in sorted(totals.items()):
            flavors.setdefault(flavor, []).append(
                {"name": res, "total": str(total), "borrowed": "0"}
            )
        status = {"flavorsReservation": [{"name": f, "resources": r} for f, r in flavors.items()]}
        server.store.update_status("clusterqueues", None, cq["metadata"]["name"], status)


@pytest.fixture
def kueue(cluster: Any) -> Any:
    """The recordings' Kueue objects: acc-cq (16 GPUs, LowerPriority preemption), the DWS
    queue acc-dws-cq with its ProvisioningRequest admission check, the flavor and priorities."""
    cluster.store.put(cluster_queue("acc-cq"))
    dws = {"admissionChecksStrategy": {"admissionChecks": [{"name": "acc-dws"}]}}
    cluster.store.put(cluster_queue("acc-dws-cq", **dws))
    cluster.store.put({"apiVersion": KUEUE, "kind": "ResourceFlavor",
                       "metadata": {"name": "acc-flavor"}, "spec": {}})  # fmt: skip
    cluster.store.put({"apiVersion": KUEUE, "kind": "WorkloadPriorityClass",
                       "metadata": {"name": "acc-high"}, "value": 1000})  # fmt: skip
    cluster.store.put({
        "apiVersion": KUEUE, "kind": "AdmissionCheck", "metadata": {"name": "acc-dws"},
        "spec": {"controllerName": "kueue.x-k8s.io/provisioning-request", "parameters": {
            "apiGroup": "kueue.x-k8s.io", "kind": "ProvisioningRequestConfig", "name": "dws"}},
    })  # fmt: skip
    return cluster


# (scenario, job, replay until t, the jobs to submit (first is explained), category, words)
SCENARIOS = [
    ("job-succeeded", "single", END, [gang("single", 1)], Category.SUCCEEDED, ["completed"]),
    ("jobset-succeeded", "train", END, [gang("train")], Category.SUCCEEDED, ["AllJobsCompleted"]),
    ("jobset-cancelled-while-running", "train", END, [gang("train")], Category.CANCELLED,
     ["deleted"]),
    ("jobset-dws-provisioned-succeeded", "train", 2.0, [gang("train")],
     Category.CAPACITY_PROVISIONING, ["acc-dws", "jobset-train-bfb3f-acc-dws-1", "Pending"]),
    ("jobset-dws-provisioned-succeeded", "train", END, [gang("train")], Category.SUCCEEDED,
     ["completed"]),
    ("jobset-dws-provisioning-failed-deactivated", "train", 3.09, [gang("train")],
     Category.CAPACITY_PROVISIONING, ["acc-dws", "GCE out of resources", "retr"]),
    ("jobset-dws-provisioning-failed-deactivated", "train", END, [gang("train")],
     Category.DEACTIVATED, ["rejected", "GCE out of resources again", "acc-dws-2"]),
    ("jobset-missing-localqueue", "lost", END, [gang("lost", queue="no-such-queue")],
     Category.USER_ERROR, ["LocalQueue no-such-queue doesn't exist", "team-a"]),
    ("jobset-over-quota-pending", "huge", END, [gang("huge", nodes=4)], Category.QUOTA,
     ["32 nvidia.com/gpu", "at most 16"]),
    ("jobset-podsready-timeout-deactivated", "stuck", 31.0, [gang("stuck")], Category.PLACEMENT,
     ["PodsReady timeout"]),
    ("jobset-podsready-timeout-deactivated", "stuck", END, [gang("stuck")], Category.DEACTIVATED,
     ["2 times", "RequeuingLimitExceeded"]),
    ("jobset-preempted-requeued-succeeded", "low", 1.6,
     [gang("low", priority="acc-low"), gang("high", priority="acc-high")], Category.PREEMPTED,
     ["higher-priority", "InClusterQueue"]),
    ("jobset-preempted-requeued-succeeded", "high", 1.51,
     [gang("high", priority="acc-high"), gang("low", priority="acc-low")], Category.QUOTA,
     ["16 of 16", "preempted lower-priority"]),
    ("jobset-preempted-requeued-succeeded", "low", END, [gang("low", priority="acc-low")],
     Category.SUCCEEDED, ["completed"]),
    ("jobset-queued-behind-another", "second", 2.0,
     [gang("second", nodes=1, gang=True), gang("first")], Category.QUOTA,
     ["16 of 16 nvidia.com/gpu", "needs 8", "acc-low"]),
    ("jobset-spot-disruption-succeeded", "train", 2.0, [gang("train", spot=True)],
     Category.PREEMPTED, ["disrupted", "TerminationByKubelet"]),
    ("jobset-spot-disruption-succeeded", "train", END, [gang("train", spot=True)],
     Category.SUCCEEDED, ["completed"]),
    ("jobset-user-failure-after-restart", "train", END, [gang("train", max_restarts=1)],
     Category.CRASH, ["ReachedMaxRestarts", "exited with code 1", "gkeml logs train"]),
]  # fmt: skip


@pytest.mark.parametrize(
    ("scenario", "job", "until", "jobs", "category", "words"),
    SCENARIOS,
    ids=[f"{s[0]}@{s[2]}-{s[1]}" for s in SCENARIOS],
)
def test_explain_names_the_cause_of_each_recorded_scenario(
    kueue: Any, scenario: str, job: str, until: float, jobs: list[TrainingJob],
    category: Category, words: list[str],
) -> None:  # fmt: skip
    client = make_client(kueue)
    if jobs[0].queue != "team-a":  # submitted while it existed, deleted since
        kueue.store.put(queue(jobs[0].queue))
    for spec in jobs:
        client.submit(spec)
    if jobs[0].queue != "team-a":
        kueue.store.delete("localqueues", "ml", jobs[0].queue)
    kinds = ("JobSet", "Job", "Workload", "Pod", "Event")
    for spec in jobs:
        Replayer(kueue, "ml", spec.name, 1, spec.name).play(
            scenario, spec.name, pause=0, until=until, kinds=kinds
        )
    kueue_reports_usage(kueue)
    explanation = client.get_run(job).explain()
    print(f"{scenario}@{until} {job}: [{explanation.category.value}] {explanation.sentence}")
    assert explanation.category is category, explanation.sentence
    for word in words:
        assert word in explanation.sentence
    assert explanation.evidence, "an explanation shows what it read"
    assert all(e.kind and e.name for e in explanation.evidence)
