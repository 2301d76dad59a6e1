"""Status classification replayed against real Kueue/JobSet/Job watch recordings."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import pytest

from gkeml_sdk.runs.handle import FailureCause, RunState
from gkeml_sdk.runs.status import StatusTracker, queue_position
from tests.schemas import RECORDINGS

S = RunState
FIXTURES = RECORDINGS
needs_fixtures = pytest.mark.skipif(
    not FIXTURES.is_dir(), reason=f"recordings not found at {FIXTURES}"
)


def load(stem: str) -> list[dict[str, Any]]:
    with (FIXTURES / f"{stem}.jsonl").open() as fh:
        return [json.loads(line) for line in fh if line.strip()]


def select(events: list[dict[str, Any]], job: str | None) -> list[dict[str, Any]]:
    """The events of one job: the JobSet/Job, its Workload (job-uid / owner) and its pods."""
    first = next(
        e
        for e in events
        if e["kind"] in ("JobSet", "Job")
        and job in (None, e["name"])
        and "jobset.sigs.k8s.io/jobset-name" not in _labels(e["object"])  # not a child Job
    )
    kind, name, uid = first["kind"], first["name"], first["object"]["metadata"]["uid"]
    return [e for e in events if _belongs(e, kind, name, uid)]


def _belongs(event: dict[str, Any], kind: str, name: str, uid: str) -> bool:
    obj, lab = event["object"], _labels(event["object"])
    if event["kind"] == "Workload":
        owners = {ref["uid"] for ref in obj["metadata"].get("ownerReferences", [])}
        return uid in (lab.get("kueue.x-k8s.io/job-uid"), *owners)
    if event["kind"] == "Pod":
        pod_job = lab.get("jobset.sigs.k8s.io/jobset-name", lab.get("batch.kubernetes.io/job-name"))
        return bool(pod_job == name)
    return bool(event["kind"] == kind and event["name"] == name)


def _labels(obj: dict[str, Any]) -> dict[str, str]:
    return dict(obj["metadata"].get("labels") or {})


def replay(events: list[dict[str, Any]], tracker: StatusTracker) -> StatusTracker:
    for e in events:
        tracker.observe(e["kind"], e["type"], e["object"], at=e["t"])
    return tracker


def distinct_states(tracker: StatusTracker) -> list[RunState]:
    states: list[RunState] = []
    for transition in tracker.history:
        if not states or states[-1] is not transition.status.state:
            states.append(transition.status.state)
    return states


@dataclass
class Case:
    stem: str
    job: str | None
    states: list[RunState]
    final_reason: str
    cause: FailureCause | None = None
    counts: tuple[int, int, int] = (0, 0, 0)  # preemptions, disruptions, user_restarts
    resubmit: bool = False
    includes: list[tuple[RunState, str]] = field(default_factory=list)
    message: str = ""


OK = [S.PENDING, S.QUEUED, S.STARTING, S.RUNNING, S.SUCCEEDED]
CASES = [
    Case("jobset-succeeded", None, OK, "AllJobsCompleted"),
    Case("job-succeeded", None, OK, "CompletionsReached"),
    Case(
        "jobset-preempted-requeued-succeeded",
        "low",
        [*OK[:4], S.PREEMPTED, S.STARTING, S.RUNNING, S.SUCCEEDED],
        "AllJobsCompleted",
        counts=(1, 0, 0),
        includes=[(S.PREEMPTED, "Preempted")],
    ),
    Case(
        "jobset-preempted-requeued-succeeded",
        "high",
        OK,
        "AllJobsCompleted",
        includes=[(S.QUEUED, "WaitingForPreemptedWorkloads")],
    ),
    Case(
        "jobset-spot-disruption-succeeded",
        None,
        [S.PENDING, S.QUEUED, S.STARTING, S.RUNNING, S.RESTARTING, S.RUNNING, S.SUCCEEDED],
        "AllJobsCompleted",
        counts=(0, 1, 0),
        includes=[(S.RESTARTING, "TerminationByKubelet")],
    ),
    Case(
        "jobset-user-failure-after-restart",
        None,
        [S.PENDING, S.QUEUED, S.STARTING, S.RUNNING, S.RESTARTING, S.RUNNING, S.FAILED],
        "ReachedMaxRestarts",
        FailureCause.USER_CODE,
        counts=(0, 0, 1),
        includes=[(S.RUNNING, "PodFailed"), (S.RESTARTING, "DefaultFailurePolicy")],
        message="main exited with code 1",
    ),
    Case(
        "jobset-over-quota-pending",
        None,
        [S.PENDING, S.QUEUED],
        "ExceedsMaxQuota",
        message="insufficient quota for nvidia.com/gpu",
    ),
    Case(
        "jobset-missing-localqueue",
        None,
        [S.PENDING, S.QUEUED],
        "Misconfigured",
        message="LocalQueue no-such-queue doesn't exist",
    ),
    Case(
        "jobset-podsready-timeout-deactivated",
        None,
        [S.PENDING, S.QUEUED, S.STARTING, S.QUEUED, S.STARTING, S.FAILED],
        "DeactivatedDueToRequeuingLimitExceeded",
        FailureCause.DEACTIVATED,
        resubmit=True,
        includes=[(S.QUEUED, "PodsReadyTimeout")],
    ),
    Case(  # deleted with kubectl: nothing says gkeml cancelled it, so the attempt is lost
        "jobset-cancelled-while-running",
        None,
        [S.PENDING, S.QUEUED, S.STARTING, S.RUNNING, S.FAILED],
        "JobSetDeleted",
        FailureCause.USER_CODE,
        message="was deleted outside gkeml",
    ),
    Case(
        "jobset-dws-provisioned-succeeded",
        None,
        [S.PENDING, S.QUEUED, S.WAITING_FOR_CAPACITY, S.STARTING, S.RUNNING, S.SUCCEEDED],
        "AllJobsCompleted",
    ),
    Case(
        "jobset-dws-provisioning-failed-deactivated",
        None,
        [S.PENDING, S.QUEUED, S.WAITING_FOR_CAPACITY, S.QUEUED, S.WAITING_FOR_CAPACITY, S.FAILED],
        "DeactivatedDueToAdmissionCheck",
        FailureCause.DEACTIVATED,
        resubmit=True,
        includes=[(S.WAITING_FOR_CAPACITY, "AdmissionCheckRetry"), (S.QUEUED, "AdmissionCheck")],
        message="GCE out of resources again",
    ),
    Case("jobset-queued-behind-another", "first", OK, "AllJobsCompleted"),
    Case(
        "jobset-queued-behind-another",
        "second",
        OK,
        "AllJobsCompleted",
        includes=[(S.QUEUED, "WaitingForQuota")],
    ),
]


@needs_fixtures
@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c.stem}:{c.job or 'job'}")
def test_replay_recording(case: Case) -> None:
    tracker = replay(select(load(case.stem), case.job), StatusTracker(attempt=2))

    assert distinct_states(tracker) == case.states
    final = tracker.status
    assert (final.state, final.reason, final.cause) == (
        case.states[-1],
        case.final_reason,
        case.cause,
    )
    assert case.message in final.message
    pairs = [(t.status.state, t.status.reason) for t in tracker.history]
    assert all(pair in pairs for pair in case.includes), pairs
    counters = tracker.counters
    assert (counters.preemptions, counters.disruptions, counters.user_restarts) == case.counts
    assert counters.resubmissions == 1
    assert tracker.is_resubmittable() is case.resubmit
    assert all(t.attempt == 2 for t in tracker.history)
    times = [t.at for t in tracker.history]
    assert times == sorted(times)


@needs_fixtures
@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c.stem}:{c.job or 'job'}")
def test_tracker_selects_its_own_job_from_the_namespace(case: Case) -> None:
    """Fed every event of the namespace, the tracker picks the same objects as `select`."""
    job = case.job or select(load(case.stem), None)[0]["name"]
    own = replay(load(case.stem), StatusTracker(job_name=job))
    selected = replay(select(load(case.stem), case.job), StatusTracker())
    assert own.history == selected.history
    assert own.counters == selected.counters


@needs_fixtures
def test_podsready_timeout_counts_evictions_and_requeues() -> None:
    tracker = replay(load("jobset-podsready-timeout-deactivated"), StatusTracker())
    extra = tracker.counters.extra
    assert extra["evictions.PodsReadyTimeout"] == 1
    assert extra["evictions.Deactivated"] == 1
    assert extra["requeues"] == 1
    timeout = next(t for t in tracker.history if t.status.reason == "PodsReadyTimeout")
    assert timeout.at == pytest.approx(30.79)
    assert "requeue #1" in timeout.status.message


@needs_fixtures
def test_preemption_missed_by_the_watch_is_recovered_from_scheduling_stats() -> None:
    """Drop every Workload event showing Evicted=True: Kueue's counter still reveals it."""
    events = [
        e
        for e in select(load("jobset-preempted-requeued-succeeded"), "low")
        if not (e["kind"] == "Workload" and _evicted(e["object"]))
    ]
    tracker = replay(events, StatusTracker())
    preempted = [t for t in tracker.history if t.status.state is S.PREEMPTED]
    assert len(preempted) == 1
    assert preempted[0].detail == "from schedulingStats"
    assert preempted[0].at == pytest.approx(2.60)  # the first observation after it
    assert tracker.counters.preemptions == 1
    assert tracker.status.state is S.SUCCEEDED


