"""`DeploymentController`: plays the Deployment and ReplicaSet controllers and the kubelet for
rolling updates, one deterministic `step()` at a time (no threads, no clock), so a test can
assert on the objects after each step.

Followed from kubernetes/pkg/controller/deployment (rolling.go `reconcileNewReplicaSet` /
`reconcileOldReplicaSets`, sync.go `calculateStatus`) and deployment/util
(`NewRSNewReplicas`, `MaxSurge`, `MaxUnavailable`): a ReplicaSet per distinct pod template
(matched by template equality, pods labelled `pod-template-hash`), the new one scaled up to
`replicas + maxSurge` pods in all, old ones scaled down only while `replicas - maxUnavailable`
pods stay available, unhealthy old pods removed first. A restored template finds its old
ReplicaSet again, as the real controller does. ReplicaSets are kept inside the controller
rather than as API objects; `minReadySeconds` (0 here) and the ProgressDeadlineExceeded
condition (needs a clock) are not modelled.

The kubelet part: a pod created in one step starts in the next; `start(pod)` returns None
(Ready) or the waiting reason its container stays in (e.g. "CrashLoopBackOff")."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable
from typing import Any

from .server import KubeAPIServer

Obj = dict[str, Any]
Starter = Callable[[Obj], str | None]


class DeploymentController:
    def __init__(
        self, server: KubeAPIServer, namespaces: Iterable[str], start: Starter = lambda p: None
    ) -> None:
        self.server, self.namespaces, self.start = server, tuple(namespaces), start
        # (namespace, deployment) -> {template hash: replicas}, in creation order
        self.replica_sets: dict[tuple[str, str], dict[str, int]] = {}
        self._serial = 0

    def step(self) -> None:
        """Start the pods created last step, then reconcile every Deployment once."""
        store = self.server.store
        for ns in self.namespaces:
            for pod in store.list("pods", ns):
                if pod["status"].get("phase") == "Pending":
                    store.put({**pod, "status": _started(pod, self.start(pod))})
            for deployment in store.list("deployments", ns):
                self._reconcile(deployment)

    def _reconcile(self, deployment: Obj) -> None:
        meta, spec = deployment["metadata"], deployment["spec"]
        key = (meta["namespace"], meta["name"])
        sets = self.replica_sets.setdefault(key, {})
        new = template_hash(spec["template"])
        sets.setdefault(new, 0)
        desired = int(spec.get("replicas", 1))
        surge, unavailable = _limits(spec, desired)
        pods = self._pods(deployment)
        total = sum(len(p) for p in pods.values())
        # reconcileNewReplicaSet: scale up within replicas + maxSurge.
        room = max(0, desired + surge - total)
        sets[new] = min(desired, sets[new] + room) if sets[new] < desired else desired
        # reconcileOldReplicaSets: unhealthy old pods first, then healthy ones while
        # replicas - maxUnavailable stay available.
        available = sum(1 for ps in pods.values() for p in ps if _ready(p))
        new_unavailable = sum(1 for p in pods.get(new, []) if not _ready(p))
        budget = total - (desired - unavailable) - new_unavailable
        for old in [h for h in sets if h != new]:
            for pod in [p for p in pods.get(old, []) if not _ready(p)]:
                if budget <= 0:
                    break
                sets[old], budget = sets[old] - 1, budget - 1
                self._delete(pod)
                pods[old].remove(pod)
        spare = available - (desired - unavailable)
        for old in [h for h in sets if h != new]:
            drop = max(0, min(spare, budget, sets[old]))
            sets[old] -= drop
            spare, budget = spare - drop, budget - drop
        for rs, count in sets.items():
            self._scale(deployment, rs, pods.get(rs, []), count)
        self._write_status(deployment, new)

    def _pods(self, deployment: Obj) -> dict[str, list[Obj]]:
        meta = deployment["metadata"]
        prefix = meta["name"] + "-"
        found: dict[str, list[Obj]] = {}
        for pod in self.server.store.list("pods", meta["namespace"]):
            name, labels = pod["metadata"]["name"], pod["metadata"].get("labels") or {}
            if name.startswith(prefix) and name[len(prefix) :].count("-") == 1:
                found.setdefault(labels.get("pod-template-hash", ""), []).append(pod)
        for pods in found.values():
            pods.sort(key=lambda p: int(p["metadata"]["name"].rsplit("-", 1)[1]))
        return found

    def _scale(self, deployment: Obj, rs: str, pods: list[Obj], count: int) -> None:
        for pod in pods[count:][::-1]:  # newest first
            self._delete(pod)
        for _ in range(count - min(len(pods), count)):
            self._create(deployment, rs)

    def _create(self, deployment: Obj, rs: str) -> None:
        meta, template = deployment["metadata"], deployment["spec"]["template"]
        self._serial += 1
        labels = {**(template["metadata"].get("labels") or {}), "pod-template-hash": rs}
        pod = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": f"{meta['name']}-{rs}-{self._serial}",
                "namespace": meta["namespace"],
                "labels": labels,
            },
            "spec": {**template["spec"], "nodeName": f"node-{self._serial}"},
            "status": {"phase": "Pending", "podIP": f"10.9.0.{self._serial}"},
        }
        self.server.store.put(pod)

    def _delete(self, pod: Obj) -> None:
        self.server.store.delete("pods", pod["metadata"]["namespace"], pod["metadata"]["name"])

    def _write_status(self, deployment: Obj, new: str) -> None:
        meta = deployment["metadata"]
        desired = int(deployment["spec"].get("replicas", 1))
        pods = self._pods(deployment)
        every = [p for ps in pods.values() for p in ps]
        ready = sum(1 for p in every if _ready(p))
        updated = len(pods.get(new, []))
        _, unavailable = _limits(deployment["spec"], desired)
        complete = updated == desired == len(every) and ready >= desired
        status = {
            "observedGeneration": meta.get("generation", 1),
            "replicas": len(every),
            "updatedReplicas": updated,
            "readyReplicas": ready,
            "availableReplicas": ready,
            "conditions": [
                _condition("Available", ready >= desired - unavailable, "MinimumReplicasAvailable"),
                _condition(
                    "Progressing",
                    True,
                    "NewReplicaSetAvailable" if complete else "ReplicaSetUpdated",
                ),
            ],
        }
        if desired - ready > 0:
            status["unavailableReplicas"] = desired - ready
        self.server.store.update_status("deployments", meta["namespace"], meta["name"], status)


def template_hash(template: Obj) -> str:
    """A stable name for a pod template (the real controller hashes it with FNV)."""
    digest = hashlib.sha256(json.dumps(template, sort_keys=True).encode()).hexdigest()
    return "".join(c for c in digest if c in "bcdfghjklmnpqrstvwxz2456789")[:10] or "h"


def _limits(spec: Obj, desired: int) -> tuple[int, int]:
    rolling = (spec.get("strategy") or {}).get("rollingUpdate") or {}

    def value(field: str, default: str) -> int:
        raw = rolling.get(field, default)
        if isinstance(raw, str) and raw.endswith("%"):
            share = desired * int(raw[:-1]) / 100
            return -int(-share // 1) if field == "maxSurge" else int(share)
        return int(raw)

    surge, unavailable = value("maxSurge", "25%"), value("maxUnavailable", "25%")
    if surge == 0 and unavailable == 0:
        unavailable = 1  # the API server refuses both 0; the controller would stall
    return surge, unavailable


def _ready(pod: Obj) -> bool:
    conditions = pod["status"].get("conditions") or []
    return any(c["type"] == "Ready" and c["status"] == "True" for c in conditions)


def _started(pod: Obj, waiting: str | None) -> Obj:
    container = pod["spec"]["containers"][0]
    state = {"waiting": {"reason": waiting, "message": "back-off"}} if waiting else {"running": {}}
    return {
        "phase": "Running",
        "podIP": pod["status"].get("podIP", ""),
        "conditions": [{"type": "Ready", "status": "False" if waiting else "True"}],
        "containerStatuses": [
            {
                "name": container["name"],
                "image": container["image"],
                "imageID": "",
                "ready": not waiting,
                "restartCount": 3 if waiting else 0,
                "state": state,
            }
        ],
    }


def _condition(kind: str, true: bool, reason: str) -> Obj:
    return {"type": kind, "status": "True" if true else "False", "reason": reason}
