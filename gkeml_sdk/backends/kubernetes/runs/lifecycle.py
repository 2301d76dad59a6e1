"""`RunLifecycle`: the one writer of a run's record. It merges what the run's status tracker
saw into the record's one history, notes how each attempt ended with Kueue's and JobSet's
counters, decides what comes next (`next_attempt`) and creates that attempt. Every save is
conditional on the record as read (`RecordConflict` otherwise: the run is read again), and an
attempt is created only after the save that reserved its name landed. A controller's client
also checks right before each request that it still leads (`KubeClient.guard`)."""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace
from typing import Protocol

from gkeml_sdk.backends.kubernetes.runs.run_record import AttemptRecord, RunRecord, attempt_name
from gkeml_sdk.runs.classify import resubmittable
from gkeml_sdk.runs.history import merge
from gkeml_sdk.runs.states import RunCounters, RunState, RunStatus, Transition
from gkeml_sdk.runs.status import StatusTracker

log = logging.getLogger(__name__)
_NAMED = ("preemptions", "disruptions", "user_restarts")


@dataclass(frozen=True, slots=True)
class Plan:
    """The next attempt of a run and how long to wait before creating it."""

    attempt: AttemptRecord
    delay: float
    detail: str = ""  # the note its history entry carries


class Followed(Protocol):
    """The run a lifecycle acts for, as its service follows it (a `RunTrack`)."""

    record: RunRecord

    @property
    def tracker(self) -> StatusTracker: ...

    def start_attempt(self, record: RunRecord) -> None: ...

    def mark_cancelled(self) -> None: ...


class RecordWriter(Protocol):
    """The writes a lifecycle makes, each conditional on what was read (the run service)."""

    def save(self, record: RunRecord) -> RunRecord: ...

    def create_attempt(self, record: RunRecord, attempt: AttemptRecord) -> RunRecord: ...

    def cancel_marked(self, record: RunRecord) -> bool: ...


class RunLifecycle:
    """Acts for one run: the controller has one per run it leads, a client following a run
    with no live controller has its own.

    Example:
        >>> lifecycle = RunLifecycle(service, track)  # doctest: +SKIP
        >>> lifecycle.on_change(time.time())  # doctest: +SKIP
    """

    def __init__(self, writer: RecordWriter, run: Followed) -> None:
        self.writer, self.run = writer, run
        self.plan: Plan | None = None
        self.resubmit_at: float | None = None
        self._decided = 0  # the attempt whose end was decided
        self.writes = 0  # record saves and attempt creations (for diagnostics)

    def ensure_attempt(self) -> None:
        """Create the current attempt when it was recorded but never created (a client or
        controller died in between): the same deterministic name, an existing object of this
        attempt adopted, so never twice."""
        record = self.run.record
        if record.cancelled or record.current.outcome or record.current.uid:
            return
        self.writes += 1
        self.run.start_attempt(self.writer.create_attempt(record, record.current))

    def on_change(self, now: float) -> None:
        """Merge the tracker's news into the record, note a finished attempt, decide."""
        run, tracker = self.run, self.run.tracker
        record = replace(run.record, history=merge(run.record.history, tracker.history))
        status = tracker.status
        if status.terminal and not record.current.outcome:
            counted = replace(record.current, outcome=status.state.value)
            record = record.with_attempt(
                replace(counted, counters=counter_fields(tracker.counters))
            )
        if record != run.record:
            self._save(record)
        if status.terminal and self._decided != record.current.attempt:
            self._decide(status, now)

    def act(self, now: float) -> None:
        """Create the planned attempt once its backoff is over (unless cancelled meanwhile)."""
        if self.plan is None or self.resubmit_at is None or now < self.resubmit_at:
            return
        plan, self.plan, self.resubmit_at = self.plan, None, None
        if self.run.record.cancelled or self.writer.cancel_marked(self.run.record):
            self.run.mark_cancelled()
            return
        record, number = self.run.record, plan.attempt.attempt
        note = Transition(
            RunStatus(RunState.PENDING, "Resubmitted", f"attempt {number} created"),
            number,
            now - record.submitted_at,
            plan.detail,
            key=f"{record.name}/resubmitted/{number}",
        )
        # The decision first, conditional on the record as read: only once it landed is the
        # name ours to create (whoever acts next creates the same deterministic name).
        record = replace(record.with_attempt(plan.attempt), history=(*record.history, note))
        record = self._save(record)
        self.writes += 1
        self.run.start_attempt(self.writer.create_attempt(record, plan.attempt))

    def _decide(self, end: RunStatus, now: float) -> None:
        record = self.run.record
        self._decided = record.current.attempt
        self.plan = plan = next_attempt(record, end, spot_losses(record))
        if plan is not None:
            self.resubmit_at = now + plan.delay
            name, how = plan.attempt.name, plan.detail or "same capacity"
            log.info("run %s: %s; %s (%s) after %.0fs", record.name, end, name, how, plan.delay)

    def _save(self, record: RunRecord) -> RunRecord:
        self.writes += 1
        self.run.record = self.writer.save(record)
        return self.run.record


