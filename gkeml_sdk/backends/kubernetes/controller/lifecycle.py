"""`RunLifecycle`: the one writer of a run's record. It merges what the run's status tracker
saw into the record's one history, notes how each attempt ended with Kueue's and JobSet's
counters, asks the recovery strategy what comes next and creates that attempt. Every write
batch is preceded by `fence()` (the Lease check of the controller that acts)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

from gkeml_sdk.backends.kubernetes.controller.strategies import Plan, choose_strategy
from gkeml_sdk.backends.kubernetes.run_record import RunRecord
from gkeml_sdk.runs.handle import RunCounters, RunState, RunStatus, Transition
from gkeml_sdk.runs.history import merge

if TYPE_CHECKING:
    from gkeml_sdk.backends.kubernetes.cluster_backend import KubernetesBackend
    from gkeml_sdk.backends.kubernetes.kube_run import KubeRun

log = logging.getLogger(__name__)
_NAMED = ("preemptions", "disruptions", "user_restarts")


class RunLifecycle:
    """Acts for one run: the controller has one per run it leads, a client following a run
    with no live controller has its own.

    Example:
        >>> lifecycle = RunLifecycle(backend, run, fence=elector.fence)  # doctest: +SKIP
        >>> lifecycle.on_change(time.time())  # doctest: +SKIP
    """

    def __init__(
        self,
        backend: KubernetesBackend,
        run: KubeRun,
        fence: Callable[[], object] | None = None,
    ) -> None:
        self.backend, self.run = backend, run
        self.fence: Callable[[], object] = fence or (lambda: None)
        self.plan: Plan | None = None
        self.resubmit_at: float | None = None
        self.strategy = ""
        self._decided = 0  # the attempt whose end was decided
        self.writes = 0  # record saves and attempt creations (for diagnostics)

    def ensure_attempt(self) -> None:
        """Create the current attempt when it was recorded but never created (a client or
        controller died in between): the same deterministic name, an existing object of this
        attempt adopted, so never twice."""
        record = self.run.record
        if record.cancelled or record.current.outcome or record.current.uid:
            return
        self.fence()
        self.writes += 1
        self.run.start_attempt(self.backend.create_attempt(record, record.current))

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
        if self.backend.cancelled_elsewhere(self.run):
            return
        record, number = self.run.record, plan.attempt.attempt
        note = Transition(
            RunStatus(RunState.PENDING, "Resubmitted", f"attempt {number} created"),
            number,
            now - record.submitted_at,
            plan.detail,
            key=f"{record.name}/resubmitted/{number}",
        )
        # The decision first: whoever acts next creates the same deterministic name.
        record = replace(record.with_attempt(plan.attempt), history=(*record.history, note))
        self._save(record)
        self.fence()
        self.writes += 1
        self.run.start_attempt(self.backend.create_attempt(record, plan.attempt))

    def _decide(self, end: RunStatus, now: float) -> None:
        record = self.run.record
        self._decided = record.current.attempt
        strategy = choose_strategy(record, end, spot_losses(record))
        self.strategy = strategy.name
        self.plan = strategy.plan(record)
        if self.plan is not None:
            self.resubmit_at = now + self.plan.delay
            log.info("run %s: %s; %s after %.0fs", record.name, end, strategy.name, self.plan.delay)

    def _save(self, record: RunRecord) -> None:
        self.fence()
        self.writes += 1
        self.backend.save(record)
        self.run.record = record


def counter_fields(counters: RunCounters) -> dict[str, int]:
    """The counters an attempt ended with, as the record keeps them."""
    named = {name: int(getattr(counters, name)) for name in _NAMED}
    return {**named, **counters.extra}


def run_counters(record: RunRecord, live: RunCounters | None) -> RunCounters:
    """The run's counters: every finished attempt's from its record, the current one's from
    Kueue's and JobSet's status now (`live`), whichever is larger.

    Example:
        >>> from gkeml_sdk import TrainingJob
        >>> from gkeml_sdk.backends.kubernetes.run_record import AttemptRecord
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
