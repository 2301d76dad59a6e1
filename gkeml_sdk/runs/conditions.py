"""Pure readers and per-condition classifiers of Job/JobSet, Workload and Pod dicts."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from gkeml_sdk.core.objects import condition, is_true, labels
from gkeml_sdk.core.objects import name as _name
from gkeml_sdk.runs.handle import FailureCause, RunState, RunStatus
from gkeml_sdk.runs.pods import disruption, exit_summary, stuck_container, summarize_pods
from gkeml_sdk.scheduling.kueue import (
    JOB_UID_LABEL,
)

Obj = Mapping[str, Any]


def workload_belongs(workload: Obj, job_name: str, job_uid: str, job_kind: str | None) -> bool:
    """Whether a Kueue Workload belongs to the job (job-uid label, else ownerReferences).

    Example:
        >>> wl = {"metadata": {"labels": {JOB_UID_LABEL: "u1"}}}
        >>> workload_belongs(wl, "train", "u1", "JobSet")
        True
    """
    if job_uid and labels(workload).get(JOB_UID_LABEL) == job_uid:
        return True
    for ref in (workload.get("metadata") or {}).get("ownerReferences") or []:
        if job_uid and ref.get("uid") == job_uid:
            return True
        # Before the job itself was observed its uid is unknown: fall back to kind + name.
        if not job_uid and ref.get("name") == job_name and job_kind in (ref.get("kind"), None):
            return True
    return False


def eviction_counts(workload: Obj | None) -> dict[str, int]:
    """Cumulative evictions per reason from `status.schedulingStats.evictions[]`.

    Example:
        >>> eviction_counts({"status": {"schedulingStats": {"evictions": [
        ...     {"reason": "Preempted", "underlyingCause": "", "count": 2}]}}})
        {'Preempted': 2}
    """
    counts: dict[str, int] = {}
    stats = ((workload or {}).get("status") or {}).get("schedulingStats") or {}
    for entry in stats.get("evictions") or []:
        reason = str(entry.get("reason") or "")
        counts[reason] = counts.get(reason, 0) + int(entry.get("count") or 0)
    return counts


def expected_pods(workload: Obj | None) -> int:
    """Pods the admitted workload runs: admission counts, else the sum of `spec.podSets[].count`.

    Example:
        >>> expected_pods({"spec": {"podSets": [{"name": "node", "count": 2}]}})
        2
    """
    if not workload:
        return 0
    status = workload.get("status") or {}
    # Partial admission can admit fewer pods than requested; the admission is what runs.
    assigned = (status.get("admission") or {}).get("podSetAssignments") or []
    if assigned and all("count" in a for a in assigned):
        return sum(int(a["count"]) for a in assigned)
    return sum(int(ps.get("count", 1)) for ps in (workload.get("spec") or {}).get("podSets") or [])


_JOBSET_FAILURES = ("ReachedMaxRestarts", "FailJobSetFailurePolicyAction", "FailedJobs")
_JOB_FAILURES = ("PodFailurePolicy", "BackoffLimitExceeded", "DeadlineExceeded", "FailedIndexes")
_USER_FAILURE_REASONS = frozenset((*_JOBSET_FAILURES, *_JOB_FAILURES, "MaxFailedIndexesExceeded"))


def failure_cause(reason: str, pods: Iterable[Obj], job: Obj | None) -> tuple[FailureCause, str]:
    """Cause of a job failure and a detail line, judged from the failed pods first.

    Example:
        >>> failure_cause("ReachedMaxRestarts", [], None)[0]
        <FailureCause.USER_CODE: 'UserCode'>
    """
    pods_now = summarize_pods(pods, job)
    if pods_now.user_failed:
        pod = pods_now.user_failed[0]
        return FailureCause.USER_CODE, f"pod {_name(pod)}: {exit_summary(pod) or 'failed'}"
    if pods_now.disrupted:
        pod = pods_now.disrupted[0]
        why = (disruption(pod) or {}).get("reason", "DisruptionTarget")
        return FailureCause.INFRASTRUCTURE, f"pod {_name(pod)} disrupted ({why})"
    if reason in _USER_FAILURE_REASONS:
        return FailureCause.USER_CODE, ""
    return FailureCause.UNKNOWN, ""


def deactivation(workload: Obj) -> tuple[str, str] | None:
    """(reason, message) when Kueue (or a user) deactivated the Workload, else None.

    Example:
        >>> deactivation({"spec": {"active": False}})
        ('Deactivated', 'spec.active is false')
    """
    evicted = condition(workload, "Evicted")
    reason = str((evicted or {}).get("reason", ""))
    if is_true(workload, "Evicted") and reason.startswith("Deactivated"):
        return reason, (evicted or {}).get("message", "")
    target = condition(workload, "DeactivationTarget")
    # DeactivationTarget precedes spec.active=false by a few ms; same outcome, same reason.
    if target is not None and target.get("status") == "True":
        return f"DeactivatedDueTo{target.get('reason', '')}", target.get("message", "")
    if (workload.get("spec") or {}).get("active") is False:
        return "Deactivated", "spec.active is false"
    for check in (workload.get("status") or {}).get("admissionChecks") or []:
        if check.get("state") == "Rejected":  # Kueue deactivates on a rejected check
            return "DeactivatedDueToAdmissionCheck", f"{check.get('name')}: {check.get('message')}"
    return None


def waiting_for_checks(workload: Obj) -> tuple[str, str]:
    """(reason, message) for a Workload with quota reserved but not admitted yet.

    Example:
        >>> waiting_for_checks({"status": {"admissionChecks": [
        ...     {"name": "dws", "state": "Pending", "message": "ETA 5m"}]}})
        ('AdmissionChecksPending', 'dws: Pending (ETA 5m)')
    """
    checks = (workload.get("status") or {}).get("admissionChecks") or []
    waiting = [c for c in checks if c.get("state") != "Ready"]
    message = "; ".join(
        f"{c.get('name')}: {c.get('state')}" + (f" ({c['message']})" if c.get("message") else "")
        for c in waiting or checks
    )
    admitted = condition(workload, "Admitted") or {}
    if any(c.get("state") == "Retry" for c in waiting):
        return "AdmissionCheckRetry", message
    if admitted.get("reason") == "PendingDelayedTopologyRequests":
        return "PendingDelayedTopologyRequests", admitted.get("message", "")
    if checks and not waiting:  # capacity provisioned; Kueue admits within moments
        return "AdmissionChecksReady", message
    return "AdmissionChecksPending", message or "quota reserved; waiting for admission checks"


def evicted_status(workload: Obj, evicted: Obj) -> RunStatus:
    """Status of a Workload with `Evicted=True` that is not deactivated (Kueue will requeue it).

    Example:
        >>> str(evicted_status({}, {"reason": "PodsReadyTimeout", "message": "timeout"}))
        'Queued: PodsReadyTimeout: timeout'
    """
    reason = evicted.get("reason", "")
    message = evicted.get("message", "")
    if reason == "Preempted" or is_true(workload, "Preempted"):
        how = (condition(workload, "Preempted") or {}).get("reason")
        return RunStatus(RunState.PREEMPTED, "Preempted", f"{how}: {message}" if how else message)
    requeued = condition(workload, "Requeued")
    state = (workload.get("status") or {}).get("requeueState") or {}
    extra = []
    if requeued is not None:
        verb = "requeued" if requeued.get("status") == "True" else "waiting to requeue"
        extra.append(f"{verb} ({requeued.get('reason', '')})")
    if state.get("count"):
        extra.append(f"requeue #{state['count']}")
    if state.get("requeueAt"):
        extra.append(f"at {state['requeueAt']}")
    return RunStatus(RunState.QUEUED, reason, "; ".join([message, " ".join(extra)]).strip("; "))


def admitted_status(job: Obj | None, workload: Obj, pods: list[Obj]) -> RunStatus:
    """Status of an admitted Workload, from its pods and the JobSet's restart condition.

    Example:
        >>> admitted_status(None, {"spec": {"podSets": [{"count": 2}]}}, []).state
        <RunState.STARTING: 'Starting'>
    """
    expected = expected_pods(workload)
    pods_now = summarize_pods(pods, job)
    all_up = pods_now.up >= expected if expected else 0 < pods_now.seen == pods_now.up
    if not pods and is_true(workload, "PodsReady"):
        all_up = True  # the caller does not watch pods; trust Kueue's PodsReady
    progress = f"{pods_now.up}/{expected or pods_now.seen} pods ready"
    if pods_now.disrupted and not all_up:
        pod = pods_now.disrupted[0]
        cond = disruption(pod) or {}
        why = f"pod {_name(pod)} disrupted: {cond.get('message', '')}; {progress}"
        return RunStatus(RunState.RESTARTING, cond.get("reason") or "DisruptionTarget", why)
    if pods_now.user_failed and not all_up:
        # The Job/JobSet controller has not decided yet between a retry and a failure.
        pod = pods_now.user_failed[0]
        return RunStatus(RunState.RUNNING, "PodFailed", f"pod {_name(pod)}: {exit_summary(pod)}")
    restarting = condition(job, "RestartingJobSet")
    if restarting is not None and restarting.get("status") == "True" and not all_up:
        return RunStatus(RunState.RESTARTING, restarting.get("reason", ""), progress)
    if all_up:
        return RunStatus(RunState.RUNNING, "PodsReady", progress)
    stuck = stuck_container(pods)
    if stuck is not None:
        # A missing Secret or an unpullable image keeps the pod Pending with no end.
        pod, reason, message = stuck
        return RunStatus(RunState.STARTING, reason, f"pod {_name(pod)}: {message}; {progress}")
    return RunStatus(RunState.STARTING, "Admitted", progress)
