"""The one reader of a Kueue Workload's status: its conditions, admission checks, requeue state
and eviction counts as a typed view, with every Kueue condition type and reason the run states
and the explanations act on spelled here once
(https://kueue.sigs.k8s.io/docs/concepts/workload/)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from gkeml_sdk.core.objects import ObjView, condition

QUOTA_RESERVED = "QuotaReserved"
ADMITTED = "Admitted"
EVICTED = "Evicted"
PREEMPTED = "Preempted"
REQUEUED = "Requeued"
DEACTIVATION_TARGET = "DeactivationTarget"
PODS_READY = "PodsReady"
FINISHED = "Finished"
CONDITIONS = (
    QUOTA_RESERVED, ADMITTED, EVICTED, PREEMPTED, REQUEUED, DEACTIVATION_TARGET, PODS_READY,
    FINISHED,
)  # fmt: skip

# The Evicted reasons double as the keys of Kueue's eviction counts (`schedulingStats`).
BY_PREEMPTION = "Preempted"  # spelled like the Preempted condition, which says how instead
PODS_READY_TIMEOUT = "PodsReadyTimeout"
ADMISSION_CHECK = "AdmissionCheck"  # also a deactivation cause: DeactivatedDueToAdmissionCheck
# A deactivation's reason is DEACTIVATED or DEACTIVATED_DUE_TO + a cause; the cause tells
# whether resubmitting may help.
DEACTIVATED = "Deactivated"
DEACTIVATED_DUE_TO = "DeactivatedDueTo"
REQUEUING_LIMIT_EXCEEDED = "RequeuingLimitExceeded"
MAXIMUM_EXECUTION_TIME_EXCEEDED = "MaximumExecutionTimeExceeded"
SUCCEEDED = "Succeeded"
FAILED = "Failed"
OWNER_NOT_FOUND = "OwnerNotFound"
# Admitted=False with quota reserved: not a check but Topology Aware Scheduling holds it.
PENDING_DELAYED_TOPOLOGY = "PendingDelayedTopologyRequests"
CHECK_READY = "Ready"
CHECK_RETRY = "Retry"
CHECK_REJECTED = "Rejected"


@dataclass(frozen=True)
class Condition:
    """One Workload condition; `seen` is False (and the rest empty) when Kueue has not set it.

    Example:
        >>> Condition(True, "True", "Preempted", "to admit another").true
        True
    """

    seen: bool = False
    status: str = ""
    reason: str = ""
    message: str = ""
    since: str = ""  # lastTransitionTime

    @property
    def true(self) -> bool:
        """Whether the condition is set with status "True"."""
        return self.status == "True"


@dataclass(frozen=True)
class Check:
    """One entry of `status.admissionChecks[]`.

    Example:
        >>> Check("dws", "Pending", "ETA 5m").state
        'Pending'
    """

    name: str = "?"
    state: str = ""
    message: str = ""
    since: str = ""  # lastTransitionTime


@dataclass(frozen=True)
class WorkloadView:
    """What a Workload's status says, read once (see `read_workload`).

    Example:
        >>> WorkloadView().evicted.seen, WorkloadView(active=False).deactivation
        (False, ('Deactivated', 'spec.active is false'))
    """

    quota_reserved: Condition = Condition()
    admitted: Condition = Condition()
    evicted: Condition = Condition()
    preempted: Condition = Condition()
    requeued: Condition = Condition()
    deactivation_target: Condition = Condition()
    pods_ready: Condition = Condition()
    finished: Condition = Condition()
    active: bool = True  # spec.active; the API server defaults it to true
    checks: tuple[Check, ...] = ()
    requeue_count: int = 0  # status.requeueState
    requeue_at: str = ""
    evictions: Mapping[str, int] = field(default_factory=dict)  # Kueue's count per reason
    cluster_queue: str = ""  # status.admission.clusterQueue
    queue_name: str = ""  # spec.queueName
    cluster_name: str = ""  # status.clusterName: the MultiKueue worker running it

    @property
    def deactivation(self) -> tuple[str, str] | None:
        """(reason, message) when Kueue or a person deactivated the Workload, else None.

        Example:
            >>> read_workload({"spec": {"active": False}}).deactivation
            ('Deactivated', 'spec.active is false')
        """
        if self.evicted.true and self.evicted.reason.startswith(DEACTIVATED):
            return self.evicted.reason, self.evicted.message
        target = self.deactivation_target
        # DeactivationTarget precedes spec.active=false by a few ms; same outcome, same reason.
        if target.true:
            return DEACTIVATED_DUE_TO + target.reason, target.message
        if not self.active:
            return DEACTIVATED, "spec.active is false"
        return None

    @property
    def preemption(self) -> str | None:
        """How Kueue preempted an evicted Workload (the Preempted reason, maybe ""), else None.

        Example:
            >>> read_workload({"status": {"conditions": [{"type": "Evicted", "status": "True",
            ...     "reason": "Preempted"}, {"type": "Preempted", "status": "True",
            ...     "reason": "InClusterQueue"}]}}).preemption
            'InClusterQueue'
        """
        if self.evicted.true and (self.evicted.reason == BY_PREEMPTION or self.preempted.true):
            return self.preempted.reason
        return None

    @property
    def waiting_checks(self) -> tuple[Check, ...]:
        """The admission checks that are not Ready yet.

        Example:
            >>> read_workload({"status": {"admissionChecks": [{"name": "a", "state": "Ready"},
            ...     {"name": "b", "state": "Pending"}]}}).waiting_checks[0].name
            'b'
        """
        return tuple(c for c in self.checks if c.state != CHECK_READY)

    @property
    def rejected_check(self) -> Check | None:
        """The first admission check in state Rejected, if any.

        Example:
            >>> read_workload({"status": {"admissionChecks": [{"name": "dws",
            ...     "state": "Rejected"}]}}).rejected_check.name
            'dws'
        """
        return next((c for c in self.checks if c.state == CHECK_REJECTED), None)

    @property
    def timeouts(self) -> int:
        """PodsReady timeouts so far: Kueue's cumulative count, else the requeue count.

        Example:
            >>> read_workload({"status": {"requeueState": {"count": 2}}}).timeouts
            2
        """
        return self.evictions.get(PODS_READY_TIMEOUT, 0) or self.requeue_count


def read_workload(workload: ObjView | None) -> WorkloadView:
    """The typed view of a Workload dict (an empty view for None).

    Example:
        >>> wl = read_workload({"status": {"conditions": [{"type": "Evicted", "status": "True",
        ...     "reason": "PodsReadyTimeout", "message": "timeout"}]}})
        >>> wl.evicted.reason, wl.evicted.true, wl.deactivation, wl.admitted.seen
        ('PodsReadyTimeout', True, None, False)
    """
    wl = workload or {}
    spec, status = wl.get("spec") or {}, wl.get("status") or {}
    requeue = status.get("requeueState") or {}
    return WorkloadView(
        quota_reserved=_condition(wl, QUOTA_RESERVED),
        admitted=_condition(wl, ADMITTED),
        evicted=_condition(wl, EVICTED),
        preempted=_condition(wl, PREEMPTED),
        requeued=_condition(wl, REQUEUED),
        deactivation_target=_condition(wl, DEACTIVATION_TARGET),
        pods_ready=_condition(wl, PODS_READY),
        finished=_condition(wl, FINISHED),
        active=spec.get("active") is not False,
        checks=tuple(_check(c) for c in status.get("admissionChecks") or []),
        requeue_count=int(requeue.get("count") or 0),
        requeue_at=str(requeue.get("requeueAt") or ""),
        evictions=eviction_counts(wl),
        cluster_queue=str((status.get("admission") or {}).get("clusterQueue") or ""),
        queue_name=str(spec.get("queueName") or ""),
        cluster_name=str(status.get("clusterName") or ""),
    )


def eviction_counts(workload: ObjView | None) -> dict[str, int]:
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


def _condition(workload: ObjView, ctype: str) -> Condition:
    found = condition(workload, ctype)
    if found is None:
        return Condition()
    return Condition(
        True,
        str(found.get("status") or ""),
        str(found.get("reason") or ""),
        str(found.get("message") or ""),
        str(found.get("lastTransitionTime") or ""),
    )


def _check(check: ObjView) -> Check:
    return Check(
        str(check.get("name") or "?"),
        str(check.get("state") or ""),
        str(check.get("message") or ""),
        str(check.get("lastTransitionTime") or ""),
    )
