"""Why a Workload holds no quota yet (`QuotaReserved=False`): a missing queue, a request the
queue can never hold, or a full queue, told with the queue's numbers and the way out."""

from __future__ import annotations

import re
from decimal import Decimal

from gkeml_sdk.core.objects import ObjView
from gkeml_sdk.runs.explain import workloads as wls
from gkeml_sdk.runs.explain.explanation import Category, Evidence
from gkeml_sdk.runs.explain.inputs import QueueObjects
from gkeml_sdk.runs.explain.pod_reasons import Finding
from gkeml_sdk.runs.explain.quota import ZERO, QuotaTree
from gkeml_sdk.runs.explain.reading import amount, name_of, ordinal
from gkeml_sdk.runs.explain.usage import quota_usage
from gkeml_sdk.runs.workload import WorkloadView, read_workload

_SHORT = re.compile(r"for ([\w./-]+) in flavor ([\w.-]+)")
_USER = ("Misconfigured", "Inadmissible", "NoMatchingFlavor")
_GATED = ("OnHold", "AdmissionGated", "Suspended")


def why_queued(
    workload: ObjView, queues: QueueObjects | None, evidence: tuple[Evidence, ...]
) -> Finding:
    """The finding for a Workload without quota, from its `QuotaReserved` condition.

    Example:
        >>> wl = {"spec": {"queueName": "q"}, "status": {"conditions": [{"type":
        ...     "QuotaReserved", "status": "False", "reason": "Misconfigured",
        ...     "message": "LocalQueue q doesn't exist"}]}}
        >>> why_queued(wl, None, ()).category
        <Category.USER_ERROR: 'user error'>
    """
    view = read_workload(workload)
    cond = view.quota_reserved
    reason, message, lq = cond.reason, cond.message, view.queue_name
    if reason in _USER:
        known = ", ".join(queues.local_queues) if queues and queues.local_queues else "none seen"
        act = (
            "Ask for hardware the queue offers, or use another queue"
            if reason == "NoMatchingFlavor"
            else f"Resubmit with queue= set to an existing LocalQueue ({known})"
        )
        return Finding(
            Category.USER_ERROR, f"Never admitted: {message} (Kueue: {reason}). {act}.", evidence
        )
    if reason in _GATED:
        return Finding(
            Category.ADMISSION_CHECK,
            f"Held by Kueue ({reason}: {message}); it is admitted once the hold is lifted.",
            evidence,
        )
    if reason == "TopologyPlacementFailed":
        return Finding(
            Category.PLACEMENT,
            f"Queued in {lq}: Kueue finds no topology domain that holds all its pods "
            f"({message}). Ask for fewer nodes per domain, or wait for capacity.",
            evidence,
        )
    if not cond.seen:
        return Finding(
            Category.UNKNOWN,
            f"Queued in {lq}: Kueue has not evaluated it yet; ask again in a few seconds.",
            evidence,
        )
    return _quota(workload, reason, message, lq, queues, evidence)


