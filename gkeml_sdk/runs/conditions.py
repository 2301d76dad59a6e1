"""Pure readers and per-condition classifiers of Job/JobSet, Workload and Pod dicts."""

from __future__ import annotations

from collections.abc import Iterable

from gkeml_sdk.core.objects import ObjView, condition, labels
from gkeml_sdk.core.objects import name as _name
from gkeml_sdk.runs import workload as wl
from gkeml_sdk.runs.handle import FailureCause, RunState, RunStatus
from gkeml_sdk.runs.pods import disruption, exit_summary, stuck_container, summarize_pods
from gkeml_sdk.runs.workload import WorkloadView, read_workload
from gkeml_sdk.scheduling.kueue import JOB_UID_LABEL


def workload_belongs(workload: ObjView, job_name: str, job_uid: str, job_kind: str | None) -> bool:
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


def expected_pods(workload: ObjView | None) -> int:
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


def failure_cause(
    reason: str, pods: Iterable[ObjView], job: ObjView | None
) -> tuple[FailureCause, str]:
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


def deactivation(workload: WorkloadView) -> tuple[str, str] | None:
    """(reason, message) when Kueue (or a user) deactivated the Workload, else None.

    Example:
        >>> deactivation(read_workload({"spec": {"active": False}}))
        ('Deactivated', 'spec.active is false')
    """
    stopped = workload.deactivation
    if stopped is not None:
        return stopped
    rejected = workload.rejected_check
    if rejected is not None:  # Kueue deactivates on a rejected check
        return wl.DEACTIVATED_DUE_TO + wl.ADMISSION_CHECK, f"{rejected.name}: {rejected.message}"
    return None


def waiting_for_checks(workload: WorkloadView) -> tuple[str, str]:
    """(reason, message) for a Workload with quota reserved but not admitted yet.

    Example:
        >>> waiting_for_checks(read_workload({"status": {"admissionChecks": [
        ...     {"name": "dws", "state": "Pending", "message": "ETA 5m"}]}}))
        ('AdmissionChecksPending', 'dws: Pending (ETA 5m)')
    """
    checks, waiting = workload.checks, workload.waiting_checks
    message = "; ".join(
        f"{c.name}: {c.state}" + (f" ({c.message})" if c.message else "") for c in waiting or checks
    )
    admitted = workload.admitted
    if any(c.state == wl.CHECK_RETRY for c in waiting):
        return "AdmissionCheckRetry", message
    if admitted.reason == wl.PENDING_DELAYED_TOPOLOGY:
        return wl.PENDING_DELAYED_TOPOLOGY, admitted.message
    if checks and not waiting:  # capacity provisioned; Kueue admits within moments
        return "AdmissionChecksReady", message
    return "AdmissionChecksPending", message or "quota reserved; waiting for admission checks"


def evicted_status(workload: WorkloadView) -> RunStatus:
    """Status of a Workload with `Evicted=True` that is not deactivated (Kueue will requeue it).

    Example:
        >>> str(evicted_status(read_workload({"status": {"conditions": [{"type": "Evicted",
        ...     "status": "True", "reason": "PodsReadyTimeout", "message": "timeout"}]}})))
        'Queued: PodsReadyTimeout: timeout'
    """
    reason, message = workload.evicted.reason, workload.evicted.message
    how = workload.preemption
    if how is not None:
        return RunStatus(
            RunState.PREEMPTED, wl.BY_PREEMPTION, f"{how}: {message}" if how else message
        )
    requeued = workload.requeued
    extra = []
    if requeued.seen:
        verb = "requeued" if requeued.true else "waiting to requeue"
        extra.append(f"{verb} ({requeued.reason})")
    if workload.requeue_count:
        extra.append(f"requeue #{workload.requeue_count}")
    if workload.requeue_at:
        extra.append(f"at {workload.requeue_at}")
    return RunStatus(RunState.QUEUED, reason, "; ".join([message, " ".join(extra)]).strip("; "))


def admitted_status(job: ObjView | None, workload: ObjView, pods: list[ObjView]) -> RunStatus:
    """Status of an admitted Workload, from its pods and the JobSet's restart condition.

    Example:
        >>> admitted_status(None, {"spec": {"podSets": [{"count": 2}]}}, []).state
        <RunState.STARTING: 'Starting'>
    """
    expected = expected_pods(workload)
    pods_now = summarize_pods(pods, job)
    all_up = pods_now.up >= expected if expected else 0 < pods_now.seen == pods_now.up
    if not pods and read_workload(workload).pods_ready.true:
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
