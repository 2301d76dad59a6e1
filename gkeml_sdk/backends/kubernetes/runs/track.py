"""`RunTrack`: what the Kubernetes run service knows of one submission: its record as last
read, the status tracker of its current attempt, and its lifecycle while this process acts for
it. It reads and writes nothing itself; the service feeds it what the cluster shows and asks it
what follows (`done`, `owed_recovery`, ...). Handles (`gkeml_sdk.runs.handle.Run`) never see it."""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any

from gkeml_sdk.backends.kubernetes.api.shared_reads import SharedReads
from gkeml_sdk.backends.kubernetes.api.streams import Event
from gkeml_sdk.backends.kubernetes.runs.lifecycle import RunLifecycle, run_counters
from gkeml_sdk.backends.kubernetes.runs.run_record import RunRecord
from gkeml_sdk.backends.kubernetes.runs.submissions import submission_of
from gkeml_sdk.core.labels import ATTEMPT_LABEL, RUN_ID_LABEL
from gkeml_sdk.runs.history import merge
from gkeml_sdk.runs.service import RunRef
from gkeml_sdk.runs.states import RunCounters, RunState, RunStatus, Transition
from gkeml_sdk.runs.status import StatusTracker, resubmittable

CANCELLED = RunStatus(RunState.CANCELLED, "Cancelled", "cancelled through gkeml")
RESUBMITTED = "Resubmitted"  # the reason of the history note a resubmitter writes first


