"""Fold the watch events of one job into a run state, a history and counters (pure, no I/O)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

from gkeml_sdk.core.objects import ObjView, labels, uid
from gkeml_sdk.runs.classify import classify, queue_position, resubmittable
from gkeml_sdk.runs.conditions import workload_belongs
from gkeml_sdk.runs.handle import FailureCause, RunCounters, RunState, RunStatus, Transition
from gkeml_sdk.runs.history import eviction_key, merge, transition_key
from gkeml_sdk.runs.pods import disruption, pod_belongs
from gkeml_sdk.runs.workload import BY_PREEMPTION, DEACTIVATED, read_workload
from gkeml_sdk.scheduling.kueue import JOBSET_NAME_LABEL

__all__ = ["StatusTracker", "classify", "deleted", "queue_position", "resubmittable"]


def deleted(kind: str, name: str) -> RunStatus:
    """The end of an attempt whose job was deleted, or is being deleted, by anything but
    gkeml's cancel (a cancelled run reads CANCELLED from its record): the attempt is lost.
    Deleting it was somebody's choice, so no RetryPolicy brings it back.

    Example:
        >>> print(deleted("JobSet", "train").reason)
        JobSetDeleted
    """
    return RunStatus(
        RunState.FAILED,
        f"{kind}Deleted",
        f"{kind} {name} was deleted outside gkeml (not by cancel()), so this attempt is lost; "
        "submit the run again to rerun it",
        FailureCause.USER_CODE,
    )


class StatusTracker:
    """Fold the watch events of one job, in order, into a status, a history and counters.

    Without `job_name` the caller must pre-select the job's events; with it, the first
    JobSet/Job of that name (and `job_uid`, else the first uid seen that `job_filter` accepts:
    not another submission's object of that name) is the job; Workloads and Pods are matched
    to it by Kueue's job-uid label / ownerReferences and JobSet/Job labels.

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
        job_filter: Callable[[ObjView], bool] | None = None,
        origin: float | None = None,
    ) -> None:
        self.attempt = attempt
        self._filter = job_filter
        self._origin = origin  # the epoch time `at` counts from, to place the cluster's times
        self.history: list[Transition] = []
        self._name, self._kind, self._uid = job_name, job_kind, job_uid or ""
        self._job: ObjView | None = None
        self._workload: ObjView | None = None
        self._pods: dict[str, ObjView] = {}
        self._job_deleted = self._restarting = False
        self._status = RunStatus(RunState.PENDING, message="job not observed yet")
        self._stats: dict[tuple[str, str], int] = {}  # (workload uid, reason) -> Kueue's count
        self._episodes: dict[str, int] = {}  # evictions already in the history, per reason
        self._live_eviction = self._live_key = ""
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
    def dispatched_to(self) -> str | None:
        """The MultiKueue worker cluster the Workload was dispatched to, once known."""
        return read_workload(self._workload).cluster_name or None

    @property
    def counters(self) -> RunCounters:
        """Preemptions and other evictions (Kueue's cumulative counts), disruptions, restarts."""
        totals = self._eviction_totals()
        extra = {f"evictions.{r}": n for r, n in sorted(totals.items()) if r != BY_PREEMPTION}
        extra["requeues"] = self._requeues  # requeueState.count (PodsReadyTimeout backoff)
        return RunCounters(
            preemptions=max(totals.get(BY_PREEMPTION, 0), self._episodes.get(BY_PREEMPTION, 0)),
            disruptions=len(self._disrupted),
            user_restarts=self._user_restarts,
            resubmissions=self.attempt - 1,
            extra=extra,
        )

    def is_resubmittable(self) -> bool:
        """True when the run ended in an infrastructure loss worth a client-side resubmission."""
        return self._status.terminal and resubmittable(self._status)

    def observe(self, kind: str, event_type: str, obj: ObjView, at: float) -> RunStatus:
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

    def observe_snapshot(
        self, job: ObjView | None, workloads: list[ObjView], pods: list[ObjView], at: float
    ) -> RunStatus:
        """Feed one read of the job, its Workloads and pods at once (no watch): the status is
        classified once, so a reader that looks once records no half-seen states."""
        kind = str((job or {}).get("kind") or self._kind or "")
        if job is not None and kind in ("JobSet", "Job") and self._is_job(kind, job):
            self._job, self._kind = job, kind
        for workload in workloads:
            if self._owns("Workload", workload):
                self._workload = workload
        for pod in pods:
            if self._owns("Pod", pod):
                self._note_pod(pod, deleted=False)
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

    def owns_pod(self, pod: ObjView) -> bool:
        """True when `pod` belongs to the tracked attempt (a stream shows every run's pods).

        Example:
            >>> tracker = StatusTracker(1, job_name="t", job_kind="JobSet")
            >>> tracker.owns_pod({"metadata": {"labels": {"jobset.sigs.k8s.io/jobset-name": "u"}}})
            False
        """
        return self._owns("Pod", pod)

    def _is_job(self, kind: str, obj: ObjView) -> bool:
        if (self._kind is not None and kind != self._kind) or (
            kind == "Job" and JOBSET_NAME_LABEL in labels(obj)  # a JobSet's child Job
        ):
            return False
        name = (obj.get("metadata") or {}).get("name")
        self._name = self._name or name
        # A same-named job with another uid is a different attempt (resubmitted or recreated).
        if name != self._name or (self._uid and uid(obj) not in (self._uid, "")):
            return False
        if not self._uid and self._filter is not None and not self._filter(obj):
            return False
        self._uid = self._uid or uid(obj)
        return True

    def _owns(self, kind: str, obj: ObjView) -> bool:
        if self._name is None:
            return True
        check = workload_belongs if kind == "Workload" else pod_belongs
        return check(obj, self._name, self._uid, self._kind)

    def _note_pod(self, pod: ObjView, deleted: bool) -> None:
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
        workload = read_workload(self._workload)
        self._requeues = max(self._requeues, workload.requeue_count)
        for reason, count in workload.evictions.items():
            key = (uid(self._workload), reason)
            self._stats[key] = max(self._stats.get(key, 0), count)
        if self._status.terminal:
            return
        new = classify(
            self._job, self._workload, self._pods.values(), job_deleted=self._job_deleted
        )
        new = self._adjust(new)
        if new.state is RunState.CANCELLED and new.reason == _JOB_DELETED:
            # After `_adjust`: pods stopped by the deletion do not make it an infrastructure loss.
            new = deleted(self._kind or "Job", self._name or "")
        new = self._with_position(new)
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
        queue = read_workload(self._workload).queue_name
        local, cluster = self._position
        where = f"position {local} in LocalQueue {queue}, {cluster} in ClusterQueue"
        return RunStatus(new.state, new.reason, f"{new.message}; {where}".strip("; "), new.cause)

    def _infer_missed_evictions(self, new: RunStatus, at: float) -> None:
        # Conditions are overwritten in place; Kueue's cumulative counts are not.
        evicted = read_workload(self._workload).evicted
        live = ""
        if evicted.true:
            live = BY_PREEMPTION if new.state is RunState.PREEMPTED else evicted.reason
        if live and live != self._live_eviction:
            # Kueue counts the eviction in the same status write or later: the larger number.
            count = max(self._episodes.get(live, 0) + 1, self._eviction_totals().get(live, 0))
            self._episodes[live] = count
            self._live_key = eviction_key(self._uid, live, count)
        self._live_eviction = live
        for reason, total in self._eviction_totals().items():
            # Deactivation is sticky (spec.active=false), so it cannot be missed.
            if total <= self._episodes.get(reason, 0) or reason.startswith(DEACTIVATED):
                continue
            self._episodes[reason] = total
            state = RunState.PREEMPTED if reason == BY_PREEMPTION else RunState.QUEUED
            counted = f"Kueue's count is now {total}"
            note = f"evicted ({reason}) between two observations; {counted}"
            # The Workload keeps Kueue's words (the preemptor's UID) and time after re-admission.
            said, when = _eviction_evidence(self._workload, reason)
            if said:
                note = f"{said} (seen afterwards: {counted})"
            key = eviction_key(self._uid, reason, total)
            status = RunStatus(state, reason, note)
            self._record(status, self._cluster_time(when, at), "from schedulingStats", key)

    def _record(self, new: RunStatus, at: float, detail: str = "", key: str = "") -> None:
        self._status = new
        if new.state is not RunState.QUEUED:
            self._position = None  # a later requeue gets a new position
        if not key and self._live_eviction and new.state in (RunState.PREEMPTED, RunState.QUEUED):
            key = self._live_key
        # Restarts, evictions and disruptions so far tell apart a state that comes back.
        episode = f"{self._restarts}.{sum(self._episodes.values())}.{len(self._disrupted)}"
        key = key or transition_key(self._uid, new, self._since(), episode)
        self.history = list(merge(self.history, [Transition(new, self.attempt, at, detail, key)]))

    def _cluster_time(self, when: str, at: float) -> float:
        """`when` (the cluster's RFC 3339 time) as seconds since the origin, kept between the
        history's newest entry and `at` (the two clocks differ); `at` when unknown."""
        if self._origin is None or not when:
            return at
        try:
            then = datetime.fromisoformat(when.replace("Z", "+00:00")).timestamp()
        except ValueError:
            return at
        newest = max((t.at for t in self.history), default=0.0)
        return min(at, max(newest, then - self._origin))

    def _since(self) -> str:
        """The cluster's newest transition time of the job's and Workload's conditions and
        admission checks: what last changed the status (RFC 3339 strings order as times)."""
        times = [str(c.get("lastTransitionTime") or "") for c in _conditions(self._job)]
        times += [str(c.get("lastTransitionTime") or "") for c in _conditions(self._workload)]
        checks = ((self._workload or {}).get("status") or {}).get("admissionChecks") or []
        times += [str(c.get("lastTransitionTime") or "") for c in checks]
        return max(times, default="")


