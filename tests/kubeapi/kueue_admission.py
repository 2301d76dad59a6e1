"""`KueueAdmission`: Kueue's job reconcilers and scheduler for the test API server, one
deterministic pass per `step`, for jobs that queue-name a LocalQueue:
- the Workloads of queued jobs that have none yet (`kueue_workloads.py`);
- admission in creation order: the LocalQueue's ClusterQueue must exist and select the namespace;
  each pod set takes, in each resource group covering its resources, the first flavor (in the
  queue's order) whose node labels its nodeSelector and required node affinity allow, whose
  node taints it tolerates (with the flavor's own tolerations) and whose nominal quota still
  holds it after the admitted Workloads; a resource no group covers, or quota nowhere, leaves
  the Workload pending with Kueue's message (QuotaReserved=False/Pending);
- on admission (QuotaReserved and Admitted true, status.admission as Kueue writes it) the job
  starts with the flavor's node labels merged into its pods' nodeSelector and its tolerations
  appended (podset.Merge): a Job or JobSet is unsuspended with its templates so changed, a
  pod loses its `kueue.x-k8s.io/admission` and `kueue.x-k8s.io/topology` gates.
Not modelled: cohorts' borrowing and preemption, priorities (first come, first admitted),
admission checks, Topology-Aware Scheduling's per-pod placement (a pod set asking a topology is
admitted on its flavor and left to the scheduler). Claimed DRA devices are charged as Kueue's
DRA integration charges them: each request's count to the resource `device_classes` (Kueue's
`resources.deviceClassMappings`) maps its DeviceClass to; an unmapped class leaves the Workload
inadmissible (the wording of that message is this server's, not Kueue's)."""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from .dra import device_count
from .kueue_status import canonical, quantity
from .kueue_workloads import GATES, LWS_GROUP, LWS_NAME, LWS_WORKER, new_workloads
from .scheduler import requests, unfit
from .server import KubeAPIServer

Obj = dict[str, Any]
_STAMP = "2026-01-01T00:00:00Z"


