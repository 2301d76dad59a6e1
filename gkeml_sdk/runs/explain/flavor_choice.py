"""Which ResourceFlavor Kueue would give a Workload now, following the ClusterQueue's
`flavorFungibility`: the flavors of an ordered queue (reservation, on-demand, Spot, DWS) are
tried in turn, and one that fits only by borrowing or preempting yields to the next when the
queue says `TryNextFlavor` (kueue pkg/scheduler/flavorassigner, `shouldTryNextFlavor`)."""

from __future__ import annotations

import copy
from dataclasses import replace

from gkeml_sdk.core.objects import ObjView
from gkeml_sdk.runs.explain import workloads as wls
from gkeml_sdk.runs.explain.admission import MODES, admitted_workloads, decide
from gkeml_sdk.runs.explain.explanation import Preview
from gkeml_sdk.runs.explain.inputs import QueueObjects
from gkeml_sdk.runs.explain.quota import QuotaTree, groups

# Kueue's defaults (ClusterQueue CRD): borrowing stops the search, preempting does not.
_DEFAULTS = {"whenCanBorrow": "MayStopSearch", "whenCanPreempt": "TryNextFlavor"}
_STOPS = {"borrow": "whenCanBorrow", "preempt": "whenCanPreempt"}


def landing_flavor(workload: ObjView, queues: QueueObjects) -> str | None:
    """The flavor of the first resource group the Workload needs that Kueue would assign now,
    or None when no flavor of its ClusterQueue can hold it (or the queue is missing).

    Example:
        >>> gpu = {"name": "nvidia.com/gpu", "nominalQuota": "8"}
        >>> cq = {"metadata": {"name": "cq"}, "spec": {"resourceGroups": [{"coveredResources":
        ...     ["nvidia.com/gpu"], "flavors": [{"name": "h100-reservation", "resources": [
        ...     {**gpu, "nominalQuota": "0"}]}, {"name": "h100-standard", "resources": [gpu]}]}]}}
        >>> wl = {"spec": {"podSets": [{"count": 1, "template": {"spec": {"containers":
        ...     [{"resources": {"requests": {"nvidia.com/gpu": 8}}}]}}}]}}
        >>> landing_flavor(wl, QueueObjects("a", "ml", local_queue={}, cluster_queue=cq))
        'h100-standard'
    """
    cq = queues.cluster_queue
    if cq is None or queues.local_queue is None:
        return None
    fungibility = {**_DEFAULTS, **((cq.get("spec") or {}).get("flavorFungibility") or {})}
    need = wls.requests(workload)
    for resources, names in groups(cq):
        if not any(need.get(r, 0) > 0 for r in resources):
            continue
        best: tuple[int, str] | None = None
        for flavor in names:
            mode = _mode_in(workload, queues, cq, flavor)
            if mode == "never":
                continue
            if best is None or MODES.index(mode) > best[0]:
                best = (MODES.index(mode), flavor)
            if mode == "fit" or fungibility.get(_STOPS.get(mode, ""), "") == "MayStopSearch":
                return flavor
        return best[1] if best is not None else None
    return None


def with_landing_flavor(found: Preview, workload: ObjView, queues: QueueObjects) -> Preview:
    """`found` with the flavor Kueue would assign now, when the queue offers several."""
    flavor = landing_flavor(workload, queues)
    offered = {f for _, names in groups(queues.cluster_queue) for f in names}
    if flavor is None or len(offered) < 2:
        return found
    return replace(found, sentence=f"{found.sentence} It would land on flavor {flavor}.")


def _mode_in(workload: ObjView, queues: QueueObjects, cq: ObjView, flavor: str) -> str:
    """What Kueue would do with the Workload were `flavor` the queue's only choice."""
    alone = copy.deepcopy(dict(cq))
    for group in alone.get("spec", {}).get("resourceGroups") or []:
        names = [f.get("name") for f in group.get("flavors") or []]
        if flavor in names:  # the other groups keep their flavors
            group["flavors"] = [f for f in group["flavors"] if f.get("name") == flavor]
    tree = QuotaTree(alone, queues.cohort_queues, queues.cohort)
    usage = tree.usage_now([alone, *queues.cohort_queues])
    admitted = admitted_workloads(list(queues.workloads), tree)
    ref = ((workload.get("spec") or {}).get("priorityClassRef") or {}).get("name")
    priority = queues.priority_classes.get(ref or "", wls.priority(workload))
    outcomes, missing = decide(workload, tree, alone, usage, admitted, queues.flavors, priority)
    if missing or not outcomes:
        return "never" if missing else "fit"
    return min(outcomes, key=lambda o: MODES.index(o.mode)).mode
