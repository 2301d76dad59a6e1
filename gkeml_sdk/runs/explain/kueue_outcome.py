"""What a Workload's conditions and admission checks say once Kueue has acted on it: finished,
deactivated, evicted, admitted, or waiting for its admission checks
(https://kueue.sigs.k8s.io/docs/concepts/workload/)."""

from __future__ import annotations

from gkeml_sdk.runs import workload as wl
from gkeml_sdk.runs.explain.explanation import Category, Evidence
from gkeml_sdk.runs.explain.inputs import RunObjects
from gkeml_sdk.runs.explain.pod_reasons import Finding
from gkeml_sdk.runs.explain.reading import name_of
from gkeml_sdk.runs.workload import Check, read_workload

PROVISIONING_CONTROLLER = "kueue.x-k8s.io/provisioning-request"
_PREEMPTIONS = {  # Workload condition Preempted reasons
    "InClusterQueue": "to admit a higher-priority workload of the same cluster queue",
    "InCohortReclamation": "because another queue of its cohort reclaimed the quota it borrowed",
    "InCohortFairSharing": "to keep fair sharing in its cohort",
    "InCohortReclaimWhileBorrowing": "for a higher-priority workload borrowing in its cohort",
}


def deactivated(objs: RunObjects, pod_hint: str, evidence: tuple[Evidence, ...]) -> Finding | None:
    """The finding for a Workload Kueue (or a person) deactivated: it will not run again."""
    workload = read_workload(objs.workload)
    stopped = workload.deactivation
    if stopped is None:
        return None
    reason = stopped[0]
    cause = reason.removeprefix(wl.DEACTIVATED_DUE_TO)
    if cause == wl.REQUEUING_LIMIT_EXCEEDED:
        why = (
            f"Kueue evicted it {workload.timeouts + 1} times because its pods were not all ready "
            "within the PodsReady timeout, and stopped requeuing it (RequeuingLimitExceeded)"
            f"{pod_hint}"
        )
        act = "Find why the pods did not start (the pod events), then resubmit"
    elif cause == wl.ADMISSION_CHECK:
        check, message = _last_check_message(objs)
        requests = _provisioning_names(objs)
        named = f" (ProvisioningRequest {requests[-1]})" if requests else ""
        why = f"admission check {check} was rejected{named}: {message}; Kueue will not retry it"
        act = "Resubmit later or with a RetryPolicy, or use other capacity (Spot, another zone)"
    elif cause == wl.MAXIMUM_EXECUTION_TIME_EXCEEDED:
        why = "it ran longer than its max_runtime (MaximumExecutionTimeExceeded)"
        act = "Raise max_runtime, or checkpoint and resubmit"
    else:
        why = f"spec.active was set to false ({reason})"
        act = "Set spec.active back to true on the Workload, or resubmit"
    return Finding(Category.DEACTIVATED, f"Deactivated: {why}. {act}.", evidence)


def evicted(objs: RunObjects, pod_hint: str, evidence: tuple[Evidence, ...]) -> Finding | None:
    """The finding for a Workload Kueue evicted and will requeue by itself."""
    workload = read_workload(objs.workload)
    if not workload.evicted.true:
        return None
    reason, message = workload.evicted.reason, workload.evicted.message
    how = workload.preemption
    if how is not None:
        by = f" by {objs.preemptor.describe()}" if objs.preemptor is not None else ""
        return Finding(
            Category.PREEMPTED,
            f"Preempted{by}: Kueue evicted it {_PREEMPTIONS.get(how, 'to admit another workload')}"
            f"{f' ({how})' if how else ''}; it is requeued and restarts from its last checkpoint "
            "once quota frees. Raise its priority to keep it running.",
            evidence,
        )
    when = f" at {workload.requeue_at}" if workload.requeue_at else ""
    if reason == wl.PODS_READY_TIMEOUT:
        return Finding(
            Category.PLACEMENT,
            f"Evicted: its pods were not all ready within Kueue's PodsReady timeout (eviction "
            f"{workload.requeue_count or 1}){pod_hint}; Kueue requeues it after a "
            f"backoff{when}. If the pods cannot start, fix that; else wait.",
            evidence,
        )
    if reason == wl.ADMISSION_CHECK:
        check, text = _last_check_message(objs)
        provisioning = _is_provisioning(objs, check)
        return Finding(
            Category.CAPACITY_PROVISIONING if provisioning else Category.ADMISSION_CHECK,
            f"Waiting for capacity again: admission check {check} asked to retry "
            f"({text or message}); Kueue released its quota and retries after a backoff{when}. "
            "Wait, or cancel and use other capacity.",
            evidence,
        )
    return Finding(
        Category.QUOTA if reason.endswith("Stopped") else Category.UNKNOWN,
        f"Evicted by Kueue ({reason}: {message}); Kueue requeues it by itself{when}.",
        evidence,
    )


def checks_pending(objs: RunObjects, evidence: tuple[Evidence, ...]) -> Finding:
    """The finding for a Workload holding quota while its admission checks are not Ready."""
    workload = read_workload(objs.workload)
    admitted, cq = workload.admitted, workload.cluster_queue
    if admitted.reason == wl.PENDING_DELAYED_TOPOLOGY:
        return Finding(
            Category.PLACEMENT,
            f"Quota reserved in {cq}; Kueue is still choosing the topology domain for its pods "
            f"({admitted.message}). Wait.",
            evidence,
        )
    if not workload.waiting_checks:
        return Finding(
            Category.STARTING, f"Quota reserved in {cq}; Kueue is admitting it.", evidence
        )
    check = workload.waiting_checks[0]
    name, state, message = check.name, check.state or "?", check.message
    if _is_provisioning(objs, name):
        requests = _provisioning_names(objs)
        named = f" (ProvisioningRequest {requests[-1]})" if requests else ""
        return Finding(
            Category.CAPACITY_PROVISIONING,
            f"Waiting for capacity: quota reserved in {cq}; admission check {name}{named} is "
            f"{state}{f': {message}' if message else ''}. The cluster autoscaler provisions "
            "all its nodes at once; wait, or cancel and use other capacity.",
            evidence,
        )
    return Finding(
        Category.ADMISSION_CHECK,
        f"Quota reserved in {cq}; admission check {name} is {state}"
        f"{f': {message}' if message else ''}. Kueue admits it once every check is Ready.",
        evidence,
    )


def _is_provisioning(objs: RunObjects, check: str) -> bool:
    known = (objs.queues.admission_checks if objs.queues else {}).get(check)
    if known is not None:
        return (known.get("spec") or {}).get("controllerName") == PROVISIONING_CONTROLLER
    return bool(_provisioning_names(objs))


def _provisioning_names(objs: RunObjects) -> list[str]:
    names = [name_of(p) for p in objs.provisioning_requests]
    for event in objs.events:
        if event.get("reason") == "ProvisioningRequestCreated":
            text = str(event.get("message") or "")
            names.append(text.split('"')[1] if text.count('"') >= 2 else text)
    return list(dict.fromkeys(n for n in names if n))


def _last_check_message(objs: RunObjects) -> tuple[str, str]:
    """(check, message) of the latest check decision: the live one is reset to Pending on
    eviction, so Kueue's AdmissionCheckUpdated events keep what it said."""
    for event in reversed(objs.events):
        text = str(event.get("message") or "")
        if event.get("reason") == "AdmissionCheckUpdated" and len(text.split()) > 2:
            return text.split()[2], text.rsplit("message: ", 1)[-1]
    checks = read_workload(objs.workload).checks or (Check(),)
    return checks[0].name, checks[0].message