def _evicted(obj: dict[str, Any]) -> bool:
    conds = obj.get("status", {}).get("conditions", [])
    return any(c["type"] == "Evicted" and c["status"] == "True" for c in conds)


@needs_fixtures
def test_queue_position_from_visibility_api() -> None:
    answer = json.loads(
        (FIXTURES / "jobset-queued-behind-another.pendingworkloads.json").read_text()
    )
    assert queue_position(answer, "jobset-second-3fbfa") == (0, 0)
    assert queue_position(answer, "jobset-first-e3cac") is None

    events = select(load("jobset-queued-behind-another"), "second")
    tracker = StatusTracker()
    replay([e for e in events if e["t"] < 2.0], tracker)
    assert tracker.status.reason == "WaitingForQuota"
    status = tracker.observe_pending_workloads(answer)
    assert status.state is S.QUEUED
    assert "position 0 in LocalQueue team-a, 0 in ClusterQueue" in status.message
    assert "insufficient unused quota" in status.message
    replay([e for e in events if e["t"] >= 2.0], tracker)
    assert tracker.status.state is S.SUCCEEDED
    assert "position" not in tracker.status.message


def test_a_pod_stuck_on_a_missing_secret_says_so_while_starting() -> None:
    from gkeml_sdk.runs.conditions import admitted_status

    workload = {"spec": {"podSets": [{"count": 2}]}}
    waiting = {
        "reason": "CreateContainerConfigError",
        "message": 'secret "wandb" not found',
    }
    pod = {
        "metadata": {"name": "ft-node-0-0-abcde"},
        "status": {
            "phase": "Pending",
            "containerStatuses": [{"name": "trainer", "state": {"waiting": waiting}}],
        },
    }
    status = admitted_status({"kind": "JobSet"}, workload, [pod])
    assert status.state is S.STARTING
    assert status.reason == "CreateContainerConfigError"
    assert status.message == 'pod ft-node-0-0-abcde: secret "wandb" not found; 0/2 pods ready'


