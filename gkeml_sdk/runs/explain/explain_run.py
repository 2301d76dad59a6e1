"""`explain_run`: one run's objects in, one `Explanation` out, trying causes in the order
that decides what the user must do first."""

from __future__ import annotations

from gkeml_sdk.core.objects import ObjView, condition, is_true
from gkeml_sdk.runs import workload as wl
from gkeml_sdk.runs.explain.explanation import Category, Evidence, Explanation
from gkeml_sdk.runs.explain.inputs import RunObjects
from gkeml_sdk.runs.explain.kueue_outcome import checks_pending, deactivated, evicted
from gkeml_sdk.runs.explain.pod_reasons import Finding, diagnose_pods
from gkeml_sdk.runs.explain.queued import why_queued
from gkeml_sdk.runs.explain.reading import (
    condition_evidence,
    event_evidence,
    events_about,
    name_of,
)
from gkeml_sdk.runs.workload import Check, read_workload


def explain_run(objs: RunObjects) -> Explanation:
    """Why the run is where it is, from its job, Workload, pods, events and queues.

    Never raises for a state it does not know: it says what it saw.

    Example:
        >>> wl = {"kind": "Workload", "metadata": {"name": "jobset-t-1"}, "spec": {"queueName":
        ...     "q"}, "status": {"conditions": [{"type": "QuotaReserved", "status": "False",
        ...     "reason": "Misconfigured", "message": "LocalQueue q doesn't exist"}]}}
        >>> explain_run(RunObjects("JobSet", "t", workload=wl)).category
        <Category.USER_ERROR: 'user error'>
    """
    evidence: tuple[Evidence, ...] = ()
    try:
        evidence = _evidence(objs)
        found = _find(objs, evidence)
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
        found = Finding(  # an object shaped unlike any we know: say what we saw
            Category.UNKNOWN,
            f"Could not interpret the objects of {objs.kind} {objs.name} ({type(exc).__name__}: "
            f"{exc}); the evidence below is what the cluster says.",
            evidence,
        )
    return Explanation(found.category, found.sentence, found.evidence)


def _find(objs: RunObjects, evidence: tuple[Evidence, ...]) -> Finding:
    job, workload = objs.job, read_workload(objs.workload)
    what = f"{objs.kind} {objs.name}"
    done = _terminal(objs, evidence)
    if done is not None:
        return done
    pods = diagnose_pods(objs.pods, objs.events, objs.name)
    hint = f"; {pods.sentence[0].lower()}{pods.sentence[1:].split('. ')[0]}" if pods else ""
    if objs.workload is None:
        if job is None:
            return Finding(Category.UNKNOWN, f"{what} is not in the cluster (yet).", evidence)
        return Finding(
            Category.UNKNOWN,
            f"Waiting for Kueue: it has not created a Workload for {what} yet. If this lasts, "
            "check that Kueue runs and manages this namespace and job kind.",
            evidence,
        )
    for step in (deactivated, evicted):
        found = step(objs, hint, evidence)
        if found is not None:
            return found
    if workload.admitted.true:
        if pods is not None:
            return Finding(pods.category, pods.sentence, _merge(evidence, pods.evidence))
        return _admitted(objs, evidence)
    if workload.quota_reserved.true:
        return checks_pending(objs, evidence)
    return why_queued(objs.workload, objs.queues, evidence)


