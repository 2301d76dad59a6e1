"""`Scheduler`: kube-scheduler's filters for the pods of the test API server, and its binding.

Each pass takes the pods that have no node, no scheduling gate and are not finished, oldest
first, and runs the default profile's filters that concern these pods, in its order, stopping
at a node's first failure (pkg/scheduler/framework/plugins):
- TaintToleration: a NoSchedule or NoExecute taint no toleration matches (Equal: key, value and
  effect; Exists: key, or every key when the key is empty; an empty effect matches every one);
- NodeAffinity: every nodeSelector pair, and one of the required nodeSelectorTerms with all its
  matchExpressions (In, NotIn, Exists, DoesNotExist, Gt, Lt; an absent label satisfies only
  NotIn and DoesNotExist; Gt/Lt compare integers);
- NodeResourcesFit: each requested resource against allocatable minus the requests of pods
  already bound there and not finished (a container's request defaults to its limit, as the
  apiserver defaults it; init containers count at their largest), and one pod slot.
A pod that fits is bound to the first fitting node by name (the binding subresource: spec.nodeName
and PodScheduled=True). A pod that fits nowhere stays Pending with PodScheduled=False,
Unschedulable, and a Warning Event FailedScheduling from default-scheduler, both with FitError's
message ("0/N nodes are available: <count> <reason>, ... ."),
followed by DefaultPreemption's ("preemption: 0/N nodes are available: ..."): no pod here has
victims to evict, so every node says it either has none or that preemption would not help.
- DynamicResources: a pod's claims (from its ResourceClaimTemplates) need free devices of
  their DeviceClass on the node's ResourceSlices (`dra.py`; "cannot allocate all claims");
  on binding its claims are made, allocated there and reserved for it.
Not modelled: scoring (spreading), inter-pod affinity, ports, volumes."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from decimal import Decimal
from typing import Any

from .dra import allocate
from .kueue_status import quantity
from .server import KubeAPIServer

Obj = dict[str, Any]
AFFINITY = "node(s) didn't match Pod's node affinity/selector"
NOT_HELPFUL = "Preemption is not helpful for scheduling"
NO_VICTIMS = "No preemption victims found for incoming pod"
# Filters whose failure evicting pods could cure (Unschedulable, not ...AndUnresolvable).
RESOLVABLE = ("Insufficient", "Too many pods", "cannot allocate all claims")
_STAMP = "2026-01-01T00:00:00Z"


class Scheduler:
    """kube-scheduler for the pods of one test API server, one deterministic pass per `step`.

    Example:
        >>> Scheduler.__name__
        'Scheduler'
    """

    def __init__(self, server: KubeAPIServer) -> None:
        self.server = server
        self.bound: list[tuple[str, str, str]] = []  # (namespace, pod, node) in binding order

    def step(self) -> int:
        """Schedule every pod waiting for a node; returns how many pods it bound."""
        store = self.server.store
        nodes = sorted(store.list("nodes"), key=lambda n: n["metadata"]["name"])
        pods = sorted(store.list("pods"), key=lambda p: int(p["metadata"]["resourceVersion"]))
        bound = 0
        for pod in pods:
            spec, status = pod.get("spec") or {}, pod.get("status") or {}
            if spec.get("nodeName") or spec.get("schedulingGates"):
                continue
            if status.get("phase") in ("Succeeded", "Failed"):
                continue
            live = [p for p in store.list("pods") if (p.get("spec") or {}).get("nodeName")]
            reasons = {}
            chosen = ""
            devices: list[Obj] = []
            for node in nodes:
                node_name = node["metadata"]["name"]
                why = unfit(pod, node, [p for p in live if _on(p, node)])
                if not why and spec.get("resourceClaims"):
                    found = allocate(store, pod, node_name)
                    why = "" if found is not None else "cannot allocate all claims"
                    devices = found or []
                if not why:
                    chosen = node_name
                    break
                reasons[node_name] = why
            if chosen:
                self._claim(pod, chosen, devices)
                self._bind(pod, chosen)
                bound += 1
            else:
                self._unschedulable(pod, fit_error(len(nodes), reasons.values()))
        return bound

    def _bind(self, pod: Obj, node: str) -> None:
        meta = pod["metadata"]
        pod["spec"]["nodeName"] = node
        pod["status"] = {
            **(pod.get("status") or {}),
            "phase": "Pending",
            "conditions": [_condition("True", "", "")],
        }
        self.server.store.put(pod)
        self.bound.append((meta["namespace"], meta["name"], node))

    def _claim(self, pod: Obj, node: str, devices: list[Obj]) -> None:
        """Make the pod's claims, allocated on `node` and reserved for the pod."""
        meta = pod["metadata"]
        statuses = []
        for claim in pod["spec"].get("resourceClaims") or []:
            name = f"{meta['name']}-{claim['name']}"
            template = self.server.store.get(
                "resourceclaimtemplates", meta["namespace"], claim["resourceClaimTemplateName"]
            )
            results = [
                {k: d[k] for k in ("request", "driver", "pool", "device")}
                for d in devices
                if d["claim"] == claim["name"]
            ]
            selector = {
                "nodeSelectorTerms": [
                    {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}
                ]
            }
            self.server.store.create(
                {
                    "apiVersion": "resource.k8s.io/v1",
                    "kind": "ResourceClaim",
                    "metadata": {
                        "name": name,
                        "namespace": meta["namespace"],
                        "ownerReferences": [
                            {
                                "apiVersion": "v1",
                                "kind": "Pod",
                                "name": meta["name"],
                                "uid": meta["uid"],
                                "controller": True,
                            }
                        ],
                    },
                    "spec": (template or {}).get("spec", {}).get("spec", {}),
                }
            )
            status = {
                "allocation": {"devices": {"results": results}, "nodeSelector": selector},
                "reservedFor": [{"resource": "pods", "name": meta["name"], "uid": meta["uid"]}],
            }
            self.server.store.update_status("resourceclaims", meta["namespace"], name, status)
            statuses.append({"name": claim["name"], "resourceClaimName": name})
        if statuses:
            pod["status"] = {**(pod.get("status") or {}), "resourceClaimStatuses": statuses}

    def _unschedulable(self, pod: Obj, message: str) -> None:
        status = pod.get("status") or {}
        held = [c for c in status.get("conditions") or [] if c.get("type") == "PodScheduled"]
        if held and held[0].get("message") == message:
            return  # nothing changed since the last attempt: no write, as the scheduler skips it
        pod["status"] = {
            **status,
            "phase": "Pending",
            "conditions": [_condition("False", "Unschedulable", message)],
        }
        meta = self.server.store.put(pod)["metadata"]
        self.server.store.create(
            {
                "apiVersion": "v1",
                "kind": "Event",
                "metadata": {
                    "name": f"{meta['name']}.{meta['resourceVersion']}",
                    "namespace": meta["namespace"],
                },
                "involvedObject": {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "name": meta["name"],
                    "namespace": meta["namespace"],
                    "uid": meta.get("uid"),
                },
                "reason": "FailedScheduling",
                "message": message,
                "type": "Warning",
                "source": {"component": "default-scheduler"},
                "reportingComponent": "default-scheduler",
                "firstTimestamp": _STAMP,
                "lastTimestamp": _STAMP,
                "count": 1,
            }
        )