def test_before_its_uid_is_known_a_job_of_another_submission_is_not_taken() -> None:
    """A run's name is reused: until the tracker knows its job's uid, `job_filter` tells a
    finished submission's object of that name (here: Completed) from its own."""

    def job(uid: str, submission: str, done: bool) -> dict[str, Any]:
        meta = {"name": "t", "uid": uid, "annotations": {"gkeml.dev/submission": submission}}
        conditions = [{"type": "Completed", "status": "True", "reason": "AllJobsCompleted"}]
        return {"kind": "JobSet", "metadata": meta, "status": {"conditions": conditions * done}}

    def ours(obj: dict[str, Any]) -> bool:
        return bool(obj["metadata"]["annotations"]["gkeml.dev/submission"] == "2.0")

    tracker = StatusTracker(job_name="t", job_kind="JobSet", job_filter=ours)
    tracker.observe("JobSet", "MODIFIED", job("old", "1.0", done=True), at=0.0)
    assert (tracker.status.state, tracker.history) == (S.PENDING, [])
    tracker.observe("JobSet", "ADDED", job("new", "2.0", done=False), at=1.0)
    tracker.observe("JobSet", "MODIFIED", job("old", "1.0", done=True), at=2.0)
    assert [t.status.state for t in tracker.history] == [S.PENDING]
    assert tracker.history[0].key.startswith("new/")


@needs_fixtures
def test_one_read_after_the_end_tells_the_preemption_as_kueue_recorded_it() -> None:
    """A reader that looks once, after a real preemption, re-admission and success: the
    Workload's conditions keep Kueue's message (the preemptor's UID) and the eviction's time,
    `schedulingStats` its count."""
    events = select(load("jobset-preempted-requeued-succeeded"), "low")
    last = {e["name"]: e["object"] for e in events}
    jobset = last["low"]
    workload = next(o for o in last.values() if o["kind"] == "Workload")
    pods = [o for o in last.values() if o["kind"] == "Pod"]
    origin = _epoch(jobset["metadata"]["creationTimestamp"])
    tracker = StatusTracker(job_name="low", job_kind="JobSet", origin=origin)

    tracker.observe_snapshot(jobset, [workload], pods, at=100.0)

    assert [t.status.state for t in tracker.history] == [S.PREEMPTED, S.SUCCEEDED]
    preempted = tracker.history[0]
    assert preempted.status.message.startswith(
        "Preempted to accommodate a workload (UID: 2bb50f0b-e5ef-41ba-993b-86abdabac104"
    )
    [requeued] = [c for c in workload["status"]["conditions"] if c["type"] == "Requeued"]
    assert preempted.at == _epoch(requeued["lastTransitionTime"]) - origin
    assert tracker.history[1].at == 100.0
    assert tracker.counters.preemptions == 1


def _epoch(rfc3339: str) -> float:
    from datetime import datetime

    return datetime.fromisoformat(rfc3339.replace("Z", "+00:00")).timestamp()