def next_attempt(record: RunRecord, end: RunStatus, spot_losses: int) -> Plan | None:
    """What follows a run whose current attempt ended with `end`. None when that end is final:
    success, user code, a person's cancel, no `RetryPolicy`, or its `max_resubmits` spent.
    Otherwise attempt n+1, named deterministically so that two deciders make the same object,
    after the policy's backoff (tenacity's exponential wait, `RetryPolicy.delay`), on the same
    capacity; off Spot once the run lost `fallback_to_on_demand_after` attempts or pods to Spot
    reclaims (`spot_losses`; Kueue preemptions do not count: on-demand would not avoid them).

    Example:
        >>> from gkeml_sdk import RetryPolicy, TrainingJob
        >>> from gkeml_sdk.runs.handle import FailureCause
        >>> job = TrainingJob(name="ft", image="i", command=["x"], spot=True)
        >>> record = RunRecord(job=job, submitted_at=0.0, attempts=(AttemptRecord(1, "ft", True),),
        ...     retry=RetryPolicy(max_resubmits=2, fallback_to_on_demand_after=1))
        >>> lost = RunStatus(RunState.FAILED, "NodeLost", cause=FailureCause.INFRASTRUCTURE)
        >>> plan = next_attempt(record, lost, spot_losses=1)
        >>> plan.attempt.name, plan.attempt.spot, plan.detail
        ('ft--r2', False, 'on-demand (Spot fallback)')
        >>> next_attempt(record, lost, spot_losses=0).attempt.spot
        True
        >>> next_attempt(record, RunStatus(RunState.SUCCEEDED), spot_losses=0) is None
        True
    """
    policy, current = record.retry, record.current
    if (
        policy is None
        or record.cancelled
        or not resubmittable(end)
        or current.attempt - 1 >= policy.max_resubmits
    ):
        return None
    number = current.attempt + 1
    name, delay = attempt_name(record.name, number), policy.delay(number - 1)
    if current.spot and policy.wants_on_demand(spot_losses):
        return Plan(AttemptRecord(number, name, spot=False), delay, "on-demand (Spot fallback)")
    return Plan(AttemptRecord(number, name, current.spot), delay)


def counter_fields(counters: RunCounters) -> dict[str, int]:
    """The counters an attempt ended with, as the record keeps them."""
    named = {name: int(getattr(counters, name)) for name in _NAMED}
    return {**named, **counters.extra}


def run_counters(record: RunRecord, live: RunCounters | None) -> RunCounters:
    """The run's counters: every finished attempt's from its record, the current one's from
    Kueue's and JobSet's status now (`live`), whichever is larger.

    Example:
        >>> from gkeml_sdk import TrainingJob
        >>> from gkeml_sdk.backends.kubernetes.runs.run_record import AttemptRecord
        >>> job = TrainingJob(name="a", image="i", command=["x"])
        >>> r = RunRecord(job=job, submitted_at=0.0, attempts=(
        ...     AttemptRecord(1, "a", True, "Failed", counters={"preemptions": 1}),
        ...     AttemptRecord(2, "a--r2", True)))
        >>> run_counters(r, RunCounters(preemptions=2)).preemptions
        3
    """
    totals: dict[str, int] = {}
    for attempt in record.attempts:
        fields = dict(attempt.counters)
        if live is not None and attempt.attempt == record.current.attempt:
            for name, value in counter_fields(live).items():
                fields[name] = max(fields.get(name, 0), value)
        for name, value in fields.items():
            totals[name] = totals.get(name, 0) + int(value)
    extra = {k: v for k, v in totals.items() if k not in _NAMED}
    named = {name: totals.get(name, 0) for name in _NAMED}
    return RunCounters(**named, resubmissions=record.current.attempt - 1, extra=extra)


def spot_losses(record: RunRecord) -> int:
    """What the Spot fallback counts: pods reclaimed and attempts lost to infrastructure, on
    Spot attempts only; Kueue preemptions and user failures are never Spot losses."""
    lost = 0
    for attempt in record.attempts:
        if attempt.spot:
            lost += int(attempt.counters.get("disruptions", 0))
            lost += attempt.outcome == RunState.FAILED.value
    return lost
