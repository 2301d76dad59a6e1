"""`preview`: what Kueue would do with a Workload submitted now, in one sentence."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from gkeml_sdk.core.objects import ObjView
from gkeml_sdk.runs.explain import workloads as wls
from gkeml_sdk.runs.explain.admission import (
    MODES,
    Outcome,
    admitted_workloads,
    decide,
    holding_flavors,
)
from gkeml_sdk.runs.explain.explanation import Evidence, Preview, Verdict
from gkeml_sdk.runs.explain.inputs import QueueObjects
from gkeml_sdk.runs.explain.quota import ZERO, QuotaTree
from gkeml_sdk.runs.explain.reading import amount, condition_evidence, name_of
from gkeml_sdk.runs.explain.usage import QuotaUsage, quota_usage

_VERDICTS = {
    "fit": Verdict.FITS,
    "borrow": Verdict.BORROWS,
    "preempt": Verdict.PREEMPTS,
    "wait": Verdict.WAITS,
    "never": Verdict.NEVER_FITS,
}


def preview(workload: ObjView, queues: QueueObjects) -> Preview:
    """The verdict Kueue's scheduler would reach for `workload` (a Workload view, e.g.
    `job.compile().workload`) against the queue state in `queues`.

    Example:
        >>> q = QueueObjects("team-a", "ml")
        >>> preview({"spec": {"queueName": "team-a", "podSets": []}}, q).verdict
        <Verdict.NEVER_FITS: 'never fits'>
    """
    lq, cq = queues.local_queue, queues.cluster_queue
    evidence = _evidence(queues)
    if lq is None:
        others = ", ".join(queues.local_queues) or "none"
        return Preview(
            Verdict.NEVER_FITS,
            f"Never admitted: LocalQueue {queues.queue_name} does not exist in namespace "
            f"{queues.namespace} (LocalQueues there: {others}). Set queue= to one of them, "
            "or ask your admin for a LocalQueue.",
            evidence,
        )
    cq_name = str((lq.get("spec") or {}).get("clusterQueue") or "")
    if cq is None:
        return Preview(
            Verdict.NEVER_FITS,
            f"Never admitted: LocalQueue {queues.queue_name} points at cluster queue "
            f"{cq_name}, which does not exist. Ask your admin to create it, or use another "
            "queue.",
            evidence,
        )
    priority, named = _priority(workload, queues)
    tree = QuotaTree(cq, queues.cohort_queues, queues.cohort)
    reading = quota_usage(tree, queues)
    usage = reading.used
    evidence += reading.evidence()
    admitted = admitted_workloads(list(queues.workloads), tree)
    outcomes, missing = decide(workload, tree, cq, usage, admitted, queues.flavors, priority)
    if missing:
        return Preview(
            Verdict.NEVER_FITS,
            f"Never fits: cluster queue {tree.name} has no quota for {', '.join(missing)}, "
            "which the pods request. Ask your admin to add it, or use another queue.",
            evidence,
        )
    if not outcomes:
        return Preview(Verdict.FITS, f"Fits now: the job asks for nothing {tree.name} limits.")
    worst = min(outcomes, key=lambda o: MODES.index(o.mode))
    text = _sentence(worst, tree, reading, priority, named, queues, workload)
    victims = tuple(wls.label(w) for o in outcomes for w in o.victims)
    waits = max(o.waits_for for o in outcomes)
    return Preview(_VERDICTS[worst.mode], text, evidence, victims, waits)


def _sentence(
    o: Outcome, tree: QuotaTree, reading: QuotaUsage, priority: int, named: str,
    queues: QueueObjects, workload: ObjView,
) -> str:  # fmt: skip
    (flavor, res), need = _deciding(o, tree, reading.used)
    q = tree.quota((flavor, res))
    used = reading.used.get(tree.name, {}).get((flavor, res), ZERO)
    state = (
        f"cluster queue {tree.name} uses {amount(used)} of {amount(q.nominal)} {res} in "
        f"flavor {flavor}{reading.note(tree.name, (flavor, res))}"
    )
    asks = f"this job needs {amount(need)}"
    if o.mode == "fit":
        return f"Fits now: {state} and {asks}; Kueue admits it at once."
    if o.mode == "borrow":
        borrowed = used + need - q.nominal
        return (
            f"Fits by borrowing: {state}; {asks}, so it borrows {amount(borrowed)} from cohort "
            f"{tree.cohort}. Another queue of the cohort may reclaim that quota later (and "
            "preempt this job), so checkpoint."
        )
    if o.mode == "preempt":
        names = ", ".join(f"{wls.label(w)} (priority {wls.priority(w)})" for w in o.victims)
        return (
            f"Would preempt: {state}; {asks}, and at priority {priority}{named} Kueue evicts "
            f"{names} to admit it (they are requeued and restart later)."
        )
    if o.mode == "wait":
        return (
            f"Waits: {state} {_borrowing(tree)}; {asks}, so it waits for {o.waits_for} running "
            f"workload{'s' if o.waits_for != 1 else ''} to finish ({_no_preemption(tree)}). "
            f"Ask for fewer, or {_raise(priority, queues)}."
        )
    if o.mismatch:
        others = holding_flavors(workload, queues.flavors)
        where = _elsewhere(others, queues)
        return (
            f"Never fits: flavor {flavor} of cluster queue {tree.name} cannot hold these "
            f"pods: {o.mismatch}. {where}, or ask for hardware the queue offers."
        )
    most = tree.potential((flavor, res))
    return (
        f"Never fits: {asks} {res} but cluster queue {tree.name} can hold at most "
        f"{amount(most)} {_limits(tree, (flavor, res))}. Ask for at most {amount(most)} "
        "(fewer nodes or accelerators), or use a queue with more quota."
    )


def _deciding(o: Outcome, tree: QuotaTree, usage: Any) -> tuple[Any, Any]:
    """The (flavor, resource) that decided the outcome: the one that cannot fit, else the
    one taking the largest share of its quota (the accelerator, usually)."""

    def tightness(item: tuple[Any, Any]) -> tuple[bool, bool, Any]:
        fr, need = item
        room = max(tree.available(fr, usage), ZERO)
        share = need / max(tree.quota(fr).nominal, Decimal(1))
        return need > tree.potential(fr), need > room, share

    return max(o.need.items(), key=tightness)


def _borrowing(tree: QuotaTree) -> str:
    return f"and borrows from cohort {tree.cohort}" if tree.cohort else "and has no cohort"


def _limits(tree: QuotaTree, fr: Any) -> str:
    q = tree.quota(fr)
    if not tree.cohort:
        return f"(nominal {amount(q.nominal)}, no cohort to borrow from)"
    limit = "unlimited" if q.borrowing_limit is None else amount(q.borrowing_limit)
    return f"(nominal {amount(q.nominal)}, borrowing limit {limit} in cohort {tree.cohort})"


def _no_preemption(tree: QuotaTree) -> str:
    return "none of them has a lower priority it may preempt"


def _raise(priority: int, queues: QueueObjects) -> str:
    higher = sorted((v, n) for n, v in queues.priority_classes.items() if v > priority)
    if not higher:
        return "wait"
    return f"raise the priority ({higher[0][1]})"


def _priority(workload: ObjView, queues: QueueObjects) -> tuple[int, str]:
    ref = ((workload.get("spec") or {}).get("priorityClassRef") or {}).get("name")
    if ref and ref in queues.priority_classes:
        return queues.priority_classes[ref], f" ({ref})"
    return wls.priority(workload), ""


def _evidence(queues: QueueObjects) -> tuple[Evidence, ...]:
    found: list[Evidence] = []
    for obj in (queues.local_queue, queues.cluster_queue, *queues.cohort_queues):
        if obj is None:
            continue
        found.extend(condition_evidence(obj, "Active"))
        used = ", ".join(
            f"{fr[1]}@{fr[0]}={amount(n)}"
            for fr, n in sorted(QuotaTree(obj).usage_now([obj]).get(name_of(obj), {}).items())
        )
        if used:
            found.append(Evidence(str(obj.get("kind", "")), name_of(obj), "reserved", message=used))
    for workload in queues.workloads:
        queue, held = wls.holds(workload)
        if held:
            what = ", ".join(f"{r}@{f}={amount(n)}" for (f, r), n in sorted(held.items()))
            found.append(
                Evidence("Workload", name_of(workload), f"holds quota in {queue}",
                         f"priority {wls.priority(workload)}", what, wls.admitted_at(workload))
            )  # fmt: skip
    return tuple(found)


def _elsewhere(flavors: list[str], queues: QueueObjects) -> str:
    """Where a job whose pods no flavor of its queue holds would be taken: the namespace's
    queues with quota in a flavor that holds them (when the reader saw every queue)."""
    if not flavors:
        return "No flavor of the cluster has such nodes: ask your admin for one"
    named = " or ".join(flavors)
    if queues.offers is None:
        return f"Use a queue with quota in flavor {named}, which has such nodes"
    takers = sorted({q for f in flavors for q in queues.offers.get(f, ())})
    if takers:
        return (
            f"Submit to queue {' or '.join(takers)} of namespace {queues.namespace}: it has "
            f"quota in flavor {named}, which has such nodes"
        )
    return (
        f"No queue of namespace {queues.namespace} has quota in flavor {named}, which has "
        "such nodes: ask your admin for quota there"
    )