def _terminal(objs: RunObjects, evidence: tuple[Evidence, ...]) -> Finding | None:
    job, workload = objs.job, read_workload(objs.workload)
    what = f"{objs.kind} {objs.name}"
    finished = workload.finished if workload.finished.true else None
    for ctype in ("Completed", "Complete"):
        if is_true(job, ctype):
            cond = condition(job, ctype) or {}
            return Finding(
                Category.SUCCEEDED,
                f"Succeeded: {what} completed ({cond.get('reason', '')}) at "
                f"{cond.get('lastTransitionTime', '?')}; nothing is pending.",
                evidence,
            )
    if finished is not None and finished.reason == wl.SUCCEEDED:
        return Finding(
            Category.SUCCEEDED, f"Succeeded: {what} finished; nothing is pending.", evidence
        )
    job_failed = condition(job, "Failed") if is_true(job, "Failed") else None
    failed: tuple[str, str] | None = None
    if job_failed is not None:
        failed = (job_failed.get("reason", ""), job_failed.get("message", ""))
    elif finished is not None and finished.reason == wl.FAILED:
        failed = (finished.reason, finished.message)
    if failed is not None:
        pods = diagnose_pods(objs.pods, objs.events, objs.name)
        code = _exit(objs.pods)
        if pods is not None and pods.category is Category.CRASH:
            return Finding(
                Category.CRASH, f"Failed: {pods.sentence}", _merge(evidence, pods.evidence)
            )
        return Finding(
            Category.CRASH,
            f"Failed: {what} failed ({failed[0]}: {failed[1]})"
            f"{code}. Read the logs (run.logs()), fix the code, and resubmit.",
            evidence,
        )
    meta = (job or {}).get("metadata") or {}
    gone = finished is not None and finished.reason == wl.OWNER_NOT_FOUND
    if objs.job_deleted or meta.get("deletionTimestamp") or gone:
        return Finding(
            Category.CANCELLED,
            f"Cancelled: {what} was deleted, so Kueue finished its Workload; resubmit to run it "
            "again.",
            evidence,
        )
    if finished is not None:
        return Finding(
            Category.UNKNOWN,
            f"Finished without success: Kueue says {finished.reason}: {finished.message}.",
            evidence,
        )
    return None


def _admitted(objs: RunObjects, evidence: tuple[Evidence, ...]) -> Finding:
    pods = [p for p in objs.pods if not (p.get("metadata") or {}).get("deletionTimestamp")]
    for pod in pods:
        cond = condition(pod, "DisruptionTarget")
        if cond is not None and cond.get("status") == "True":
            return Finding(
                Category.PREEMPTED,
                f"Pod {name_of(pod)} was disrupted ({cond.get('reason', '')}: "
                f"{cond.get('message', '')}); the Job replaces it without spending "
                "max_restarts. Nothing to do; checkpoints keep the work.",
                evidence,
            )
    ready = sum(
        1
        for p in pods
        if is_true(p, "Ready") or (p.get("status") or {}).get("phase") == "Succeeded"
    )
    spec = (objs.workload or {}).get("spec") or {}
    expected = sum(int(s.get("count", 1)) for s in spec.get("podSets") or [])
    workload = read_workload(objs.workload)
    cq = workload.cluster_queue or "?"
    if workload.pods_ready.true or (expected and ready >= expected):
        return Finding(
            Category.RUNNING,
            f"Running: admitted by cluster queue {cq} and all {expected or ready} pods are ready.",
            evidence,
        )
    return Finding(
        Category.STARTING,
        f"Starting: admitted by cluster queue {cq}; {ready} of {expected or len(pods)} pods "
        "ready. Wait; a pod that cannot start shows its cause here.",
        evidence,
    )


def _exit(pods: tuple[ObjView, ...]) -> str:
    for pod in pods:
        for cs in (pod.get("status") or {}).get("containerStatuses") or []:
            ended = (cs.get("state") or {}).get("terminated") or {}
            if ended.get("exitCode"):
                return f"; pod {name_of(pod)} exited with code {ended['exitCode']}"
    return ""


def _evidence(objs: RunObjects) -> tuple[Evidence, ...]:
    found: list[Evidence] = []
    if objs.job is not None:
        found += condition_evidence(objs.job, "Completed", "Complete", "Failed", "Suspended")
    if objs.workload is not None:
        found += condition_evidence(objs.workload, *wl.CONDITIONS)
        for check in read_workload(objs.workload).checks:
            found.append(_check_evidence(objs.workload, check))
    for request in objs.provisioning_requests:
        found += condition_evidence(
            request, "Provisioned", "Failed", "CapacityRevoked", "BookingExpired"
        )
    about = [(objs.kind, objs.name)]
    if objs.workload is not None:
        about.append(("Workload", name_of(objs.workload)))
    about += [("Pod", name_of(p)) for p in objs.pods]
    about += [("ProvisioningRequest", name_of(p)) for p in objs.provisioning_requests]
    found += [event_evidence(e) for e in events_about(objs.events, about)]
    return tuple(found)


def _check_evidence(workload: ObjView, check: Check) -> Evidence:
    return Evidence(
        "Workload",
        name_of(workload),
        f"admission check {check.name}",
        check.state,
        check.message,
        check.since,
    )


def _merge(*groups: tuple[Evidence, ...]) -> tuple[Evidence, ...]:
    return tuple(dict.fromkeys(e for group in groups for e in group))
