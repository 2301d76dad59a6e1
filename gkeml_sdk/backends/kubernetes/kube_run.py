"""`KubeRun`: the handle on one logical run on the cluster across its attempts. It reads (the
record, the current attempt's Kueue/JobSet status) and asks (cancel, wait); it writes no
history. Whoever acts for the run (the run controller, or with none alive the client that
waits) does that through the run's `RunLifecycle`."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from gkeml_sdk.backends.kubernetes.controller.lifecycle import run_counters
from gkeml_sdk.backends.kubernetes.diagnosis import explain
from gkeml_sdk.backends.kubernetes.preemptors import name_preemptors
from gkeml_sdk.backends.kubernetes.run_record import RunRecord
from gkeml_sdk.backends.kubernetes.submissions import submission_of
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
from gkeml_sdk.runs.history import merge
from gkeml_sdk.runs.status import StatusTracker, deleted, resubmittable

if TYPE_CHECKING:
    from gkeml_sdk.backends.kubernetes.cluster_backend import KubernetesBackend
    from gkeml_sdk.backends.kubernetes.config import KubernetesSettings
    from gkeml_sdk.backends.kubernetes.controller.lifecycle import RunLifecycle
    from gkeml_sdk.backends.kubernetes.shared_reads import SharedReads
    from gkeml_sdk.backends.kubernetes.streams import Event

CANCELLED = RunStatus(RunState.CANCELLED, "Cancelled", "cancelled through gkeml")
RESUBMITTED = "Resubmitted"  # the reason of the history note a resubmitter writes first


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
        self.tracker = self._new_tracker()
        self.lifecycle: RunLifecycle | None = None  # set while this process acts for the run
        self._reported = len(record.history)
        self._recorded_end = self._final_from_record()
        self.shared: SharedReads | None = None  # set while a listing feeds this run
        self.read_ahead = False  # a listing read the cluster for the next `state`
        self._looked = False  # this handle read the cluster at least once

    # -- the Run interface -------------------------------------------------------------

    @property
    def state(self) -> RunStatus:
        """The current status, read from the cluster now (the first time for a run that
        `runs()` listed: that listing's read)."""
        if not self.done() and not self.read_ahead:
            self._look()
        self.read_ahead, self._looked = False, True
        return self._status()

    @property
    def history(self) -> list[Transition]:
        """Every transition of every attempt, oldest first: the record's, and what the
        cluster says that the record does not say yet (never written by a reader). A handle
        that has not looked yet reads the cluster once first: a run nobody follows records
        nothing, though its Workload keeps what happened."""
        if not (self._looked or self.read_ahead or self.done()):
            self._look()
        return self._history()

    @property
    def attempt(self) -> int:
        """The current attempt number (1 until a resubmission)."""
        return self.record.current.attempt

    @property
    def preemptions(self) -> int:
        """Kueue preemptions so far, across attempts (Kueue's `schedulingStats` counts)."""
        return self.counters.preemptions

    @property
    def counters(self) -> RunCounters:
        """Counters summed over attempts: finished ones as recorded when they ended, the
        current one from Kueue's and JobSet's status."""
        live = None if self._recorded_end is not None else self.tracker.counters
        return run_counters(self.record, live if self.tracker.history else None)

    @property
    def dispatched_to(self) -> str | None:
        """The MultiKueue worker cluster running the current attempt, read from its Workload's
        `status.clusterName` (None: it runs here, or no worker has admitted it yet)."""
        self.state  # noqa: B018 - reads the cluster's objects into the tracker
        return self.tracker.dispatched_to

    def wait(
        self, timeout: float | None = None, progress: bool | ProgressCallback = False
    ) -> RunStatus:
        """Follow the run until it is final; with no live controller in the namespace this
        client resubmits under the run's RetryPolicy itself."""
        return self._backend.wait_all([self], timeout, progress)[0]

    def follow(self, timeout: float | None = None) -> Iterator[str | RunStatus]:
        """`Run.follow`: its wait reads and watches the run, so its history reads nothing
        itself (the stream's reader and the wait's never feed one tracker at once).

        Example:
            >>> for item in Client().get_run("llama-ft").follow(timeout=600):  # doctest: +SKIP
            ...     print(item)
        """
        self._looked = True
        return super().follow(timeout)

    def _follow_wait(
        self, timeout: float | None, progress: ProgressCallback, stop: threading.Event
    ) -> RunStatus:
        return self._backend.wait_all([self], timeout, progress, stop=stop)[0]

    def _follow_logs(self, stop: threading.Event) -> Iterator[str]:
        return self._backend.logs(self, True, stop=stop)

    def logs(self, follow: bool = False, *, by_time: bool = False) -> Iterator[str]:
        """Log lines of every pod of the current attempt, prefixed by node rank; `by_time`:
        merged in time order, each after its time (`Run.logs`)."""
        return self._backend.logs(self, follow, by_time=by_time)

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

    def cancel(self) -> bool:
        """Stop the submission this handle was returned for: True when this call stopped it;
        False when it had already finished (cancelled included, or its name now holds a later
        submission), and then nothing is changed. Everything is written on what was read: the
        record's resourceVersion, the attempt objects' uids.

        Example:
            >>> Client().get_run("llama-ft").cancel()  # doctest: +SKIP
            True
        """
        fresh = self._backend.current_submission(self.record)
        if fresh is None:
            return False  # submitted again since: a name is reused only once its run ended
        self.refresh(fresh)
        if self.ended():
            return False
        note = Transition(
            CANCELLED,
            self.attempt,
            time.time() - self.record.submitted_at,
            key=f"{self.name}/cancelled",
        )
        # What this handle saw and the record does not say yet goes in before the end.
        cancelled = self._backend.mark_cancelled(self.record, [*self.tracker.history, note])
        if cancelled is None:
            return False
        self.record = cancelled
        self._report_new()
        return True

    # -- driven by the backend and the run's lifecycle ---------------------------------

    def object_name(self) -> str:
        """Name of the current attempt's Job/JobSet."""
        return self.record.current.name

    def pod_selector(self) -> str:
        """Label selector of the current attempt's pods."""
        return f"{RUN_ID_LABEL}={self.name},{ATTEMPT_LABEL}={self.attempt}"

    def observe(self, event: Event, now: float) -> bool:
        """Feed one watched object to the current attempt's tracker; True when the run's
        status changed."""
        kind = "MODIFIED" if event.type == "SYNCED" else event.type
        self._looked = True
        before = self.tracker.status
        self.tracker.observe(event.kind, kind, event.obj, now - self.record.submitted_at)
        return self.changed(now) or self.tracker.status != before

    def observe_snapshot(self, job: Any, workloads: list[Any], pods: list[Any], now: float) -> None:
        """Feed one read of the current attempt's objects at once."""
        self._looked = True
        self.tracker.observe_snapshot(job, workloads, pods, now - self.record.submitted_at)
        self.changed(now)

    def changed(self, now: float) -> bool:
        """After the tracker saw something: the lifecycle (if acting) records it; waiting
        callers hear of every new transition; a queued run asks where it waits. True when
        the history has news."""
        before = self._reported
        lost = self.tracker.status.reason == deleted(self.tracker_kind, "").reason
        if lost and not self.record.cancelled and self.shared is None:
            # gkeml's cancel deletes too, and its record may reach us after the deletion (a
            # listing read the cancel markers with the records already).
            self._backend.cancelled_elsewhere(self)
        name_preemptors(self._backend.kube, self.namespace, self.tracker.history, self.shared)
        if self.lifecycle is not None:
            self.lifecycle.on_change(now)
        self._report_new()
        if self._reported > before and self.tracker.status.state is RunState.QUEUED:
            self._backend.queue_position(self, now)
        return self._reported > before

    def refresh(self, record: RunRecord) -> None:
        """Take a record another process wrote (a controller that resubmitted or ended it)."""
        if record.current.attempt != self.attempt or record.current.uid != self.record.current.uid:
            self.start_attempt(record)
            return
        self.record = record
        self._recorded_end = self._final_from_record()
        self._report_new()

    def start_attempt(self, record: RunRecord) -> None:
        """Take a record whose current attempt was just created (its uid now known)."""
        fresh = record.current.uid != self.record.current.uid or record.current.attempt != (
            self.attempt
        )
        self.record = record
        if fresh:
            self.tracker = self._new_tracker()
        self._recorded_end = self._final_from_record()
        self._report_new()

    def seen_job(self) -> bool:
        """True once the current attempt's Job/JobSet was created (its uid recorded) or
        observed, by this client or (per the run record) by whoever acted before."""
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

    def ended(self) -> bool:
        """`done()`, reading the cluster first when the record does not say so: a run nobody
        followed records no end, though its objects tell it.

        Example:
            >>> Client().get_run("llama-ft").ended()  # doctest: +SKIP
            True
        """
        if not self.done():
            self._backend.snapshot(self)
        return self.done()

    def done(self) -> bool:
        """True once the run is final: no attempt running and none to come."""
        if self.record.cancelled or self._recorded_end is not None:
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

    def act(self, now: float) -> None:
        """Resubmit when a scheduled resubmission is due (only while acting)."""
        if self.lifecycle is not None:
            self.lifecycle.act(now)

    def note_queue_position(self, pending_workloads: dict[str, Any], now: float) -> None:
        """Feed Kueue's visibility-API answer so a QUEUED status says where the run waits."""
        self.tracker.observe_pending_workloads(pending_workloads)
        if self.lifecycle is not None:
            self.lifecycle.on_change(now)

    # -- internals ---------------------------------------------------------------------

    def _look(self) -> None:
        self._looked = True  # first: reading reports news, and reporting reads the history
        self._backend.snapshot(self)

    def _status(self) -> RunStatus:
        if self.record.cancelled:
            return CANCELLED
        if self._recorded_end is not None:
            return self._recorded_end
        status = self.tracker.status
        at = None if self.lifecycle is None else self.lifecycle.resubmit_at
        if at is not None:
            wait = max(0.0, at - time.time())
            note = f"; resubmitting as attempt {self.attempt + 1} in {wait:.0f}s"
            return RunStatus(status.state, status.reason, status.message + note, status.cause)
        return status

    def _history(self) -> list[Transition]:
        return list(merge(self.record.history, self.tracker.history))

    def _report_new(self) -> None:
        history = self._history()
        for transition in history[self._reported :]:
            self._backend.report(self, transition.status)
        self._reported = max(self._reported, len(history))

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

    @property
    def tracker_kind(self) -> str:
        """The kind of the run's attempt objects (JobSet or Job)."""
        return "JobSet" if self.record.job.uses_jobset else "Job"

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
