"""`KubernetesBackend`: submit, follow, resubmit, cancel and list runs on a cluster."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from functools import partial
from typing import TYPE_CHECKING, Any

from gkeml_sdk.backends.kubernetes.attempts import Attempts
from gkeml_sdk.backends.kubernetes.config import KubernetesSettings, connect
from gkeml_sdk.backends.kubernetes.controller.lifecycle import RunLifecycle
from gkeml_sdk.backends.kubernetes.controller.liveness import ControllerWatch
from gkeml_sdk.backends.kubernetes.diagnosis import pending_workloads, preview_job
from gkeml_sdk.backends.kubernetes.following import progress_callback, stream_specs
from gkeml_sdk.backends.kubernetes.kube import KubeClient
from gkeml_sdk.backends.kubernetes.kube_run import KubeRun
from gkeml_sdk.backends.kubernetes.logs import run_logs
from gkeml_sdk.backends.kubernetes.preflight import Preflight
from gkeml_sdk.backends.kubernetes.run_listing import list_runs
from gkeml_sdk.backends.kubernetes.run_record import (
    AttemptRecord,
    RunRecord,
    record_name,
)
from gkeml_sdk.backends.kubernetes.run_records import RecordConflict, RunRecords
from gkeml_sdk.backends.kubernetes.snapshots import read_attempt
from gkeml_sdk.backends.kubernetes.streams import Event, SharedStreams, StreamHub, deadline
from gkeml_sdk.backends.kubernetes.submission import submit_job
from gkeml_sdk.backends.kubernetes.submissions import delete_submission
from gkeml_sdk.backends.kubernetes.transport import Transport
from gkeml_sdk.errors import GkemlError, NotFoundError, RunTimeoutError
from gkeml_sdk.runs.handle import ProgressCallback, Run, RunStatus, Transition
from gkeml_sdk.runs.retry import RetryPolicy
from gkeml_sdk.training.model import TrainingJob

if TYPE_CHECKING:
    from gkeml_sdk.backends.kubernetes.serve_handle import ServeHandle
    from gkeml_sdk.runs.explain.explanation import Preview
    from gkeml_sdk.serving.model import ServeModel

log = logging.getLogger(__name__)


class KubernetesBackend:
    """The `Client(kubernetes=KubernetesSettings(...))` implementation.

    Example:
        >>> backend = KubernetesBackend(KubernetesSettings(namespace="ml"))  # doctest: +SKIP
    """

    def __init__(self, settings: KubernetesSettings | None = None) -> None:
        settings = settings or KubernetesSettings()
        api, default_namespace = connect(
            kubeconfig=settings.kubeconfig, context=settings.context, api_client=settings.api_client
        )
        self.namespace = settings.namespace or default_namespace
        self.transport = Transport(
            api, api_retry=settings.api_retry, request_timeout=settings.request_timeout
        )
        self.kube = KubeClient(self.transport)
        self.preflight = Preflight(self.kube)
        self.attempts = Attempts(self.kube, deletion_timeout=settings.deletion_timeout)
        self.records = RunRecords(self.kube)
        # Whether a run controller acts for a namespace: judged from its Lease's changes.
        self.controller = ControllerWatch(self.kube, settings.controller_namespace)
        # One stream per kind and namespace for every wait, log follower and controller of
        # this backend, whatever thread follows it.
        self.streams = SharedStreams(self.kube, watch_seconds=settings.watch_seconds)
        self._progress: dict[str, ProgressCallback] = {}

    def submit(self, job: TrainingJob, retry: RetryPolicy | None) -> KubeRun:
        """Check, record and create attempt 1 of `job`; idempotent for an identical spec."""
        if "namespace" not in job.model_fields_set:
            job = job.with_changes(namespace=self.namespace)
        self.preflight.check(job)
        return submit_job(self, job, retry)

    def runs(self) -> list[Run]:
        """Runs recorded in the namespace, newest first, each with its state read; then those
        whose record cannot be read, listed as UNREADABLE with why. The same few paginated
        lists whatever the number of runs (see `run_listing`)."""
        return list_runs(self, self.namespace)

    def get_run(self, name: str) -> KubeRun:
        """The run called `name` in the namespace, resumed where its record left it."""
        found = self.records.find(name, self.namespace)
        if found is None:
            records, unreadable = self.records.scan(self.namespace)
            known = ", ".join([r.name for r in records] + sorted(unreadable)) or "none"
            raise NotFoundError(
                f"run {name!r}",
                status=404,
                reason="NotFound",
                message=f"no gkeml run with that name in namespace {self.namespace!r}",
                hint=f"runs there: {known}",
            )
        return self.resume(found)

    def wait_all(
        self,
        runs: list[Run],
        timeout: float | None,
        progress: bool | ProgressCallback = False,
        stop: threading.Event | None = None,
    ) -> list[RunStatus]:
        """Follow `runs` until each is final (or `stop` is set), through the backend's shared
        streams, one per kind and namespace: the watch connections grow neither with the
        number of runs nor with the number of threads waiting at once."""
        kube_runs = [r for r in runs if isinstance(r, KubeRun)]
        callback = progress_callback(progress)
        for run in kube_runs:
            if callback is not None:
                self._progress[run.name] = callback
        left = deadline(timeout)
        for run in kube_runs:
            self.take_part(run)
        try:
            if not all(r.done() for r in kube_runs):
                with StreamHub(self.streams, stream_specs(kube_runs)) as hub:
                    self._drain(hub, kube_runs, left, stop)
        finally:
            for run in kube_runs:
                self._progress.pop(run.name, None)
        return [r.state for r in kube_runs]

    @property
    def watch_connections(self) -> int:
        """Watch connections opened so far by this backend's streams (for diagnostics)."""
        return self.streams.connections

    def preview(self, job: TrainingJob) -> Preview:
        """What Kueue would do with `job` now, from one read of its queues (submits nothing)."""
        return preview_job(self.kube, job, self.namespace)

    def save(self, record: RunRecord) -> RunRecord:
        """Write the run record over the version it was read as and return it as written;
        `RecordConflict` when it changed since (see `RunRecords.save`)."""
        return self.records.save(record)

    def serve(self, svc: ServeModel) -> ServeHandle:
        """Apply a model server's objects and return its handle (see `cluster.serving`)."""
        from gkeml_sdk.backends.kubernetes.serve_handle import serve

        return serve(self, svc)

    def current_submission(self, record: RunRecord) -> RunRecord | None:
        """The record of `record`'s run as stored now, when it still holds that submission;
        None when the name was submitted again since, or its record is gone."""
        found = self.records.find(record.name, record.job.namespace)
        return found if found is not None and found.submitted_at == record.submitted_at else None

    def mark_cancelled(self, record: RunRecord, notes: list[Transition]) -> RunRecord | None:
        """Cancel the submission `record` holds: its cancel marker, its record (conditional
        writes, see `RunRecords.mark_cancelled`), then its attempt objects, each deleted on
        its uid. None when nothing was done (another submission holds the name now)."""
        cancelled = self.records.mark_cancelled(record, notes)
        if cancelled is not None:
            delete_submission(self.kube, cancelled)
        return cancelled

    def cancelled_elsewhere(self, run: KubeRun) -> bool:
        """True when the run was cancelled, by this client or any other."""
        if self.records.cancel_marked(run.record):
            run.record = replace(run.record, cancelled=True)
        return run.record.cancelled

    def create_attempt(self, record: RunRecord, attempt: AttemptRecord) -> RunRecord:
        """Create one attempt's objects; returns the record with the attempt's uid saved.
        A cancellation that landed meanwhile, from any client, deletes what was just made."""
        created = self.attempts.create(record, attempt)
        assert created is not None  # adopting: a taken name is this attempt's or refused
        try:
            record = self.save(record.with_attempt(created))
        except RecordConflict:
            # Someone wrote the record meanwhile, maybe a cancel: then what was just made goes.
            if self.records.cancel_marked(record):
                self.attempts.delete_run(record.with_attempt(created))
            raise
        if self.records.cancel_marked(record):
            delete_submission(self.kube, record)  # this submission's objects, on their uids
            record = replace(record, cancelled=True)
        return record

    def resume(self, record: RunRecord) -> KubeRun:
        """A handle on a recorded run (reads only; `wait` acts when nobody else does)."""
        return KubeRun(self, record)

    def take_part(self, run: KubeRun) -> None:
        """Before following `run`: act for it (create its recorded attempt if missing, resubmit
        under its policy) unless a live run controller in its namespace does."""
        record = run.record
        unrecorded = not (record.cancelled or record.current.outcome) or run.owed_recovery()
        if run.lifecycle is None and unrecorded and not self.controller.acts_for(run.namespace):
            lifecycle = run.lifecycle = RunLifecycle(self, run)
            if run.tracker.history:  # what this handle already read, recorded now
                self._acting(run, lambda: lifecycle.on_change(time.time()))
        if run.lifecycle is not None:
            self._acting(run, run.lifecycle.ensure_attempt)

    def snapshot(self, run: KubeRun) -> None:
        """Feed the current objects of a run's attempt to its tracker (reads only, no watch)."""
        read_attempt(self.kube, run)

    def queue_position(self, run: KubeRun, now: float) -> None:
        """Ask Kueue's visibility API (when served and allowed) where a queued run waits
        (once per LocalQueue for the runs of a listing)."""
        ns, queue = run.namespace, run.record.job.queue

        def ask() -> dict[str, Any] | None:
            return pending_workloads(self.kube, ns, queue)

        answer = ask() if run.shared is None else run.shared.once(("pending", ns, queue), ask)
        if answer and answer.get("items"):
            run.note_queue_position(answer, now)

    def report(self, run: KubeRun, status: RunStatus) -> None:
        """Tell a waiting caller's progress callback about a transition."""
        callback = self._progress.get(run.name)
        if callback is not None:
            callback(status)

    def logs(
        self,
        run: KubeRun,
        follow: bool,
        stop: threading.Event | None = None,
        *,
        by_time: bool = False,
    ) -> Iterator[str]:
        """Pod logs of the current attempt, each line prefixed by its node rank (`by_time`:
        merged in time order, each after its time). Following picks up pods as they start
        (from a watch) and ends once the attempt is final."""
        return run_logs(self.streams, run, follow, stop, by_time=by_time)

    def _drain(
        self, hub: StreamHub, runs: list[KubeRun], left: Any, stop: threading.Event | None
    ) -> None:
        # With a `stop`, wake every second to notice it (no request is made meanwhile).
        nap = 3600.0 if stop is None else 1.0
        changed, pending, wake = True, runs, 0.0
        while stop is None or not stop.is_set():
            now = time.time()
            if changed or now >= wake:  # only then can a run be due or done
                pending, wake = self._due(pending, now)
                if not pending:
                    return
                changed = False
            if left() <= 0:
                states = ", ".join(f"{r.name}: {r._status()}" for r in pending)
                raise RunTimeoutError(f"timed out waiting for {states}")
            event = hub.next(timeout=max(0.0, min(left(), wake - now, nap)))
            if event is None:
                continue
            stamp = time.time()
            if event.kind == "ConfigMap":
                changed = self._record_changed(pending, event)
                continue
            namespace = event.obj.get("metadata", {}).get("namespace")
            for run in pending:
                if namespace in (None, run.namespace):
                    changed = self._acting(run, partial(run.observe, event, stamp)) or changed

    def _due(self, runs: list[KubeRun], now: float) -> tuple[list[KubeRun], float]:
        """Act for the runs that are due; those still pending and when to look again."""
        for run in runs:
            if run.lifecycle is None and run.owed_recovery():
                self._acting(run, partial(self._take_over, run, now))  # its controller is gone
            self._acting(run, partial(run.act, now))
        pending = [r for r in runs if not r.done()]
        waits = [r.seconds_to_next_action(now) for r in pending]
        # A follower of a run owed a recovery looks every second for whoever makes it.
        waits += [1.0 for r in pending if r.lifecycle is None and r.owed_recovery()]
        return pending, now + min(waits, default=float("inf"))

    def _take_over(self, run: KubeRun, now: float) -> None:
        if not self.controller.acts_for(run.namespace):
            run.lifecycle = RunLifecycle(self, run)
            run.lifecycle.on_change(now)

    def _acting(self, run: KubeRun, act: Callable[[], object]) -> bool:
        """`act()` for `run`; when a write found the record changed by someone else, what
        this client believed is dropped (it acts again only once it finds nobody else
        does) and the record read again. True when `act` said so or the run was re-read."""
        try:
            return bool(act())
        except RecordConflict as exc:
            log.info("run %s: %s; reading it again", run.name, exc)
            run.lifecycle = None
            fresh = self.records.find(run.name, run.namespace)
            if fresh is not None and fresh.submitted_at == run.record.submitted_at:
                run.refresh(fresh)
            return True

    def _record_changed(self, runs: list[KubeRun], event: Event) -> bool:
        name = event.obj["metadata"]["name"]
        for run in runs:
            if run.lifecycle is None and record_name(run.name) == name and event.type != "DELETED":
                try:
                    run.refresh(self.records.read(event.obj))
                    return True
                except GkemlError as exc:  # a record we cannot read tells nothing new
                    log.warning("run %s: record not readable: %s", run.name, exc)
        return False