class RunTrack:
    """One submission as the service follows it.

    Example:
        >>> track = RunTrack(record)  # doctest: +SKIP
        >>> track.observe(event, time.time())  # doctest: +SKIP
        True
    """

    def __init__(self, record: RunRecord) -> None:
        self.record = record
        self.name = record.name
        self.namespace = record.job.namespace
        self.tracker = self._new_tracker()
        self.lifecycle: RunLifecycle | None = None  # set while this process acts for the run
        self.reported = len(record.history)  # history entries progress callbacks heard of
        self.recorded_end = self._final_from_record()
        self.shared: SharedReads | None = None  # set while a listing feeds this run
        self.read_ahead = False  # a listing read the cluster for the next `state`
        self.looked = False  # the cluster was read for this run at least once
        self.followed = 0  # waits of this process feeding the track from their streams now

    @property
    def ref(self) -> RunRef:
        """The submission this track follows."""
        return RunRef(self.name, self.namespace, self.record.submitted_at)

    @property
    def attempt(self) -> int:
        """The current attempt number (1 until a resubmission)."""
        return self.record.current.attempt

    @property
    def counters(self) -> RunCounters:
        """Counters summed over attempts: finished ones as recorded when they ended, the
        current one from Kueue's and JobSet's status."""
        live = None if self.recorded_end is not None else self.tracker.counters
        return run_counters(self.record, live if self.tracker.history else None)

    @property
    def tracker_kind(self) -> str:
        """The kind of the run's attempt objects (JobSet or Job)."""
        return "JobSet" if self.record.job.uses_jobset else "Job"

    def object_name(self) -> str:
        """Name of the current attempt's Job/JobSet."""
        return self.record.current.name

    def pod_selector(self) -> str:
        """Label selector of the current attempt's pods."""
        return f"{RUN_ID_LABEL}={self.name},{ATTEMPT_LABEL}={self.attempt}"

    def observe(self, event: Event, now: float) -> bool:
        """Feed one watched object to the current attempt's tracker; True when its status
        changed."""
        kind = "MODIFIED" if event.type == "SYNCED" else event.type
        self.looked = True
        before = self.tracker.status
        self.tracker.observe(event.kind, kind, event.obj, now - self.record.submitted_at)
        return self.tracker.status != before

    def observe_snapshot(self, job: Any, workloads: list[Any], pods: list[Any], now: float) -> None:
        """Feed one read of the current attempt's objects at once."""
        self.looked = True
        self.tracker.observe_snapshot(job, workloads, pods, now - self.record.submitted_at)

    def refresh(self, record: RunRecord) -> None:
        """Take a record another process wrote (a controller that resubmitted or ended it)."""
        if record.current.attempt != self.attempt or record.current.uid != self.record.current.uid:
            self.start_attempt(record)
            return
        self.record = record
        self.recorded_end = self._final_from_record()

    def start_attempt(self, record: RunRecord) -> None:
        """Take a record whose current attempt was just created (its uid now known)."""
        fresh = record.current.uid != self.record.current.uid or record.current.attempt != (
            self.attempt
        )
        self.record = record
        if fresh:
            self.tracker = self._new_tracker()
        self.recorded_end = self._final_from_record()

    def mark_cancelled(self) -> None:
        """The run was cancelled (its marker was found)."""
        self.record = replace(self.record, cancelled=True)

    def news(self) -> list[Transition]:
        """The history entries not reported yet, now counted as reported."""
        history = self.history()
        new = history[self.reported :]
        self.reported = max(self.reported, len(history))
        return new

    def seen_job(self) -> bool:
        """True once the current attempt's Job/JobSet was created (its uid recorded) or
        observed, by this process or (per the run record) by whoever acted before."""
        # The note of a resubmission is written before its attempt is created: not a sight.
        mine = any(
            t.attempt == self.attempt and t.status.reason != RESUBMITTED
            for t in self.record.history
        )
        return bool(self.record.current.uid or self.tracker.history) or mine

    def owed_recovery(self) -> bool:
        """True when the current attempt ended in a loss its RetryPolicy still resubmits."""
        status, policy = self.tracker.status, self.record.retry
        return (
            status.terminal
            and policy is not None
            and not self.record.cancelled
            and resubmittable(status)
            and self.attempt - 1 < policy.max_resubmits
        )

    def done(self) -> bool:
        """True once the run is final: no attempt running and none to come."""
        if self.record.cancelled or self.recorded_end is not None:
            return True
        if not self.tracker.status.terminal:
            return False
        if self.lifecycle is not None:
            return self.lifecycle.resubmit_at is None
        return not self.owed_recovery()

    def seconds_to_next_action(self, now: float) -> float:
        """Time until a scheduled resubmission (infinite when none)."""
        at = None if self.lifecycle is None else self.lifecycle.resubmit_at
        return float("inf") if at is None else max(0.0, at - now)

    def status(self) -> RunStatus:
        """The run's status as known now (no read)."""
        if self.record.cancelled:
            return CANCELLED
        if self.recorded_end is not None:
            return self.recorded_end
        status = self.tracker.status
        at = None if self.lifecycle is None else self.lifecycle.resubmit_at
        if at is not None:
            wait = max(0.0, at - time.time())
            note = f"; resubmitting as attempt {self.attempt + 1} in {wait:.0f}s"
            return RunStatus(status.state, status.reason, status.message + note, status.cause)
        return status

    def history(self) -> list[Transition]:
        """Every transition of every attempt, oldest first: the record's, and what the
        tracker saw that the record does not say yet."""
        return list(merge(self.record.history, self.tracker.history))

    def _final_from_record(self) -> RunStatus | None:
        # A run whose end is recorded needs no watching, unless that end is an
        # infrastructure loss still owed a resubmission (whoever acted died before making it).
        mine = [t for t in self.record.history if t.attempt == self.attempt]
        if not self.record.current.outcome or not mine or not mine[-1].status.terminal:
            return None
        end = mine[-1].status
        policy = self.record.retry
        owed = policy is not None and resubmittable(end) and self.attempt - 1 < policy.max_resubmits
        return None if owed else end

    def _new_tracker(self) -> StatusTracker:
        current, submission = self.record.current, repr(self.record.submitted_at)
        return StatusTracker(
            self.attempt,
            job_name=current.name,
            job_kind=self.tracker_kind,
            job_uid=current.uid,
            # Before its uid is known, a same-named object another submission made is not it.
            job_filter=lambda obj: submission_of(obj) in ("", submission),
            origin=self.record.submitted_at,
        )