def fit_error(total: int, reasons: Iterable[str]) -> str:
    """FitError's message, then DefaultPreemption's, for a pod that fits none of `total` nodes.

    Example:
        >>> fit_error(3, [AFFINITY, AFFINITY, "Insufficient nvidia.com/gpu"])  # doctest: +ELLIPSIS
        "0/3 nodes are available: 1 Insufficient nvidia.com/gpu, 2 node(s) didn't match ..."
    """
    if not total:
        return "no nodes available to schedule pods"  # ErrNoNodesAvailable
    counted = Counter(reasons)
    message = f"0/{total} nodes are available:"
    if counted:
        message += " " + ", ".join(sorted(f"{n} {why}" for why, n in counted.items())) + "."
    helps = Counter(
        NO_VICTIMS if why.startswith(RESOLVABLE) else NOT_HELPFUL for why in counted.elements()
    )
    if helps:
        after = ", ".join(sorted(f"{n} {why}" for why, n in helps.items()))
        message += f" preemption: 0/{total} nodes are available: {after}."
    return message


def unfit(pod: Mapping[str, Any], node: Mapping[str, Any], bound: list[Obj]) -> str:
    """The first filter's reason why `pod` does not fit `node`, or "" when it fits."""
    spec = pod.get("spec") or {}
    labels = (node.get("metadata") or {}).get("labels") or {}
    tolerations = spec.get("tolerations") or []
    for taint in (node.get("spec") or {}).get("taints") or []:
        if taint.get("effect") not in ("NoSchedule", "NoExecute"):
            continue
        if not any(_tolerates(t, taint) for t in tolerations):
            return f"node(s) had untolerated taint {{{taint.get('key')}: {taint.get('value', '')}}}"
    if not _selected(spec, labels, str((node.get("metadata") or {}).get("name"))):
        return AFFINITY
    allocatable = ((node.get("status") or {}).get("allocatable")) or {}
    used: Counter[str] = Counter()
    for other in bound:
        for res, amount in requests(other.get("spec") or {}).items():
            used[res] += amount  # type: ignore[assignment]
    if len(bound) + 1 > quantity(allocatable.get("pods", 0)):
        return "Too many pods"
    for res, amount in sorted(requests(spec).items()):
        if amount and amount + used[res] > quantity(allocatable.get(res, 0)):
            return f"Insufficient {res}"
    return ""


