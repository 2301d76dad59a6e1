"""The Workloads Kueue's job reconcilers create for queued jobs on the test API server, named
and owned as Kueue names and owns them (`job-<name>-<hash>`, recordings in ../shared/fixtures/
kueue-real): one per suspended Job (pod set `main`: its parallelism) or JobSet (a pod set per
replicatedJob: replicas x parallelism), one per gated pod of a Deployment (pod integration: one
pod, pod set `main`) and one per LeaderWorkerSet group (pod sets `leader` and `workers`)."""

from __future__ import annotations

import copy
import hashlib
from typing import Any

from .store import Store

Obj = dict[str, Any]
P = "kueue.x-k8s.io/"
QUEUE = P + "queue-name"
GATES = (P + "admission", P + "topology")
LWS_NAME, LWS_GROUP = "leaderworkerset.sigs.k8s.io/name", "leaderworkerset.sigs.k8s.io/group-index"
LWS_WORKER = "leaderworkerset.sigs.k8s.io/worker-index"


def new_workloads(store: Store) -> list[Obj]:
    """The Workloads Kueue creates now: one for every queued job that has none yet."""
    have = {(w["metadata"]["namespace"], w["metadata"]["name"]) for w in store.list("workloads")}
    found: list[tuple[Obj, list[Obj], str]] = []
    for job in store.list("jobs"):
        spec = job.get("spec") or {}
        if _queue(job) and spec.get("suspend"):
            pod_sets = [_pod_set("main", int(spec.get("parallelism", 1)), spec["template"])]
            found.append((job, pod_sets, _name("job", job)))
    for jobset in store.list("jobsets"):
        spec = jobset.get("spec") or {}
        if _queue(jobset) and spec.get("suspend"):
            pod_sets = [
                _pod_set(
                    rj["name"],
                    int(rj.get("replicas", 1)) * int(rj["template"]["spec"].get("parallelism", 1)),
                    rj["template"]["spec"]["template"],
                )
                for rj in spec.get("replicatedJobs") or []
            ]
            found.append((jobset, pod_sets, _name("jobset", jobset)))
    groups: dict[tuple[str, str, str], list[Obj]] = {}
    for pod in store.list("pods"):
        gates = {g.get("name") for g in (pod.get("spec") or {}).get("schedulingGates") or []}
        if _queue(pod) and GATES[0] in gates:
            labels = pod["metadata"].get("labels") or {}
            key = (
                pod["metadata"]["namespace"],
                labels.get(LWS_NAME, ""),
                labels.get(LWS_GROUP, pod["metadata"]["name"]),
            )
            groups.setdefault(key, []).append(pod)
    for (_, lws, _), pods in sorted(groups.items()):
        pods.sort(key=lambda p: int((p["metadata"].get("labels") or {}).get(LWS_WORKER, 0)))
        if lws:
            pod_sets = [_pod_set("leader", 1, _template(pods[0]))]
            if len(pods) > 1:
                pod_sets.append(_pod_set("workers", len(pods) - 1, _template(pods[1])))
        else:
            pod_sets = [_pod_set("main", 1, _template(pods[0]))]
        found.append((pods[0], pod_sets, _name("pod", pods[0])))
    return [
        _workload(owner, pod_sets, name)
        for owner, pod_sets, name in found
        if (owner["metadata"]["namespace"], name) not in have
    ]


def _workload(owner: Obj, pod_sets: list[Obj], name: str) -> Obj:
    meta = owner["metadata"]
    api_version = owner.get("apiVersion") or "v1"
    return {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "Workload",
        "metadata": {
            "name": name,
            "namespace": meta["namespace"],
            "labels": {P + "job-uid": meta["uid"]},
            "ownerReferences": [
                {
                    "apiVersion": api_version,
                    "kind": owner["kind"],
                    "name": meta["name"],
                    "uid": meta["uid"],
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
            "finalizers": [P + "resource-in-use"],
        },
        "spec": {
            "active": True,
            "priority": 0,
            "queueName": _queue(owner),
            "podSets": pod_sets,
        },
    }


def _queue(obj: Obj) -> str:
    return str(((obj.get("metadata") or {}).get("labels") or {}).get(QUEUE) or "")


def _name(prefix: str, owner: Obj) -> str:
    digest = hashlib.sha256(owner["metadata"]["uid"].encode()).hexdigest()[:5]
    return f"{prefix}-{owner['metadata']['name']}-{digest}"


def _template(pod: Obj) -> Obj:
    return {
        "metadata": {"labels": dict(pod["metadata"].get("labels") or {})},
        "spec": copy.deepcopy(pod["spec"]),
    }


def _pod_set(name: str, count: int, template: Obj) -> Obj:
    template = copy.deepcopy(template)
    template.get("spec", {}).pop("schedulingGates", None)
    return {"name": name, "count": count, "template": template}