class KueueAdmission:
    """Kueue's Workload creation, admission and job start for one test API server.

    Example:
        >>> KueueAdmission.__name__
        'KueueAdmission'
    """

    def __init__(
        self, server: KubeAPIServer, device_classes: Mapping[str, str] | None = None
    ) -> None:
        self.server = server
        self.device_classes = dict(device_classes or {})  # resources.deviceClassMappings
        self.admitted: list[tuple[str, str, str]] = []  # (namespace, Workload, ClusterQueue)

    def step(self) -> int:
        """Create the missing Workloads, admit what fits and start it; returns how many
        Workloads it admitted."""
        for workload in new_workloads(self.server.store):
            self.server.store.create(workload)
        admitted = 0
        workloads = self.server.store.list("workloads")
        for workload in sorted(workloads, key=lambda w: int(w["metadata"]["resourceVersion"])):
            if (workload.get("status") or {}).get("admission"):
                continue
            assignment, why = self._assign(workload)
            if why:
                self._pending(workload, why)
                continue
            self._admit(workload, assignment)
            admitted += 1
        return admitted

    # Workloads ---------------------------------------------------------------------------

    # Admission ---------------------------------------------------------------------------

    def _assign(self, workload: Obj) -> tuple[Obj, str]:
        """Status.admission for `workload`, or why Kueue leaves it pending."""
        store = self.server.store
        meta, spec = workload["metadata"], workload["spec"]
        local = store.get("localqueues", meta["namespace"], spec["queueName"])
        if local is None:
            return {}, f"LocalQueue {spec['queueName']} doesn't exist"
        cq_name = local["spec"]["clusterQueue"]
        cq = store.get("clusterqueues", None, cq_name)
        if cq is None:
            return {}, f"ClusterQueue {cq_name} doesn't exist"
        namespace = store.get("namespaces", None, meta["namespace"]) or {}
        if not _selects(cq["spec"].get("namespaceSelector"), namespace):
            return {}, "Workload namespace doesn't match ClusterQueue selector"
        used = self._usage(cq_name)
        previous: dict[Any, Decimal] = {}  # this Workload's earlier pod sets
        assignments = []
        for pod_set in spec["podSets"]:
            count = int(pod_set.get("count", 1))
            pod = {
                "metadata": {"namespace": meta["namespace"]},
                "spec": (pod_set.get("template") or {}).get("spec") or {},
            }
            per_pod = requests(pod["spec"])
            try:
                per_pod.update(device_count(store, pod, self.device_classes))
            except KeyError as unmapped:
                return {}, f"DeviceClass {unmapped.args[0]} is not in deviceClassMappings"
            total = {res: amount * count for res, amount in per_pod.items() if amount}
            flavors: dict[str, str] = {}
            for res in total:
                if not any(res in g.get("coveredResources", []) for g in _groups(cq)):
                    return {}, (
                        f"couldn't assign flavors to pod set {pod_set['name']}: resource {res} "
                        f"unavailable in ClusterQueue"
                    )
            for group in _groups(cq):
                asked = {r: total[r] for r in group.get("coveredResources", []) if r in total}
                if not asked:
                    continue
                flavor, why = self._flavor(pod_set, group, asked, used, previous)
                if why:
                    return {}, f"couldn't assign flavors to pod set {pod_set['name']}: {why}"
                flavors.update({res: flavor for res in asked})
            for res, amount in total.items():
                key = (flavors[res], res)
                previous[key] = previous.get(key, Decimal(0)) + amount
            assignments.append(
                {
                    "name": pod_set["name"],
                    "count": count,
                    "flavors": flavors,
                    "resourceUsage": {res: canonical(v) for res, v in total.items()},
                }
            )
        return {"clusterQueue": cq_name, "podSetAssignments": assignments}, ""

    def _flavor(
        self,
        pod_set: Obj,
        group: Obj,
        asked: dict[str, Decimal],
        used: dict[Any, Decimal],
        previous: dict[Any, Decimal],
    ) -> tuple[str, str]:
        reasons = []
        template = pod_set.get("template") or {}
        store = self.server.store
        flavors = {
            e["name"]: store.get("resourceflavors", None, e["name"]) for e in group["flavors"]
        }
        # Kueue matches the pods' selectors on the node label keys of the group's flavors.
        keys = {
            k
            for f in flavors.values()
            for k in ((f or {}).get("spec") or {}).get("nodeLabels") or {}
        }
        for entry in group.get("flavors") or []:
            flavor = flavors[entry["name"]]
            if flavor is None:
                reasons.append(f"flavor {entry['name']} not found")
                continue
            fspec = flavor.get("spec") or {}
            as_node = {
                "metadata": {"name": "", "labels": fspec.get("nodeLabels") or {}},
                "spec": {"taints": fspec.get("nodeTaints") or []},
                "status": {"allocatable": {"pods": "1"}},
            }
            pod_spec = dict(template.get("spec") or {})
            pod_spec["tolerations"] = [
                *(pod_spec.get("tolerations") or []),
                *(fspec.get("tolerations") or []),
            ]
            pod_spec["nodeSelector"] = {
                k: v for k, v in (pod_spec.get("nodeSelector") or {}).items() if k in keys
            }
            pod_spec["affinity"] = _affinity_on(pod_spec, keys)
            pod_spec["containers"] = []
            why = unfit({"spec": pod_spec}, as_node, [])
            if why:
                reasons.append(f"flavor {entry['name']} doesn't match ({why})")
                continue
            short = _short_of_quota(entry, asked, used, previous)
            if short:
                reasons.append(short)
                continue
            return entry["name"], ""
        return "", ", ".join(reasons)

    def _usage(self, cq_name: str) -> dict[Any, Decimal]:
        used: dict[Any, Decimal] = {}
        for workload in self.server.store.list("workloads"):
            admission = (workload.get("status") or {}).get("admission") or {}
            if admission.get("clusterQueue") != cq_name:
                continue
            for ps in admission.get("podSetAssignments") or []:
                for res, value in (ps.get("resourceUsage") or {}).items():
                    key = (ps["flavors"][res], res)
                    used[key] = used.get(key, Decimal(0)) + quantity(value)
        return used

    def _pending(self, workload: Obj, why: str) -> None:
        reason = "Inadmissible" if "doesn't" in why else "Pending"
        condition = {
            "type": "QuotaReserved",
            "status": "False",
            "reason": reason,
            "message": why,
            "lastTransitionTime": _STAMP,
        }
        held = (workload.get("status") or {}).get("conditions") or []
        if any(c.get("message") == why for c in held):
            return
        self.server.store.update_status(
            "workloads",
            workload["metadata"]["namespace"],
            workload["metadata"]["name"],
            {"conditions": [condition]},
        )

    def _admit(self, workload: Obj, admission: Obj) -> None:
        meta = workload["metadata"]
        conditions = [
            {
                "type": "QuotaReserved",
                "status": "True",
                "reason": "QuotaReserved",
                "message": f"Quota reserved in ClusterQueue {admission['clusterQueue']}",
                "lastTransitionTime": _STAMP,
            },
            {
                "type": "Admitted",
                "status": "True",
                "reason": "Admitted",
                "message": "The workload is admitted",
                "lastTransitionTime": _STAMP,
            },
        ]
        self.server.store.update_status(
            "workloads",
            meta["namespace"],
            meta["name"],
            {"admission": admission, "conditions": conditions},
        )
        self.admitted.append((meta["namespace"], meta["name"], admission["clusterQueue"]))
        by_pod_set = {a["name"]: a for a in admission["podSetAssignments"]}
        self._start(workload, by_pod_set)

    def _start(self, workload: Obj, by_pod_set: Mapping[str, Obj]) -> None:
        """Run the job with each pod set's flavor merged into its pods (podset.Merge)."""
        store = self.server.store
        owner = workload["metadata"]["ownerReferences"][0]
        namespace = workload["metadata"]["namespace"]
        if owner["kind"] in ("Job", "JobSet"):
            plural = "jobs" if owner["kind"] == "Job" else "jobsets"
            job = store.get(plural, namespace, owner["name"])
            if job is None:
                return
            if owner["kind"] == "Job":
                self._merge(job["spec"]["template"], by_pod_set["main"])
            else:
                for rj in job["spec"]["replicatedJobs"]:
                    self._merge(rj["template"]["spec"]["template"], by_pod_set[rj["name"]])
            job["spec"]["suspend"] = False
            store.put(job, manager="kueue")
            return
        lead = store.get("pods", namespace, owner["name"]) or {}
        labels = (lead.get("metadata") or {}).get("labels") or {}
        members = [lead]
        if labels.get(LWS_NAME):
            members = [
                p
                for p in store.list("pods", namespace)
                if (p["metadata"].get("labels") or {}).get(LWS_NAME) == labels[LWS_NAME]
                and p["metadata"]["labels"].get(LWS_GROUP) == labels.get(LWS_GROUP)
            ]
        for pod in members:
            role = "main"
            if labels.get(LWS_NAME):
                leader = (pod["metadata"].get("labels") or {}).get(LWS_WORKER, "0") == "0"
                role = "leader" if leader else "workers"
            self._merge(pod, by_pod_set[role])
            pod["spec"]["schedulingGates"] = [
                g for g in pod["spec"].get("schedulingGates") or [] if g.get("name") not in GATES
            ]
            store.put(pod, manager="kueue")

    def _merge(self, template: Obj, assignment: Obj) -> None:
        spec = template.setdefault("spec", {})
        for flavor_name in dict.fromkeys(assignment["flavors"].values()):
            flavor = self.server.store.get("resourceflavors", None, flavor_name) or {}
            fspec = flavor.get("spec") or {}
            spec["nodeSelector"] = {
                **(spec.get("nodeSelector") or {}),
                **(fspec.get("nodeLabels") or {}),
            }
            tolerations = spec.setdefault("tolerations", [])
            tolerations += [t for t in fspec.get("tolerations") or [] if t not in tolerations]


