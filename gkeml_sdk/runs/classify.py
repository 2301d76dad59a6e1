"""Classify one snapshot of a job, its Kueue Workload and its pods into a run state (pure)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from gkeml_sdk.core.objects import ObjView, condition, is_true
from gkeml_sdk.runs import workload as wl
from gkeml_sdk.runs.conditions import (
    admitted_status,
    deactivation,
    evicted_status,
    failure_cause,
    waiting_for_checks,
)
from gkeml_sdk.runs.handle import FailureCause, RunState, RunStatus
from gkeml_sdk.runs.workload import WorkloadView, read_workload

# Deactivations that are a loss of capacity, not a decision about the job: resubmitting may help.
_INFRA_DEACTIVATIONS = tuple(
    wl.DEACTIVATED_DUE_TO + cause for cause in (wl.REQUEUING_LIMIT_EXCEEDED, wl.ADMISSION_CHECK)
)


def classify(
    job: ObjView | None,
    workload: ObjView | None,
    pods: Iterable[ObjView],
    *,
    job_deleted: bool = False,
) -> RunStatus:
    """Classify one snapshot of a job, its Kueue Workload and its pods, in the order of the
    Workload's conditions (https://kueue.sigs.k8s.io/docs/concepts/workload/).

    Evictions Kueue requeues by itself (PodsReadyTimeout, AdmissionCheck retry, NodeFailures,
    *Stopped) are QUEUED with the eviction reason; PREEMPTED is only Kueue preemption. Both
    last until re-admission (Kueue keeps Evicted=True while the Workload waits in the queue).

    Example:
        >>> wl = {"status": {"conditions": [{"type": "QuotaReserved", "status": "False",
        ...     "reason": "ExceedsMaxQuota", "message": "insufficient quota"}]}}
        >>> str(classify({"kind": "JobSet"}, wl, []))
        'Queued: ExceedsMaxQuota: insufficient quota'
    """
    pods = list(pods)
    view = read_workload(workload)
    done = _terminal(job, view, pods, job_deleted)
    if done is not None:
        return done
    if workload is None:
        return RunStatus(RunState.PENDING, message="waiting for Kueue to create the Workload")
    stopped = deactivation(view)
    if stopped is not None:
        return RunStatus(RunState.FAILED, stopped[0], stopped[1], FailureCause.DEACTIVATED)
    if view.evicted.true:
        return evicted_status(view)
    if view.admitted.true:
        return admitted_status(job, workload, pods)
    if view.quota_reserved.true:
        return RunStatus(RunState.WAITING_FOR_CAPACITY, *waiting_for_checks(view))
    reserved = view.quota_reserved
    message = reserved.message if reserved.seen else "Kueue has not evaluated the Workload yet"
    return RunStatus(RunState.QUEUED, reserved.reason, message)


def _terminal(
    job: ObjView | None, workload: WorkloadView, pods: list[ObjView], job_deleted: bool
) -> RunStatus | None:
    finished = workload.finished if workload.finished.true else None
    finished_reason = finished.reason if finished is not None else ""
    # The job's own condition lands a few ms before Kueue copies it into Workload Finished.
    for done in (condition(job, "Completed"), condition(job, "Complete")):  # JobSet, Job
        if done is not None and done.get("status") == "True":
            return RunStatus(RunState.SUCCEEDED, done.get("reason", ""), done.get("message", ""))
    if finished is not None and finished_reason == wl.SUCCEEDED:
        return RunStatus(RunState.SUCCEEDED, wl.SUCCEEDED, finished.message)
    failed = condition(job, "Failed") if is_true(job, "Failed") else None
    if failed is not None:
        return _failed(failed.get("reason", ""), failed.get("message", ""), pods, job)
    if finished is not None and finished_reason == wl.FAILED:
        return _failed(finished_reason, finished.message, pods, job)
    if job_deleted or ((job or {}).get("metadata") or {}).get("deletionTimestamp"):
        return RunStatus(RunState.CANCELLED, "Deleted", "the job was deleted")
    if finished is None:
        return None
    if finished_reason == wl.OWNER_NOT_FOUND:
        return RunStatus(RunState.CANCELLED, finished_reason, finished.message)
    # FailedToStart / OutOfSync: Kueue gave up on the job for reasons outside it.
    return RunStatus(RunState.FAILED, finished_reason, finished.message, FailureCause.UNKNOWN)


def _failed(reason: str, message: str, pods: list[ObjView], job: ObjView | None) -> RunStatus:
    cause, detail = failure_cause(reason, pods, job)
    return RunStatus(RunState.FAILED, reason, "; ".join(p for p in (message, detail) if p), cause)


def queue_position(
    pending_workloads: Mapping[str, Any], workload_name: str
) -> tuple[int, int] | None:
    """(positionInLocalQueue, positionInClusterQueue) from a visibility-API pendingworkloads answer.

    Example:
        >>> answer = {"items": [{"metadata": {"name": "jobset-a-1"},
        ...     "positionInLocalQueue": 0, "positionInClusterQueue": 3}]}
        >>> queue_position(answer, "jobset-a-1")
        (0, 3)
    """
    for item in pending_workloads.get("items") or []:
        if (item.get("metadata") or {}).get("name") == workload_name:
            local, cluster = item.get("positionInLocalQueue"), item.get("positionInClusterQueue")
            return int(local or 0), int(cluster or 0)
    return None


def resubmittable(status: RunStatus) -> bool:
    """Whether a terminal status is an infrastructure loss a client-side resubmission may fix.

    Example:
        >>> resubmittable(RunStatus(RunState.FAILED, "DeactivatedDueToAdmissionCheck",
        ...                         cause=FailureCause.DEACTIVATED))
        True
    """
    if status.state is not RunState.FAILED:
        return False
    if status.cause is FailureCause.INFRASTRUCTURE:
        return True
    return status.cause is FailureCause.DEACTIVATED and status.reason in _INFRA_DEACTIVATIONS
