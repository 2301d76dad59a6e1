"""Turn observed Job/JobSet, Kueue Workload and Pod objects into a run state (pure, no I/O)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from gkeml_sdk.catalog.kueue import JOBSET_NAME_LABEL
from gkeml_sdk.cluster.runs.conditions import (
    Obj,
    admitted_status,
    condition,
    deactivation,
    disruption,
    evicted_status,
    eviction_counts,
    failure_cause,
    is_true,
    labels,
    pod_belongs,
    uid,
    waiting_for_checks,
    workload_belongs,
)
from gkeml_sdk.run import FailureCause, RunCounters, RunState, RunStatus, Transition

__all__ = ["StatusTracker", "classify", "queue_position", "resubmittable"]

# Deactivations that are a loss of capacity, not a decision about the job: resubmitting may help.
_INFRA_DEACTIVATIONS = ("DeactivatedDueToRequeuingLimitExceeded", "DeactivatedDueToAdmissionCheck")


def classify(
    job: Obj | None, workload: Obj | None, pods: Iterable[Obj], *, job_deleted: bool = False
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
    done = _terminal(job, workload, pods, job_deleted)
    if done is not None:
        return done
    if workload is None:
        return RunStatus(RunState.PENDING, message="waiting for Kueue to create the Workload")
    stopped = deactivation(workload)
    if stopped is not None:
        return RunStatus(RunState.FAILED, stopped[0], stopped[1], FailureCause.DEACTIVATED)
    evicted = condition(workload, "Evicted")
    if evicted is not None and evicted.get("status") == "True":
        return evicted_status(workload, evicted)
    if is_true(workload, "Admitted"):
        return admitted_status(job, workload, pods)
    if is_true(workload, "QuotaReserved"):
        return RunStatus(RunState.WAITING_FOR_CAPACITY, *waiting_for_checks(workload))
    reserved = condition(workload, "QuotaReserved") or {}
    message = reserved.get("message", "Kueue has not evaluated the Workload yet")
    return RunStatus(RunState.QUEUED, reserved.get("reason", ""), message)


def _terminal(
    job: Obj | None, workload: Obj | None, pods: list[Obj], job_deleted: bool
) -> RunStatus | None:
    finished = condition(workload, "Finished") if is_true(workload, "Finished") else None
    finished_reason = (finished or {}).get("reason", "")
    # The job's own condition lands a few ms before Kueue copies it into Workload Finished.
    for done in (condition(job, "Completed"), condition(job, "Complete")):  # JobSet, Job
        if done is not None and done.get("status") == "True":
            return RunStatus(RunState.SUCCEEDED, done.get("reason", ""), done.get("message", ""))
    if finished is not None and finished_reason == "Succeeded":
        return RunStatus(RunState.SUCCEEDED, "Succeeded", finished.get("message", ""))
    failed = condition(job, "Failed") if is_true(job, "Failed") else None
    source = failed or (finished if finished_reason == "Failed" else None)
    if source is not None:
        cause, detail = failure_cause(source.get("reason", ""), pods, job)
        message = "; ".join(p for p in (source.get("message", ""), detail) if p)
        return RunStatus(RunState.FAILED, source.get("reason", ""), message, cause)
    if job_deleted or ((job or {}).get("metadata") or {}).get("deletionTimestamp"):
        return RunStatus(RunState.CANCELLED, "Deleted", "the job was deleted")
    if finished is None:
        return None
    if finished_reason == "OwnerNotFound":
        return RunStatus(RunState.CANCELLED, finished_reason, finished.get("message", ""))
    # FailedToStart / OutOfSync: Kueue gave up on the job for reasons outside it.
    return RunStatus(
        RunState.FAILED, finished_reason, finished.get("message", ""), FailureCause.UNKNOWN
    )


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


class StatusTracker:
    """Fold the watch events of one job, in order, into a status, a history and counters.

    Without `job_name` the caller must pre-select the job's events; with it, the first
    JobSet/Job of that name (and `job_uid`, else the first uid seen) is the job; Workloads and
    Pods are matched to it by Kueue's job-uid label / ownerReferences and JobSet/Job labels.

    Example:
        >>> tracker = StatusTracker(attempt=1, job_name="train")
        >>> tracker.observe("JobSet", "ADDED", {"kind": "JobSet", "metadata": {"name": "train",
        ...     "uid": "u1"}}, at=0.0).state
        <RunState.PENDING: 'Pending'>
    """

    def __init__(
        self,
        attempt: int = 1,
        *,
        job_name: str | None = None,
        job_kind: str | None = None,
        job_uid: str | None = None,
    ) -> None:
        self.attempt = attempt
        self.history: list[Transition] = []
        self._name, self._kind, self._uid = job_name, job_kind, job_uid or ""
        self._job: Obj | None = None
        self._workload: Obj | None = None
        self._pods: dict[str, Obj] = {}
        self._job_deleted = self._restarting = False
        self._status = RunStatus(RunState.PENDING, message="job not observed yet")
        self._stats: dict[tuple[str, str], int] = {}  # (workload uid, reason) -> Kueue's count
        self._episodes: dict[str, int] = {}  # evictions already in the history, per reason
        self._live_eviction = ""
        self._disrupted: set[str] = set()
        self._user_failed: set[str] = set()
        self._restarts = self._user_restarts = self._requeues = 0
        self._position: tuple[int, int] | None = None

    @property
    def status(self) -> RunStatus:
        """The current status; it never changes again once terminal."""
        return self._status

    @property
    def workload_name(self) -> str | None:
        """Name of the Workload Kueue created for the job, once observed."""
        name = ((self._workload or {}).get("metadata") or {}).get("name")
        return str(name) if name else None

    @property
    def counters(self) -> RunCounters:
        """Preemptions and other evictions (Kueue's cumulative counts), disruptions, restarts."""
        totals = self._eviction_totals()
        extra = {f"evictions.{r}": n for r, n in sorted(totals.items()) if r != "Preempted"}
        extra["requeues"] = self._requeues  # requeueState.count (PodsReadyTimeout backoff)
        return RunCounters(
            preemptions=max(totals.get("Preempted", 0), self._episodes.get("Preempted", 0)),
            disruptions=len(self._disrupted),
            user_restarts=self._user_restarts,
            resubmissions=self.attempt - 1,
            extra=extra,
        )

    def is_resubmittable(self) -> bool:
        """True when the run ended in an infrastructure loss worth a client-side resubmission."""
        return self._status.terminal and resubmittable(self._status)

    def observe(self, kind: str, event_type: str, obj: Obj, at: float) -> RunStatus:
        """Feed one watch event (ADDED/MODIFIED/DELETED) of a JobSet/Job/Workload/Pod."""
        if kind in ("JobSet", "Job") and self._is_job(kind, obj):
            self._job, self._kind = obj, kind
            self._job_deleted = self._job_deleted or event_type == "DELETED"
        elif kind == "Workload" and self._owns(kind, obj):
            self._workload = obj  # kept after DELETED: its last conditions still tell the end
        elif kind == "Pod" and self._owns(kind, obj):
            self._note_pod(obj, deleted=event_type == "DELETED")
        else:
            return self._status
        self._update(at)
        return self._status

    def observe_pending_workloads(self, answer: Mapping[str, Any]) -> RunStatus:
        """Feed a visibility-API pendingworkloads answer so QUEUED messages carry the position."""
        name = self.workload_name
        self._position = queue_position(answer, name) if name else None
        if self._status.state is RunState.QUEUED:
            base = classify(self._job, self._workload, self._pods.values())
            self._status = self._with_position(base)
        return self._status

    def _is_job(self, kind: str, obj: Obj) -> bool:
        if (self._kind is not None and kind != self._kind) or (
            kind == "Job" and JOBSET_NAME_LABEL in labels(obj)  # a JobSet's child Job
        ):
            return False
        name = (obj.get("metadata") or {}).get("name")
        self._name = self._name or name
        # A same-named job with another uid is a different attempt (resubmitted or recreated).
        if name != self._name or (self._uid and uid(obj) not in (self._uid, "")):
            return False
        self._uid = self._uid or uid(obj)
        return True

    def _owns(self, kind: str, obj: Obj) -> bool:
        if self._name is None:
            return True
        check = workload_belongs if kind == "Workload" else pod_belongs
        return check(obj, self._name, self._uid, self._kind)

    def _note_pod(self, pod: Obj, deleted: bool) -> None:
        key = uid(pod) or str((pod.get("metadata") or {}).get("name", ""))
        phase = (pod.get("status") or {}).get("phase")
        # An evicted pod can be deleted before it ever reports Failed: still a disruption.
        gone = phase == "Failed" or (deleted and phase != "Succeeded")
        if disruption(pod) is not None and gone:
            self._disrupted.add(key)
        elif phase == "Failed":
            self._user_failed.add(key)
        if deleted:
            self._pods.pop(key, None)
        else:
            self._pods[key] = pod

    def _eviction_totals(self) -> dict[str, int]:
        totals: dict[str, int] = {}
        for (_, reason), count in self._stats.items():
            totals[reason] = totals.get(reason, 0) + count
        return totals

    def _update(self, at: float) -> None:
        job_status = (self._job or {}).get("status") or {}
        if "restarts" in job_status:  # JobSet only
            restarts = int(job_status["restarts"] or 0)
            self._restarting = self._restarting or restarts > self._restarts
            self._restarts = max(self._restarts, restarts)
            counted = int(job_status.get("restartsCountTowardsMax", restarts) or 0)
            self._user_restarts = max(self._user_restarts, counted)
        requeue = ((self._workload or {}).get("status") or {}).get("requeueState") or {}
        self._requeues = max(self._requeues, int(requeue.get("count") or 0))
        for reason, count in eviction_counts(self._workload).items():
            key = (uid(self._workload), reason)
            self._stats[key] = max(self._stats.get(key, 0), count)
        if self._status.terminal:
            return
        new = classify(
            self._job, self._workload, self._pods.values(), job_deleted=self._job_deleted
        )
        new = self._with_position(self._adjust(new))
        self._infer_missed_evictions(new, at)
        self._record(new, at)

    def _adjust(self, new: RunStatus) -> RunStatus:
        # A JobSet restart whose RestartingJobSet condition we never saw is still a restart.
        if new.state is RunState.STARTING and self._restarting:
            return RunStatus(RunState.RESTARTING, "RestartingJobSet", new.message)
        if new.state is not RunState.RESTARTING:
            self._restarting = False
        # Restarts exhausted by disruptions alone (failed pods are gone by now): not the code.
        only_disruptions = bool(self._disrupted) and not self._user_failed
        user_or_unknown = new.cause in (FailureCause.USER_CODE, FailureCause.UNKNOWN)
        if new.state is RunState.FAILED and user_or_unknown and only_disruptions:
            note = f"{new.message}; all {len(self._disrupted)} pod failures were disruptions"
            return RunStatus(new.state, new.reason, note, FailureCause.INFRASTRUCTURE)
        return new

    def _with_position(self, new: RunStatus) -> RunStatus:
        if new.state is not RunState.QUEUED or self._position is None:
            return new
        queue = ((self._workload or {}).get("spec") or {}).get("queueName", "")
        local, cluster = self._position
        where = f"position {local} in LocalQueue {queue}, {cluster} in ClusterQueue"
        return RunStatus(new.state, new.reason, f"{new.message}; {where}".strip("; "), new.cause)

    def _infer_missed_evictions(self, new: RunStatus, at: float) -> None:
        # Conditions are overwritten in place; Kueue's cumulative counts are not.
        evicted = condition(self._workload, "Evicted")
        live = ""
        if evicted is not None and evicted.get("status") == "True":
            live = "Preempted" if new.state is RunState.PREEMPTED else evicted.get("reason", "")
        if live and live != self._live_eviction:
            self._episodes[live] = self._episodes.get(live, 0) + 1
        self._live_eviction = live
        for reason, total in self._eviction_totals().items():
            # Deactivation is sticky (spec.active=false), so it cannot be missed.
            if total <= self._episodes.get(reason, 0) or reason.startswith("Deactivated"):
                continue
            self._episodes[reason] = total
            state = RunState.PREEMPTED if reason == "Preempted" else RunState.QUEUED
            note = f"evicted ({reason}) between two observations; Kueue's count is now {total}"
            self._record(RunStatus(state, reason, note), at, detail="from schedulingStats")

    def _record(self, new: RunStatus, at: float, detail: str = "") -> None:
        last = self.history[-1].status if self.history else None
        self._status = new
        if new.state is not RunState.QUEUED:
            self._position = None  # a later requeue gets a new position
        if last is None or (last.state, last.reason) != (new.state, new.reason):
            self.history.append(Transition(new, self.attempt, at, detail))