def _short_of_quota(
    entry: Obj, asked: dict[str, Decimal], used: dict[Any, Decimal], previous: dict[Any, Decimal]
) -> str:
    """Kueue's reason why a flavor's nominal quota cannot hold a pod set (flavorassigner):
    more than the quota itself, or more than what the admitted Workloads leave of it."""
    zero = Decimal(0)
    quota = {r["name"]: quantity(r.get("nominalQuota", 0)) for r in entry["resources"]}
    for res, amount in asked.items():
        key, most = (entry["name"], res), quota.get(res, zero)
        before = previous.get(key, zero)
        if before + amount > most:
            return (
                f"insufficient quota for {res} in flavor {entry['name']}, previously considered "
                f"podsets requests ({canonical(before)}) + current podset request "
                f"({canonical(amount)}) > maximum capacity ({canonical(most)})"
            )
        more = used.get(key, zero) + before + amount - most
        if more > 0:
            return (
                f"insufficient unused quota for {res} in flavor {entry['name']}, "
                f"{canonical(more)} more needed"
            )
    return ""


def _groups(cq: Obj) -> list[Obj]:
    return list((cq.get("spec") or {}).get("resourceGroups") or [])


def _affinity_on(pod_spec: Mapping[str, Any], keys: set[str]) -> Obj | None:
    """The pod's required node affinity restricted to expressions on `keys`, as Kueue's flavor
    assigner reads it (terms left empty by the restriction match every flavor)."""
    required = ((pod_spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution"
    )
    if not required:
        return None
    terms = []
    for term in required.get("nodeSelectorTerms") or []:
        kept = [e for e in term.get("matchExpressions") or [] if e.get("key") in keys]
        if not kept:
            return None
        terms.append({"matchExpressions": kept})
    return {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}
        }
    }


def _selects(selector: Mapping[str, Any] | None, namespace: Mapping[str, Any]) -> bool:
    """A ClusterQueue's namespaceSelector (nil matches no namespace, {} every one)."""
    if selector is None:
        return False
    labels = (namespace.get("metadata") or {}).get("labels") or {}
    if any(labels.get(k) != v for k, v in (selector.get("matchLabels") or {}).items()):
        return False
    for expr in selector.get("matchExpressions") or []:
        have, values = labels.get(expr["key"]), expr.get("values") or []
        ok = {
            "In": have in values,
            "NotIn": have not in values,
            "Exists": have is not None,
            "DoesNotExist": have is None,
        }[expr["operator"]]
        if not ok:
            return False
    return True