def requests(spec: Mapping[str, Any]) -> dict[str, Decimal]:
    """A pod's effective requests: its containers' sum, or an init container's if larger."""
    total: dict[str, Decimal] = {}
    for container in spec.get("containers") or []:
        for res, amount in _container_requests(container).items():
            total[res] = total.get(res, Decimal(0)) + amount
    for container in spec.get("initContainers") or []:
        for res, amount in _container_requests(container).items():
            total[res] = max(total.get(res, Decimal(0)), amount)
    return total


def _container_requests(container: Mapping[str, Any]) -> dict[str, Decimal]:
    resources = container.get("resources") or {}
    merged = {**(resources.get("limits") or {}), **(resources.get("requests") or {})}
    return {res: quantity(value) for res, value in merged.items()}


def _tolerates(toleration: Mapping[str, Any], taint: Mapping[str, Any]) -> bool:
    if toleration.get("effect") and toleration["effect"] != taint.get("effect"):
        return False
    if toleration.get("operator") == "Exists":
        return not toleration.get("key") or toleration["key"] == taint.get("key")
    same_key = toleration.get("key") == taint.get("key")
    return same_key and toleration.get("value", "") == taint.get("value", "")


def _selected(spec: Mapping[str, Any], labels: Mapping[str, str], node_name: str) -> bool:
    if any(labels.get(k) != v for k, v in (spec.get("nodeSelector") or {}).items()):
        return False
    required = ((spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution"
    )
    if required is None:
        return True
    # An empty term matches no node; the terms are ORed, a term's requirements ANDed; the
    # only field a term may match is the node's name.
    fields = {"metadata.name": node_name}
    return any(
        (term.get("matchExpressions") or term.get("matchFields"))
        and all(_matches(e, labels) for e in term.get("matchExpressions") or [])
        and all(_matches(f, fields) for f in term.get("matchFields") or [])
        for term in required.get("nodeSelectorTerms") or []
    )


def _matches(expression: Mapping[str, Any], labels: Mapping[str, str]) -> bool:
    key, op = expression.get("key"), expression.get("operator")
    values = [str(v) for v in expression.get("values") or []]
    have = labels.get(str(key))
    if op == "In":
        return have is not None and have in values
    if op == "NotIn":
        return have is None or have not in values
    if op == "Exists":
        return have is not None
    if op == "DoesNotExist":
        return have is None
    if op in ("Gt", "Lt") and have is not None and len(values) == 1:
        try:
            mine, theirs = int(have), int(values[0])
        except ValueError:
            return False
        return mine > theirs if op == "Gt" else mine < theirs
    return False


def _on(pod: Mapping[str, Any], node: Mapping[str, Any]) -> bool:
    running = (pod.get("status") or {}).get("phase") not in ("Succeeded", "Failed")
    return running and (pod.get("spec") or {}).get("nodeName") == node["metadata"]["name"]


def _condition(status: str, reason: str, message: str) -> Obj:
    condition = {"type": "PodScheduled", "status": status, "lastTransitionTime": _STAMP}
    if reason:
        condition.update({"reason": reason, "message": message})
    return condition
