"""Status classification of hand-built snapshots: cases the real recordings do not cover."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from gkeml_sdk.runs.handle import FailureCause, RunState, RunStatus
from gkeml_sdk.runs.status import StatusTracker, classify, resubmittable

S = RunState


def cond(ctype: str, status: str = "True", reason: str = "", message: str = "") -> dict[str, str]:
    return {"type": ctype, "status": status, "reason": reason, "message": message}


JOB = {"kind": "JobSet", "metadata": {"name": "train", "uid": "u1"}, "status": {"restarts": 0}}


def workload(*conds: dict[str, str], evictions: int = 0, **spec: Any) -> dict[str, Any]:
    stats = (
        [{"reason": "Preempted", "underlyingCause": "", "count": evictions}] if evictions else []
    )
    return {
        "kind": "Workload",
        "metadata": {
            "name": "jobset-train-1",
            "uid": "w1",
            "labels": {"kueue.x-k8s.io/job-uid": "u1"},
            "ownerReferences": [{"kind": "JobSet", "name": "train", "uid": "u1"}],
        },
        "spec": {"podSets": [{"name": "node", "count": 1}], "queueName": "team-a", **spec},
        "status": {"conditions": list(conds), "schedulingStats": {"evictions": stats}},
    }


def pod(
    phase: str = "Running", *conds: dict[str, str], name: str = "train-node-0-0-a"
) -> dict[str, Any]:
    lab = {"jobset.sigs.k8s.io/jobset-name": "train", "jobset.sigs.k8s.io/restart-attempt": "0"}
    ready = [cond("Ready")] if phase == "Running" else []
    return {
        "kind": "Pod",
        "metadata": {"name": name, "uid": f"uid-{name}", "labels": lab},
        "status": {"phase": phase, "conditions": [*ready, *conds]},
    }


ADMITTED = (cond("QuotaReserved"), cond("Admitted"))


def test_preemption_entirely_between_two_snapshots_is_counted() -> None:
    tracker = StatusTracker(job_name="train")
    tracker.observe("JobSet", "ADDED", JOB, at=0.0)
    tracker.observe("Workload", "ADDED", workload(*ADMITTED), at=1.0)
    tracker.observe("Pod", "ADDED", pod(), at=2.0)
    assert tracker.status.state is S.RUNNING and tracker.counters.preemptions == 0

    readmitted = workload(
        *ADMITTED,
        cond("Evicted", "False", "QuotaReserved", "Previously: Preempted"),
        cond("Preempted", "False", "QuotaReserved"),
        cond("Requeued", "True", "Preempted"),
        evictions=1,
    )
    tracker.observe("Workload", "MODIFIED", readmitted, at=9.0)
    tracker.observe("Workload", "MODIFIED", copy.deepcopy(readmitted), at=10.0)

    assert [t.status.state for t in tracker.history][-3:] == [S.RUNNING, S.PREEMPTED, S.RUNNING]
    missed = tracker.history[-2]
    assert (missed.at, missed.detail, missed.status.reason) == (
        9.0,
        "from schedulingStats",
        "Preempted",
    )
    assert tracker.counters.preemptions == 1

    tracker.observe("Workload", "MODIFIED", workload(*ADMITTED, evictions=3), at=20.0)
    assert tracker.counters.preemptions == 3
    assert sum(t.status.state is S.PREEMPTED for t in tracker.history) == 2


def test_restarts_exhausted_by_disruptions_are_infrastructure() -> None:
    tracker = StatusTracker(job_name="train")
    tracker.observe("JobSet", "ADDED", JOB, at=0.0)
    tracker.observe("Workload", "ADDED", workload(*ADMITTED), at=1.0)
    spot = pod("Failed", cond("DisruptionTarget", reason="TerminationByKubelet"))
    tracker.observe("Pod", "MODIFIED", spot, at=2.0)
    assert tracker.status.state is S.RESTARTING
    tracker.observe("Pod", "DELETED", spot, at=3.0)
    failed = {
        **JOB,
        "status": {"restarts": 0, "conditions": [cond("Failed", reason="ReachedMaxRestarts")]},
    }
    tracker.observe("JobSet", "MODIFIED", failed, at=4.0)

    assert (tracker.status.state, tracker.status.cause) == (S.FAILED, FailureCause.INFRASTRUCTURE)
    assert tracker.counters.disruptions == 1
    assert tracker.is_resubmittable()


def test_terminal_status_is_final() -> None:
    """Reactivating a deactivated Workload is a new decision; this run already ended."""
    tracker = StatusTracker(job_name="train")
    tracker.observe("JobSet", "ADDED", JOB, at=0.0)
    tracker.observe("Workload", "ADDED", workload(*ADMITTED, active=False), at=1.0)
    tracker.observe("Workload", "MODIFIED", workload(*ADMITTED, active=True), at=2.0)
    tracker.observe("Pod", "ADDED", pod(), at=3.0)
    assert (tracker.status.state, tracker.status.reason) == (S.FAILED, "Deactivated")
    assert [t.status.state for t in tracker.history] == [S.PENDING, S.FAILED]
    assert not tracker.is_resubmittable()


def test_tracker_locks_onto_one_job_uid() -> None:
    """A same-named JobSet with another uid belongs to another attempt and is ignored."""
    early = StatusTracker(job_name="train")
    early.observe("Workload", "ADDED", workload(), at=0.0)  # before the JobSet: matched by owner
    assert early.workload_name == "jobset-train-1"
    early.observe("JobSet", "ADDED", JOB, at=1.0)
    other = {"kind": "JobSet", "metadata": {"name": "train", "uid": "u2"}}
    early.observe("JobSet", "DELETED", other, at=2.0)
    assert early.status.state is S.QUEUED

    pinned = StatusTracker(job_name="train", job_uid="u2")
    pinned.observe("JobSet", "ADDED", JOB, at=0.0)
    assert pinned.history == []


def test_pods_of_an_earlier_jobset_attempt_do_not_count_as_running() -> None:
    restarted = {**JOB, "status": {"restarts": 1}}
    old = pod()  # restart-attempt "0", still Running while being replaced
    assert classify(restarted, workload(*ADMITTED), [old]).state is S.STARTING
    assert classify(JOB, workload(*ADMITTED), [old]).state is S.RUNNING


@pytest.mark.parametrize(
    ("wl", "expected"),
    [
        (workload(), (S.QUEUED, "")),
        (workload(cond("QuotaReserved", "False", "Inadmissible")), (S.QUEUED, "Inadmissible")),
        (workload(cond("QuotaReserved")), (S.WAITING_FOR_CAPACITY, "AdmissionChecksPending")),
        (workload(*ADMITTED, cond("Evicted", reason="NodeFailures")), (S.QUEUED, "NodeFailures")),
        (
            workload(*ADMITTED, cond("Evicted", reason="ClusterQueueStopped")),
            (S.QUEUED, "ClusterQueueStopped"),
        ),
        (
            workload(
                *ADMITTED,
                cond("Evicted", reason="Preempted"),
                cond("Preempted", reason="InCohortReclamation"),
            ),
            (S.PREEMPTED, "Preempted"),
        ),
        (workload(*ADMITTED, active=False), (S.FAILED, "Deactivated")),
        (
            workload(cond("Evicted", reason="DeactivatedDueToAdmissionCheck")),
            (S.FAILED, "DeactivatedDueToAdmissionCheck"),
        ),
        (
            workload(*ADMITTED, cond("DeactivationTarget", reason="MaximumExecutionTimeExceeded")),
            (S.FAILED, "DeactivatedDueToMaximumExecutionTimeExceeded"),
        ),
        (workload(cond("Finished", reason="OwnerNotFound")), (S.CANCELLED, "OwnerNotFound")),
        (workload(cond("Finished", reason="Succeeded")), (S.SUCCEEDED, "Succeeded")),
        (workload(cond("Finished", reason="FailedToStart")), (S.FAILED, "FailedToStart")),
    ],
)
def test_classify_workload_conditions(wl: dict[str, Any], expected: tuple[RunState, str]) -> None:
    status = classify(JOB, wl, [])
    assert (status.state, status.reason) == expected


def test_classify_without_workload_and_deleted_job() -> None:
    assert classify(JOB, None, []).state is S.PENDING
    assert classify(None, None, []).state is S.PENDING
    assert classify(JOB, workload(*ADMITTED), [pod()], job_deleted=True).state is S.CANCELLED


def test_classify_trusts_pods_ready_only_without_pod_information() -> None:
    ready = workload(*ADMITTED, cond("PodsReady", reason="Started"))
    assert classify(JOB, ready, []).state is S.RUNNING
    assert classify(JOB, ready, [pod("Pending")]).state is S.STARTING


@pytest.mark.parametrize(
    ("status", "expected"),
    [
        (
            RunStatus(
                S.FAILED, "DeactivatedDueToRequeuingLimitExceeded", cause=FailureCause.DEACTIVATED
            ),
            True,
        ),
        (
            RunStatus(S.FAILED, "DeactivatedDueToAdmissionCheck", cause=FailureCause.DEACTIVATED),
            True,
        ),
        (RunStatus(S.FAILED, "Deactivated", cause=FailureCause.DEACTIVATED), False),
        (
            RunStatus(
                S.FAILED,
                "DeactivatedDueToMaximumExecutionTimeExceeded",
                cause=FailureCause.DEACTIVATED,
            ),
            False,
        ),
        (RunStatus(S.FAILED, "ReachedMaxRestarts", cause=FailureCause.INFRASTRUCTURE), True),
        (RunStatus(S.FAILED, "ReachedMaxRestarts", cause=FailureCause.USER_CODE), False),
        (RunStatus(S.FAILED, "FailedToStart", cause=FailureCause.UNKNOWN), False),
        (RunStatus(S.SUCCEEDED), False),
        (RunStatus(S.CANCELLED), False),
    ],
)
def test_resubmittable(status: RunStatus, expected: bool) -> None:
    assert resubmittable(status) is expected