_JOB_DELETED = "Deleted"  # classify's reason for a job deleted or being deleted
_PREVIOUSLY = "Previously: "  # Kueue's prefix on a condition's message once it turned False
_EVICTION_CONDITIONS = ("Requeued", "Evicted", "Preempted")


def _eviction_evidence(workload: ObjView | None, reason: str) -> tuple[str, str]:
    """Kueue's message about the last eviction for `reason` and when it happened (RFC 3339;
    '' when not known), from the Workload's Requeued, Evicted and Preempted conditions, which
    keep the message after re-admission ("Previously: ...").

    Example:
        >>> requeued = {"type": "Requeued", "status": "True", "reason": "Preempted",
        ...     "message": "Preempted to accommodate a workload (UID: w2)",
        ...     "lastTransitionTime": "2026-11-29T14:31:31Z"}
        >>> _eviction_evidence({"status": {"conditions": [requeued]}}, "Preempted")
        ('Preempted to accommodate a workload (UID: w2)', '2026-11-29T14:31:31Z')
    """
    message = when = ""
    for cond in _conditions(workload):
        kind, text = cond.get("type"), str(cond.get("message") or "").removeprefix(_PREVIOUSLY)
        by_kind = kind == "Preempted" and reason == BY_PREEMPTION
        if kind not in _EVICTION_CONDITIONS or not (
            by_kind or cond.get("reason") == reason or text.startswith(reason)
        ):
            continue
        message = message or text
        if cond.get("status") == "True" and kind != "Preempted" and cond.get("reason") == reason:
            when = when or str(cond.get("lastTransitionTime") or "")
    return message, when


def _conditions(obj: ObjView | None) -> list[ObjView]:
    return list(((obj or {}).get("status") or {}).get("conditions") or [])
