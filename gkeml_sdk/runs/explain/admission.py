"""Kueue's admission decision for a new Workload, as its scheduler makes it: pick a flavor per
resource group in order, fit (or fit by borrowing), else find the workloads classic preemption
would evict, else wait (https://kueue.sigs.k8s.io/docs/concepts/preemption/,
https://kueue.sigs.k8s.io/docs/concepts/cluster_queue/)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from gkeml_sdk.core.objects import ObjView
from gkeml_sdk.runs.explain import workloads as wls
from gkeml_sdk.runs.explain.quota import ZERO, FlavorResource, QuotaTree, Usage, groups

# Worst first: the verdict of a job is the worst verdict of its resource groups.
MODES = ("never", "wait", "preempt", "borrow", "fit")


@dataclass(frozen=True)
class Outcome:
    """What one flavor (or, finally, the job) gets: a mode and what it depends on."""

    mode: str
    flavor: str = ""
    victims: tuple[ObjView, ...] = ()
    waits_for: int = 0
    mismatch: str = ""  # why the flavor cannot hold these pods at all
    need: Mapping[FlavorResource, Decimal] = field(default_factory=dict)


def decide(
    workload: ObjView,
    tree: QuotaTree,
    cq: ObjView,
    usage: Usage,
    admitted: list[ObjView],
    flavors: Mapping[str, ObjView],
    priority: int,
) -> tuple[list[Outcome], tuple[str, ...]]:
    """The outcome of each resource group the workload needs, and resources no group covers.

    Example:
        >>> cq = {"metadata": {"name": "cq"}, "spec": {"resourceGroups": [{"coveredResources":
        ...     ["nvidia.com/gpu"], "flavors": [{"name": "f", "resources": [{"name":
        ...     "nvidia.com/gpu", "nominalQuota": "16"}]}]}]}}
        >>> wl = {"spec": {"podSets": [{"count": 2, "template": {"spec": {"containers":
        ...     [{"resources": {"requests": {"nvidia.com/gpu": 8}}}]}}}]}}
        >>> [o.mode for o in decide(wl, QuotaTree(cq), cq, {}, [], {}, 0)[0]]
        ['fit']
    """
    need = wls.requests(workload)
    covered = {res for resources, _ in groups(cq) for res in resources}
    missing = tuple(sorted(res for res in need if res not in covered and need[res] > 0))
    keys = label_keys(flavors)
    results = []
    for resources, names in groups(cq):
        wanted = [r for r in resources if need.get(r, ZERO) > 0]
        if not wanted:
            continue
        tried = []
        for flavor in names:
            spec = (flavors.get(flavor) or {}).get("spec") or {}
            reason = mismatch(spec, workload, keys)
            asked = {(flavor, r): need[r] for r in wanted}
            outcome = (
                Outcome("never", flavor, mismatch=reason, need=asked)
                if reason
                else _try(asked, tree, cq, usage, admitted, priority, flavor)
            )
            tried.append(outcome)
            if outcome.mode in ("fit", "borrow"):
                break  # whenCanBorrow: MayStopSearch (the default)
        results.append(min(tried, key=lambda o: -MODES.index(o.mode)))
    return results, missing


def _try(
    asked: dict[FlavorResource, Decimal],
    tree: QuotaTree,
    cq: ObjView,
    usage: Usage,
    admitted: list[ObjView],
    priority: int,
    flavor: str,
) -> Outcome:
    if any(n > tree.potential(fr) for fr, n in asked.items()):
        return Outcome("never", flavor, need=asked)
    if _fits(asked, tree, usage):
        mine = usage.get(tree.name, {})
        borrow = any(mine.get(fr, ZERO) + n > tree.quota(fr).nominal for fr, n in asked.items())
        return Outcome("borrow" if borrow else "fit", flavor, need=asked)
    victims = _victims(asked, tree, cq, usage, admitted, priority)
    if victims:
        return Outcome("preempt", flavor, victims=tuple(victims), need=asked)
    return Outcome("wait", flavor, waits_for=_waits(asked, tree, usage, admitted), need=asked)


def _fits(asked: Mapping[FlavorResource, Decimal], tree: QuotaTree, usage: Usage) -> bool:
    return all(n <= tree.available(fr, usage) for fr, n in asked.items())


def _without(usage: Usage, gone: list[ObjView]) -> Usage:
    left = {queue: dict(used) for queue, used in usage.items()}
    for workload in gone:
        queue, held = wls.holds(workload)
        for fr, n in held.items():
            left.setdefault(queue, {})[fr] = left.get(queue, {}).get(fr, ZERO) - n
    return left


def _victims(
    asked: dict[FlavorResource, Decimal],
    tree: QuotaTree,
    cq: ObjView,
    usage: Usage,
    admitted: list[ObjView],
    priority: int,
) -> list[ObjView]:
    """Classic preemption: lower-priority workloads of the same ClusterQueue
    (withinClusterQueue), and cohort members' workloads that borrow (reclaimWithinCohort),
    chosen as Kueue orders them, so that the new workload fits within its nominal quota."""
    policy = (cq.get("spec") or {}).get("preemption") or {}
    within = policy.get("withinClusterQueue", "Never")
    reclaim = policy.get("reclaimWithinCohort", "Never") if tree.cohort else "Never"
    candidates = []
    for workload in admitted:
        queue, held = wls.holds(workload)
        if not any(fr in held for fr in asked):
            continue
        lower = wls.priority(workload) < priority
        if queue == tree.name and within != "Never" and lower:
            candidates.append(workload)
        elif queue != tree.name and queue in tree.quotas and reclaim != "Never":
            borrowing = any(
                usage.get(queue, {}).get(fr, ZERO) > tree.quota(fr, queue).nominal for fr in asked
            )
            if borrowing and (reclaim == "Any" or lower):
                candidates.append(workload)
    # Other queues' borrowers first, then lower priority, then the most recently admitted.
    candidates.sort(key=wls.admitted_at, reverse=True)
    candidates.sort(key=lambda w: (wls.holds(w)[0] == tree.name, wls.priority(w)))

    def fits_nominal(left: Usage) -> bool:
        mine = left.get(tree.name, {})
        within_nominal = all(
            mine.get(fr, ZERO) + n <= tree.quota(fr).nominal for fr, n in asked.items()
        )
        return within_nominal and _fits(asked, tree, left)

    chosen: list[ObjView] = []
    for workload in candidates:
        chosen.append(workload)
        if fits_nominal(_without(usage, chosen)):
            break
    else:
        return []
    for workload in reversed(chosen[:-1]):  # give back whom it does not need after all
        rest = [w for w in chosen if w is not workload]
        if fits_nominal(_without(usage, rest)):
            chosen = rest
    return chosen


def _waits(
    asked: Mapping[FlavorResource, Decimal], tree: QuotaTree, usage: Usage, admitted: list[ObjView]
) -> int:
    """The fewest running workloads (its own queue's first, biggest first) that must finish."""
    holding = [w for w in admitted if any(fr in wls.holds(w)[1] for fr in asked)]
    holding.sort(key=lambda w: -sum(wls.holds(w)[1].get(fr, ZERO) for fr in asked))
    holding.sort(key=lambda w: wls.holds(w)[0] != tree.name)
    for count in range(1, len(holding) + 1):
        if _fits(asked, tree, _without(usage, holding[:count])):
            return count
    return len(holding)


def label_keys(flavors: Mapping[str, ObjView]) -> set[str]:
    """The node labels that tell the cluster's flavors apart. Kueue matches a pod's node
    selector only against the labels of its ClusterQueue's flavors, but gkeml pins pods to a
    kind of capacity (`cloud.google.com/gke-spot`, a reservation, flex-start) by a label some
    flavor carries: a flavor without it would count the pods against quota of capacity they
    never run on, so every flavor's labels are read, as if the queue offered them all."""
    return {k for f in flavors.values() for k in (f.get("spec") or {}).get("nodeLabels") or {}}


def holding_flavors(workload: ObjView, flavors: Mapping[str, ObjView]) -> list[str]:
    """The cluster's flavors whose nodes could hold the workload's pods (by labels, taints
    and topology; quota aside): where a queue that takes the job has its quota.

    Example:
        >>> spot = {"spec": {"nodeLabels": {"cloud.google.com/gke-spot": "true"}}}
        >>> wl = {"spec": {"podSets": [{"template": {"spec": {"nodeSelector": {
        ...     "cloud.google.com/gke-spot": "true"}}}}]}}
        >>> holding_flavors(wl, {"standard": {"spec": {}}, "spot": spot})
        ['spot']
    """
    keys = label_keys(flavors)
    return sorted(
        n for n, f in flavors.items() if not mismatch(f.get("spec") or {}, workload, keys)
    )


def mismatch(flavor: Mapping[str, Any], workload: ObjView, keys: set[str]) -> str:
    """Why a flavor (its spec) cannot hold the workload's pods, or "" when it can: a node
    label they select that it lacks, a taint they do not tolerate, or a topology request to a
    flavor without topology, which Kueue never admits.

    Example:
        >>> wl = {"spec": {"podSets": [{"template": {"metadata": {"annotations": {
        ...     "kueue.x-k8s.io/podset-required-topology": "kubernetes.io/hostname"}}}}]}}
        >>> mismatch({"nodeLabels": {}}, wl, set())  # doctest: +ELLIPSIS
        'it has no topology (spec.topologyName) and the pods ask to share kubernetes.io/hostname...'
    """
    selector, tolerations = wls.pod_selector(workload)
    level = wls.topology_request(workload)
    if level and not flavor.get("topologyName"):
        return (
            f"it has no topology (spec.topologyName) and the pods ask to share {level}; Kueue "
            "admits topology-aware pods only to a flavor with a Topology"
        )
    labels = flavor.get("nodeLabels") or {}
    for key in sorted(keys & set(selector)):
        if labels.get(key) != selector[key]:
            return f"its nodes are {key}={labels.get(key, '(unset)')}, the pods ask {selector[key]}"
    for taint in flavor.get("nodeTaints") or []:
        if taint.get("effect") == "PreferNoSchedule":
            continue
        if not any(tolerates(t, taint) for t in tolerations):
            return f"its nodes are tainted {taint.get('key')}:{taint.get('effect')}"
    return ""


def tolerates(toleration: ObjView, taint: ObjView) -> bool:
    """Whether a pod's `toleration` tolerates a node's `taint` (Kubernetes' matching rules).

    Example:
        >>> tolerates({"key": "nvidia.com/gpu", "operator": "Exists"},
        ...           {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"})
        True
    """
    if toleration.get("effect") and toleration.get("effect") != taint.get("effect"):
        return False
    if toleration.get("operator") == "Exists":
        return not toleration.get("key") or toleration.get("key") == taint.get("key")
    return bool(
        toleration.get("key") == taint.get("key") and toleration.get("value") == taint.get("value")
    )


def admitted_workloads(workloads: list[ObjView], tree: QuotaTree) -> list[ObjView]:
    """Workloads holding quota in the ClusterQueue or its cohort members."""
    return [w for w in workloads if wls.holds(w)[0] in tree.quotas]