def _quota(
    workload: ObjView,
    reason: str,
    message: str,
    lq: str,
    queues: QueueObjects | None,
    evidence: tuple[Evidence, ...],
) -> Finding:
    need = wls.requests(workload)
    short = _SHORT.search(message)
    res = short.group(1) if short else next(iter(need), "")
    flavor = short.group(2) if short else ""
    cq = queues.cluster_queue if queues else None
    if cq is None and reason == "ExceedsMaxQuota":  # the queue unread: Kueue's word is enough
        return Finding(
            Category.QUOTA,
            f"Never admitted: Kueue says {message or 'the request exceeds the queue'} (Kueue: "
            f"{reason}): the queue of {lq or 'this run'} can never hold it, so waiting does not "
            "help. Ask for fewer resources (fewer nodes or accelerators), or use a queue with "
            "more quota.",
            evidence,
        )
    if cq is None:
        return Finding(
            Category.QUOTA,
            f"Queued in {lq or 'its queue'}: Kueue says {message or reason}. Wait for running "
            "workloads to finish, or ask for fewer resources.",
            evidence,
        )
    assert queues is not None
    tree = QuotaTree(cq, queues.cohort_queues, queues.cohort)
    fr = (flavor or _first_flavor(tree, res), res)
    quota, asked = tree.quota(fr), need.get(res, ZERO)
    if reason == "ExceedsMaxQuota":
        most = tree.potential(fr)
        where = "no cohort to borrow from" if not tree.cohort else f"cohort {tree.cohort} included"
        return Finding(
            Category.QUOTA,
            f"Never admitted: it asks for {amount(asked)} {res} but cluster queue {tree.name} "
            f"can hold at most {amount(most)} ({where}; Kueue: {reason}). Ask for at most "
            f"{amount(most)} (fewer nodes or accelerators), or use a queue with more quota.",
            evidence,
        )
    reading = quota_usage(tree, queues)
    usage = reading.used
    used = usage.get(tree.name, {}).get(fr, ZERO)
    evidence += reading.evidence()
    free = amount(tree.cohort_available(fr, usage))
    borrow = (
        f"cannot borrow enough from cohort {tree.cohort} ({free} free there)"
        if tree.cohort
        else "has no cohort to borrow from"
    )
    place = _position(workload, queues)
    ahead = _ahead(workload, queues, res)
    if reason == "WaitingForPreemptedWorkloads":
        return Finding(
            Category.QUOTA,
            f"Admitted soon: cluster queue {tree.name} uses {amount(used)} of "
            f"{amount(quota.nominal)} {res} and Kueue preempted lower-priority workloads to "
            f"make room for its {amount(asked)}; it is admitted once they release their quota. "
            "Nothing to do.",
            evidence,
        )
    lead = f"Queued{place} in {lq}"
    return Finding(
        Category.QUOTA,
        f"{lead}: cluster queue {tree.name} uses {amount(used)} of {amount(quota.nominal)} {res}"
        f"{f' (flavor {fr[0]})' if fr[0] else ''}{reading.note(tree.name, fr)} and {borrow}; "
        f"{ahead}this run needs {amount(asked)}. Wait for running workloads to finish, ask for "
        f"fewer, or {_raise(workload, queues)}.",
        evidence,
    )


def _first_flavor(tree: QuotaTree, res: str) -> str:
    return next((f for (f, r) in tree.quotas.get(tree.name, {}) if r == res), "")


def _position(workload: ObjView, queues: QueueObjects) -> str:
    for item in (queues.pending or {}).get("items") or []:
        if (item.get("metadata") or {}).get("name") == name_of(workload):
            return f" {ordinal(int(item.get('positionInLocalQueue') or 0) + 1)}"
    return ""


def _ahead(workload: ObjView, queues: QueueObjects, res: str) -> str:
    mine = wls.priority(workload)
    created = _created(workload)
    queue = read_workload(workload).queue_name
    ahead = [
        w
        for w in queues.workloads
        if name_of(w) != name_of(workload)
        and _waiting_in(read_workload(w), queue)
        and not wls.holds(w)[1]
        and (-wls.priority(w), _created(w)) < (-mine, created)
    ]
    if not ahead:
        return ""
    needs = sorted({wls.requests(w).get(res, Decimal(0)) for w in ahead})
    each = " each" if len(needs) == 1 and len(ahead) > 1 else ""
    word = "job ahead needs" if len(ahead) == 1 else f"{len(ahead)} jobs ahead need"
    return f"the {word} {' and '.join(amount(n) for n in needs)} {res}{each}; "


def _waiting_in(other: WorkloadView, queue: str) -> bool:
    return other.queue_name == queue and other.active and not other.finished.seen


def _raise(workload: ObjView, queues: QueueObjects) -> str:
    mine = wls.priority(workload)
    higher = sorted((v, n) for n, v in queues.priority_classes.items() if v > mine)
    return f"raise the priority ({higher[0][1]})" if higher else "cancel other runs"


def _created(workload: ObjView) -> str:
    return str((workload.get("metadata") or {}).get("creationTimestamp") or "")
