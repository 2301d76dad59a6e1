"""`KubeRun`: one logical run on the cluster across its attempts; follows Kueue/JobSet status
and resubmits after terminal infrastructure loss, exactly once per attempt."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from gkeml_sdk.backends.kubernetes.diagnosis import explain
from gkeml_sdk.backends.kubernetes.run_record import AttemptRecord, RunRecord, attempt_name
from gkeml_sdk.core.labels import ATTEMPT_LABEL, RUN_ID_LABEL
from gkeml_sdk.runs.explain.explanation import Category, Explanation
from gkeml_sdk.runs.handle import (
    ProgressCallback,
    Run,
    RunCounters,
    RunState,
    RunStatus,
    Transition,
)
from gkeml_sdk.runs.status import StatusTracker, resubmittable

if TYPE_CHECKING:
    from gkeml_sdk.backends.kubernetes.cluster_backend import KubernetesBackend
    from gkeml_sdk.backends.kubernetes.config import KubernetesSettings
    from gkeml_sdk.backends.kubernetes.streams import Event

log = logging.getLogger(__name__)
CANCELLED = RunStatus(RunState.CANCELLED, "Cancelled", "cancelled through gkeml")


class KubeRun(Run):
    """A run on GKE. Created by `Client().submit(job)` or `Client().get_run(name)`.

    Example:
        >>> run = Client().submit(job, retry=RetryPolicy(max_resubmits=3))  # doctest: +SKIP
        >>> run.wait(timeout=3600).state  # doctest: +SKIP
        <RunState.SUCCEEDED: 'Succeeded'>
    """

    def __init__(self, backend: KubernetesBackend, record: RunRecord) -> None:
        self._backend = backend
        self.record = record
        self.name = record.name
        self.namespace = record.job.namespace
        self._history = list(record.history)
        self._tracker = self._new_tracker()
        self._seen = 0  # tracker transitions already copied into the history
        self._resubmit_at: float | None = None
        self._recorded_end = self._final_from_record()

    # -- the Run interface -------------------------------------------------------------

    @property
    def state(self) -> RunStatus:
        """The current status, read from the cluster now."""
        if not self.done():
            self._backend.snapshot(self)
        return self._status()

    @property
    def history(self) -> list[Transition]:
        """Every transition of every attempt, oldest first."""
        return list(self._history)

    @property
    def attempt(self) -> int:
        """The current attempt number (1 until a resubmission)."""
        return self.record.current.attempt

    @property
    def preemptions(self) -> int:
        """Kueue preemptions so far, across attempts (from Kueue's cumulative counters)."""
        return sum(1 for t in self._history if t.status.state is RunState.PREEMPTED)

    @property
    def counters(self) -> RunCounters:
        """Preemptions across attempts; disruptions and user restarts of the current attempt
        (JobSet's counters restart with each attempt); resubmissions."""
        current = self._tracker.counters
        return replace(current, preemptions=self.preemptions, resubmissions=self.attempt - 1)

    @property
    def dispatched_to(self) -> str | None:
        """The MultiKueue worker cluster running the current attempt, read from its Workload's
        `status.clusterName` (None: it runs here, or no worker has admitted it yet)."""
        self.state  # noqa: B018 - reads the cluster's objects into the tracker
        return self._tracker.dispatched_to

    def wait(
        self, timeout: float | None = None, progress: bool | ProgressCallback = False
    ) -> RunStatus:
        """Follow the run until it is final (resubmitting under its RetryPolicy)."""
        return self._backend.wait_all([self], timeout, progress)[0]

    def _follow_wait(
        self, timeout: float | None, progress: ProgressCallback, stop: threading.Event
    ) -> RunStatus:
        return self._backend.wait_all([self], timeout, progress, stop=stop)[0]

    def _follow_logs(self, stop: threading.Event) -> Iterator[str]:
        return self._backend.logs(self, True, stop=stop)

    def logs(self, follow: bool = False) -> Iterator[str]:
        """Log lines of every pod of the current attempt, prefixed by node rank."""
        return self._backend.logs(self, follow)

    def worker_logs(self, worker: KubernetesSettings, follow: bool = False) -> Iterator[str]:
        """Log lines of the current attempt's pods on the MultiKueue worker it was dispatched
        to (`dispatched_to`); `worker` reaches that cluster (e.g. its kubeconfig context).
        MultiKueue copies the job with its labels, so the pods are found as here."""
        # A backend of the same kind, on the worker cluster.
        return type(self._backend)(worker).logs(self, follow)

    def explain(self) -> Explanation:
        """Why the run is where it is, read from its job, Workload, pods, events and queues.

        Example:
            >>> print(Client().get_run("llama-ft").explain())  # doctest: +SKIP
            Queued 1st in team-a: cluster queue acc-cq uses 16 of 16 nvidia.com/gpu ...
        """
        if self.record.cancelled:
            return Explanation(Category.CANCELLED, f"Cancelled through gkeml: {CANCELLED.message}.")
        return explain(self._backend.kube, self)

    def cancel(self) -> None:
        """Delete every attempt's objects (and so their pods); the run ends CANCELLED."""
        self._backend.mark_cancelled(self)
        # Every attempt labelled with this run, also one another client made after our read.
        self._backend.attempts.delete_run(self.record)
        self._append(CANCELLED, time.time())

    # -- driven by the backend ---------------------------------------------------------

    def object_name(self) -> str:
        """Name of the current attempt's Job/JobSet."""
        return self.record.current.name

    def pod_selector(self) -> str:
        """Label selector of the current attempt's pods."""
        return f"{RUN_ID_LABEL}={self.name},{ATTEMPT_LABEL}={self.attempt}"

    def observe(self, event: Event, now: float) -> None:
        """Feed one watched object to the current attempt's tracker."""
        kind = "MODIFIED" if event.type == "SYNCED" else event.type
        self._tracker.observe(event.kind, kind, event.obj, now - self.record.submitted_at)
        self._collect(now)

    def adopt(self, record: RunRecord) -> None:
        """Take a record whose current attempt was just created (its uid now known)."""
        fresh = record.current.uid != self.record.current.uid
        self.record = record
        if fresh and not self._tracker.history:
            self._tracker = self._new_tracker()
        if record.cancelled:
            self._append(CANCELLED, time.time())

    def seen_job(self) -> bool:
        """True once the current attempt's Job/JobSet was observed, by this client or (per the
        run record) by an earlier one."""
        return bool(self._tracker.history) or any(t.attempt == self.attempt for t in self._history)

    def done(self) -> bool:
        """True once the run is final: no attempt running and none scheduled."""
        if self.record.cancelled or self._recorded_end is not None:
            return True
        return self._tracker.status.terminal and self._resubmit_at is None

    def seconds_to_next_action(self, now: float) -> float:
        """Time until a scheduled resubmission (infinite when none)."""
        return float("inf") if self._resubmit_at is None else max(0.0, self._resubmit_at - now)

    def act(self, now: float) -> None:
        """Resubmit when a scheduled resubmission is due."""
        if self._resubmit_at is None or now < self._resubmit_at:
            return
        self._resubmit_at = None
        # Another client (or thread) may have cancelled the run during the backoff.
        if not self._backend.cancelled_elsewhere(self):
            self._resubmit(now)

    # -- internals ---------------------------------------------------------------------

    def _status(self) -> RunStatus:
        if self.record.cancelled:
            return CANCELLED
        if self._recorded_end is not None:
            return self._recorded_end
        status = self._tracker.status
        if self._resubmit_at is not None:
            wait = max(0.0, self._resubmit_at - time.time())
            note = f"; resubmitting as attempt {self.attempt + 1} in {wait:.0f}s"
            return replace(status, message=status.message + note)
        return status

    def _final_from_record(self) -> RunStatus | None:
        # A run another client saw end needs no watching, unless that end is an
        # infrastructure loss still owed a resubmission (the client died before making it).
        mine = [t for t in self._history if t.attempt == self.attempt]
        if not self.record.current.outcome or not mine or not mine[-1].status.terminal:
            return None
        end = mine[-1].status
        policy = self.record.retry
        owed = policy is not None and resubmittable(end) and self.attempt - 1 < policy.max_resubmits
        return None if owed else end

    def _new_tracker(self) -> StatusTracker:
        kind = "JobSet" if self.record.job.uses_jobset else "Job"
        current = self.record.current
        return StatusTracker(
            self.attempt, job_name=current.name, job_kind=kind, job_uid=current.uid
        )

    def note_queue_position(self, pending_workloads: dict[str, Any], now: float) -> None:
        """Feed Kueue's visibility-API answer so a QUEUED status says where the run waits."""
        status = self._tracker.observe_pending_workloads(pending_workloads)
        self._append(status, now)

    def _collect(self, now: float) -> None:
        fresh = self._tracker.history[self._seen :]
        self._seen = len(self._tracker.history)
        for transition in fresh:
            self._append(transition.status, now, transition.detail, transition.at)
        if fresh and self._tracker.status.state is RunState.QUEUED:
            self._backend.queue_position(self, now)
        if fresh and self._tracker.status.terminal:
            self._on_terminal(now)

    def _append(self, status: RunStatus, now: float, detail: str = "", at: float = -1) -> None:
        when = at if at >= 0 else now - self.record.submitted_at
        last = self._history[-1] if self._history else None
        if last and (last.attempt, last.status) == (self.attempt, status):
            return
        self._history.append(Transition(status, self.attempt, when, detail))
        self.record = replace(self.record, history=tuple(self._history))
        self._backend.save(self.record)
        self._backend.report(self, status)

    def _on_terminal(self, now: float) -> None:
        status = self._tracker.status
        current = replace(self.record.current, outcome=status.state.value)
        self.record = self.record.with_attempt(current)
        policy = self.record.retry
        resubmits = self.attempt - 1
        if (
            policy is None
            or not self._tracker.is_resubmittable()
            or resubmits >= policy.max_resubmits
            or self.record.cancelled
        ):
            self._backend.save(self.record)
            return
        self._resubmit_at = now + policy.delay(resubmits + 1)
        log.info("run %s: %s; resubmitting after backoff", self.name, status)
        self._backend.save(self.record)

    def _resubmit(self, now: float) -> None:
        policy = self.record.retry
        assert policy is not None
        losses = self._spot_losses()
        spot = self.record.job.spot and not policy.wants_on_demand(losses)
        number = self.attempt + 1
        attempt = AttemptRecord(number, attempt_name(self.name, number), spot)
        # Record the decision before creating: a client that dies in between is resumed by
        # the next one, which creates the same deterministic name (never a second attempt).
        self.record = self.record.with_attempt(attempt)
        self._backend.save(self.record)
        self.record = self._backend.create_attempt(self.record, attempt)
        self._tracker = self._new_tracker()
        self._seen = 0
        if self.record.cancelled:  # cancelled by another client while we created it
            self._append(CANCELLED, now)
            return
        detail = "on-demand (Spot fallback)" if self.record.job.spot and not spot else ""
        self._append(
            RunStatus(RunState.PENDING, "Resubmitted", f"attempt {number} created"), now, detail
        )

    def _spot_losses(self) -> int:
        # Every attempt lost to infrastructure plus every preemption or disruption seen.
        lost = sum(1 for a in self.record.attempts if a.outcome == RunState.FAILED.value)
        return lost + self.preemptions + self._tracker.counters.disruptions
