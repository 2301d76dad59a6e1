"""`KubeRunService`: the `RunService` of a cluster. It keeps every per-run state (a `RunTrack`
per submission it follows), reads runs (one submission at a time, or a whole namespace at a
constant number of requests), follows them on the backend's shared streams, cancels them, and
acts for them (creates a recorded attempt, resubmits under a `RetryPolicy`) when no live run
controller does. Handles ask it; it never calls into a handle.

Over 400 lines because it is the one owner of per-run state in a client: the port's verbs, the
wait loop that feeds the tracks and the acting a client does for its runs share that state, and
split apart they would hand tracks back and forth."""

from __future__ import annotations

import heapq
import itertools
import logging
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import replace
from functools import partial
from typing import Any

from gkeml_sdk.backends.kubernetes.api.kube import KubeClient
from gkeml_sdk.backends.kubernetes.api.streams import Event, SharedStreams, deadline
from gkeml_sdk.backends.kubernetes.explain.diagnosis import explain, pending_workloads
from gkeml_sdk.backends.kubernetes.explain.preemptors import name_preemptors
from gkeml_sdk.backends.kubernetes.runs.attempts import Attempts
from gkeml_sdk.backends.kubernetes.runs.following import (
    later_attempt,
    progress_callback,
    stream_specs,
)
from gkeml_sdk.backends.kubernetes.runs.lifecycle import RunLifecycle
from gkeml_sdk.backends.kubernetes.runs.liveness import ControllerWatch
from gkeml_sdk.backends.kubernetes.runs.logs import run_logs
from gkeml_sdk.backends.kubernetes.runs.run_listing import read_listing
from gkeml_sdk.backends.kubernetes.runs.run_record import AttemptRecord, RunRecord
from gkeml_sdk.backends.kubernetes.runs.run_records import RecordConflict, RunRecords
from gkeml_sdk.backends.kubernetes.runs.run_routing import RoutedHub, RunKey, RunRouter, run_of
from gkeml_sdk.backends.kubernetes.runs.snapshots import AttemptObjects, read_attempt
from gkeml_sdk.backends.kubernetes.runs.submission import submit_job
from gkeml_sdk.backends.kubernetes.runs.submissions import delete_submission
from gkeml_sdk.backends.kubernetes.runs.track import CANCELLED, RunTrack
from gkeml_sdk.core.objects import uid
from gkeml_sdk.errors import GkemlError, NotFoundError, RunTimeoutError
from gkeml_sdk.runs.explain.explanation import Category, Explanation
from gkeml_sdk.runs.retry import RetryPolicy
from gkeml_sdk.runs.service import ProgressCallback, RunRef, RunSnapshot
from gkeml_sdk.runs.states import RunState, RunStatus, Transition
from gkeml_sdk.runs.status import deleted
from gkeml_sdk.training.model import TrainingJob

log = logging.getLogger(__name__)
BATCH = 1000  # most runs one pass of a wait feeds before it looks at their news


class KubeRunService:
    """Runs on one cluster, for `Run` handles (see `gkeml_sdk.runs.service.RunService`).

    Example:
        >>> service = KubernetesBackend(KubernetesSettings()).service  # doctest: +SKIP
        >>> service.snapshot(service.find("llama-ft").ref).status.state  # doctest: +SKIP
        <RunState.RUNNING: 'Running'>
    """

    def __init__(
        self,
        kube: KubeClient,
        streams: SharedStreams,
        *,
        namespace: str,
        attempts: Attempts,
        controller: ControllerWatch,
        worker_streams: Callable[[Any], SharedStreams],
    ) -> None:
        self.kube, self.streams, self.namespace = kube, streams, namespace
        self.router = RunRouter(streams)  # what waits follow, routed to each by run
        self.attempts = attempts
        self.records = RunRecords(kube)
        # Whether a run controller acts for a namespace: judged from its Lease's changes.
        self.controller = controller
        self._worker_streams = worker_streams  # the streams of a MultiKueue worker cluster
        self._tracks: dict[RunRef, RunTrack] = {}
        self._unreadable: dict[RunRef, GkemlError] = {}
        self._progress: dict[str, ProgressCallback] = {}
        self._lock = threading.Lock()  # handles may be used from several threads

    # -- the RunService port -----------------------------------------------------------

    def submit(self, job: TrainingJob, retry: RetryPolicy | None) -> RunSnapshot:
        """Record and create attempt 1 of `job` (checked already); idempotent for an
        identical spec."""
        return self._snap(self._keep(RunTrack(submit_job(self, job, retry))))

    def find(self, name: str) -> RunSnapshot:
        """The run called `name` in the namespace, as its record left it (no further read)."""
        found = self.records.find(name, self.namespace)
        if found is None:
            records, unreadable = self.records.listing(self.namespace)
            known = ", ".join([r.name for r in records] + sorted(unreadable)) or "none"
            raise NotFoundError(
                f"run {name!r}",
                status=404,
                reason="NotFound",
                message=f"no gkeml run with that name in namespace {self.namespace!r}",
                hint=f"runs there: {known}",
            )
        return self._snap(self._keep(RunTrack(found)))

    def list_runs(self) -> list[RunSnapshot]:
        """Runs recorded in the namespace, newest first, each with its state read from one
        listing (see `run_listing`); then those whose record cannot be read, UNREADABLE with
        why. The same few paginated lists whatever the number of runs."""
        records, unreadable = self.records.listing(self.namespace)
        tracks = [self._keep(RunTrack(r)) for r in records]
        read_listing(self.kube, tracks)
        for track in tracks:
            if track.shared is not None:
                self._changed(track, time.time())
                track.shared = None
        snaps = [self._snap(t) for t in tracks]
        for name, error in sorted(unreadable.items()):
            ref = RunRef(name, self.namespace)
            self._unreadable[ref] = error
            snaps.append(self._unreadable_snap(ref, error))
        return snaps

    def snapshot(self, ref: RunRef, fresh: bool = True) -> RunSnapshot:
        """The run now: read from the cluster, unless a wait of this service is feeding it
        from its streams or a listing read it for this call; with `fresh=False` only when
        this service never read it."""
        if ref in self._unreadable:
            return self._unreadable_snap(ref, self._unreadable[ref])
        track = self.track(ref)
        skip = track.done() or track.read_ahead or track.followed or (not fresh and track.looked)
        if not skip:
            self.read(track)
        track.read_ahead, track.looked = False, True
        return self._snap(track)

    def wait(
        self,
        refs: Sequence[RunRef],
        timeout: float | None,
        progress: bool | ProgressCallback = False,
        stop: threading.Event | None = None,
    ) -> list[RunStatus]:
        """Follow the runs until each is final (or `stop` is set), through the shared streams,
        one per kind and namespace, each event routed to its own run: neither the watch
        connections nor the requests grow with the number of runs or of threads waiting at
        once, and the work grows with the runs only linearly."""
        for ref in refs:
            self._refuse_unreadable(ref)
        tracks = [self.track(ref) for ref in refs]
        self._whole([t for t in tracks if not t.done()])
        callback = progress_callback(progress)
        for track in tracks:
            if callback is not None:
                self._progress[track.name] = callback
        left = deadline(timeout)
        for track in tracks:
            track.followed += 1
        try:
            controlled: dict[str, bool] = {}  # the controller's Lease, read once a wait
            for track in tracks:
                self.take_part(track, controlled)
            if not all(t.done() for t in tracks):
                runs = {(t.namespace, t.name) for t in tracks}
                with RoutedHub(self.router, stream_specs(tracks), runs) as hub:
                    self._drain(hub, tracks, left, stop)
        finally:
            for track in tracks:
                track.followed -= 1
                self._progress.pop(track.name, None)
        return [t.status() for t in tracks]

    def logs(
        self,
        ref: RunRef,
        follow: bool = False,
        stop: threading.Event | None = None,
        *,
        by_time: bool = False,
    ) -> Iterator[str]:
        """Pod logs of the current attempt, each line prefixed by its node rank (`by_time`:
        merged in time order, each after its time). Following picks up pods as they start
        (from a watch) and ends once the attempt is final."""
        self._refuse_unreadable(ref)
        return run_logs(self.streams, self.track(ref), follow, stop, by_time=by_time)

    def worker_logs(self, ref: RunRef, worker: Any, follow: bool = False) -> Iterator[str]:
        """Log lines of the current attempt's pods on the MultiKueue worker cluster `worker`
        (its `KubernetesSettings`) reaches. MultiKueue copies the job with its labels, so the
        pods are found as here."""
        self._refuse_unreadable(ref)
        return run_logs(self._worker_streams(worker), self.track(ref), follow)

    def cancel(self, ref: RunRef) -> bool:
        """Stop the submission `ref` names: True when this call stopped it; False when it had
        already finished (cancelled included, or its name now holds a later submission), and
        then nothing is changed. Everything is written on what was read: the record's
        resourceVersion, the attempt objects' uids."""
        self._refuse_unreadable(ref)
        track = self.track(ref)
        fresh = self.current_submission(track.record)
        if fresh is None:
            return False  # submitted again since: a name is reused only once its run ended
        track.refresh(fresh)
        self._report(track)
        if self.ended_track(track):
            return False
        note = Transition(
            CANCELLED,
            track.attempt,
            time.time() - track.record.submitted_at,
            key=f"{track.name}/cancelled",
        )
        # What this process saw and the record does not say yet goes in before the end.
        cancelled = self.records.mark_cancelled(track.record, [*track.tracker.history, note])
        if cancelled is None:
            return False
        delete_submission(self.kube, cancelled)
        track.record = cancelled
        self._report(track)
        return True

    def explain(self, ref: RunRef) -> Explanation:
        """Why the run is where it is, read from its job, Workload, pods, events and queues."""
        self._refuse_unreadable(ref)
        track = self.track(ref)
        if track.record.cancelled:
            return Explanation(Category.CANCELLED, f"Cancelled through gkeml: {CANCELLED.message}.")
        return explain(self.kube, track)

    # -- per-run state -----------------------------------------------------------------

    def track(self, ref: RunRef) -> RunTrack:
        """The state kept for the submission `ref` names (read from its record the first time;
        `NotFoundError` when that submission is gone)."""
        with self._lock:
            track = self._tracks.get(ref)
        if track is not None:
            return track
        found = self.records.find(ref.name, ref.namespace)
        if found is None or ref.submission not in (None, found.submitted_at):
            raise NotFoundError(
                f"run {ref.name!r}",
                status=404,
                reason="NotFound",
                message=f"that submission is no longer recorded in namespace {ref.namespace!r}",
                hint=f"Client().get_run({ref.name!r}) follows the run of that name now",
            )
        return self._keep(RunTrack(found), ref)

    def _whole(self, tracks: list[RunTrack]) -> None:
        """Before acting for runs a listing read (their records without code: `whole`
        False), their records read whole: one GET for one run, the namespace's two paginated
        lists of records (`RunRecords.scan`) for more."""
        listed = [t for t in tracks if not t.record.whole]
        for namespace in sorted({t.namespace for t in listed}):
            here = [t for t in listed if t.namespace == namespace]
            found = {r.name: r for r in self.records.whole(namespace, [t.name for t in here])}
            for track in here:
                fresh = found.get(track.name)
                if fresh is not None and fresh.submitted_at == track.record.submitted_at:
                    track.refresh(fresh)

    def read(self, track: RunTrack, seen: AttemptObjects | None = None) -> None:
        """Read the current objects of a run's attempt into its track (no watch), then react
        as to any news. `seen`: those objects as a cache holds them (the run controller's
        informers), fed instead of reading."""
        if seen is None:
            read_attempt(self.kube, track)
        else:
            track.observe_snapshot(*seen, time.time())
        self._changed(track, time.time())

    def observe(self, track: RunTrack, event: Event, now: float) -> bool:
        """Feed one watched object to `track`; True when the run's status or history moved."""
        moved = track.observe(event, now)
        return self._changed(track, now) or moved

    def ended(self, record: RunRecord) -> bool:
        """Whether the run `record` holds is final, reading the cluster when the record does
        not say so (a run nobody followed records no end, though its objects tell it)."""
        return self.ended_track(RunTrack(record))

    def ended_track(self, track: RunTrack) -> bool:
        """`track.done()`, reading the cluster first when its record does not say so."""
        if not track.done():
            read_attempt(self.kube, track)
        return track.done()

    # -- acting for runs (the lifecycle's writer) --------------------------------------

    def save(self, record: RunRecord) -> RunRecord:
        """Write the run record over the version it was read as and return it as written;
        `RecordConflict` when it changed since (see `RunRecords.save`)."""
        return self.records.save(record)

    def cancel_marked(self, record: RunRecord) -> bool:
        """True when the submission `record` holds was cancelled (its marker exists)."""
        return self.records.cancel_marked(record)

    def current_submission(self, record: RunRecord) -> RunRecord | None:
        """The record of `record`'s run as stored now, when it still holds that submission;
        None when the name was submitted again since, or its record is gone."""
        found = self.records.find(record.name, record.job.namespace)
        return found if found is not None and found.submitted_at == record.submitted_at else None

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

    def take_part(self, track: RunTrack, controlled: dict[str, bool] | None = None) -> None:
        """Before following a run: act for it (create its recorded attempt if missing,
        resubmit under its policy) unless a live run controller in its namespace does
        (`controlled`: what was found for each namespace already, filled as it is asked)."""
        record = track.record
        unrecorded = not (record.cancelled or record.current.outcome) or track.owed_recovery()
        known = {} if controlled is None else controlled
        if track.lifecycle is None and unrecorded and not self._controls(track.namespace, known):
            lifecycle = track.lifecycle = RunLifecycle(self, track)
            if track.tracker.history:  # what this process already read, recorded now
                self.acting(track, lambda: lifecycle.on_change(time.time()))
        if track.lifecycle is not None:
            self.acting(track, track.lifecycle.ensure_attempt)

    def _controls(self, namespace: str, known: dict[str, bool]) -> bool:
        if namespace not in known:
            known[namespace] = self.controller.acts_for(namespace)
        return known[namespace]

    def acting(self, track: RunTrack, act: Callable[[], object]) -> bool:
        """`act()` for `track`; when a write found the record changed by someone else, what
        this process believed is dropped (it acts again only once it finds nobody else
        does) and the record read again. True when `act` said so or the run was re-read."""
        try:
            return bool(act())
        except RecordConflict as exc:
            log.info("run %s: %s; reading it again", track.name, exc)
            track.lifecycle = None
            fresh = self.records.find(track.name, track.namespace)
            if fresh is not None and fresh.submitted_at == track.record.submitted_at:
                track.refresh(fresh)
            return True
        finally:
            self._report(track)

    # -- internals ---------------------------------------------------------------------

    def _keep(self, track: RunTrack, ref: RunRef | None = None) -> RunTrack:
        """Keep `track` as what this service knows of its submission: a record read now
        replaces what an earlier read left (a wait under way keeps following its own)."""
        with self._lock:
            self._tracks[ref or track.ref] = track
        return track

    def _snap(self, track: RunTrack) -> RunSnapshot:
        return RunSnapshot(
            track.ref,
            track.status(),
            tuple(track.history()),
            track.attempt,
            track.counters,
            dispatched_to=track.tracker.dispatched_to,
        )

    @staticmethod
    def _unreadable_snap(ref: RunRef, error: GkemlError) -> RunSnapshot:
        status = RunStatus(RunState.UNREADABLE, "UnreadableRecord", str(error))
        return RunSnapshot(ref, status, history=(), attempt=1)

    def _refuse_unreadable(self, ref: RunRef) -> None:
        error = self._unreadable.get(ref)
        if error is not None:
            raise error

    def _changed(self, track: RunTrack, now: float) -> bool:
        """After the tracker saw something: the lifecycle (if acting) records it; waiting
        callers hear of every new transition; a queued run asks where it waits. True when
        the history has news."""
        before = track.reported
        lost = track.tracker.status.reason == deleted(track.tracker_kind, "").reason
        # gkeml's cancel deletes too, and its record may reach us after the deletion (a
        # listing read the cancel markers with the records already).
        unexplained = lost and not track.record.cancelled and track.shared is None
        if unexplained and self.cancel_marked(track.record):
            track.mark_cancelled()
        name_preemptors(self.kube, track.namespace, track.tracker.history, track.shared)
        if track.lifecycle is not None:
            track.lifecycle.on_change(now)
        self._report(track)
        if track.reported > before and track.tracker.status.state is RunState.QUEUED:
            self._queue_position(track, now)
        return track.reported > before

    def _report(self, track: RunTrack) -> None:
        """Tell a waiting caller's progress callback about each new transition."""
        news = track.news()
        callback = self._progress.get(track.name)
        if callback is not None:
            for transition in news:
                callback(transition.status)

    def _queue_position(self, track: RunTrack, now: float) -> None:
        """Ask Kueue's visibility API (when served and allowed) where a queued run waits
        (once per LocalQueue for the runs of a listing)."""
        ns, queue = track.namespace, track.record.job.queue

        def ask() -> dict[str, Any] | None:
            return pending_workloads(self.kube, ns, queue)

        answer = ask() if track.shared is None else track.shared.once(("pending", ns, queue), ask)
        if answer and answer.get("items"):
            track.tracker.observe_pending_workloads(answer)
            if track.lifecycle is not None:
                track.lifecycle.on_change(now)

    def _drain(
        self, hub: RoutedHub, tracks: list[RunTrack], left: Any, stop: threading.Event | None
    ) -> None:
        # An event goes to the runs it belongs to only (`run_of`), and only runs it moved, or
        # whose time came, are looked at again: following N runs costs O(N), not O(N) an event.
        # With a `stop`, wake every second to notice it (no request is made meanwhile).
        nap = 3600.0 if stop is None else 1.0
        runs: dict[RunKey, list[RunTrack]] = defaultdict(list)
        for track in tracks:
            runs[(track.namespace, track.name)].append(track)
        pending, due = set(tracks), list(tracks)
        read: set[str] = set()  # later attempts whose record was read (see `_feed`)
        timers: list[tuple[float, int, RunTrack]] = []  # (when, tie-break, run) to look again
        order = itertools.count()
        carried: Event | None = None  # the event that ended the last pass, first of the next
        while stop is None or not stop.is_set():
            now = time.time()
            while timers and timers[0][0] <= now:
                due.append(heapq.heappop(timers)[2])
            for track, wait in self._due(dict.fromkeys(due), pending, now):
                heapq.heappush(timers, (now + wait, next(order), track))
            if not pending:
                return
            if left() <= 0:
                states = ", ".join(f"{t.name}: {t.status()}" for t in tracks if t in pending)
                raise RunTimeoutError(f"timed out waiting for {states}")
            wake = timers[0][0] if timers else float("inf")
            event = carried or hub.next(timeout=max(0.0, min(left(), wake - now, nap)))
            stamp, fed, carried = time.time(), dict[RunTrack, None](), None
            # The events already queued go in together, and each run they moved is told once:
            # the objects a run's streams list at once make one record write, not one each.
            # A pass takes at most BATCH runs; the events of runs it took still go in it. The
            # first pass lasts until every stream listed: a run's objects of all kinds go in
            # together, so its first read makes one record write whichever stream listed first.
            while event is not None:
                mine = [t for run in run_of(event) for t in runs.get(run, ()) if t in pending]
                if len(fed) >= BATCH and any(t not in fed for t in mine):
                    carried = event
                    break
                for track in mine:
                    self._feed(hub, track, event, stamp, read)
                    fed[track] = None
                event = hub.next(0.0 if hub.listed else max(0.0, min(left(), nap)))
            for track in fed:
                self.acting(track, partial(self._changed, track, stamp))
            due = list(fed)

    def _feed(
        self, hub: RoutedHub, track: RunTrack, event: Event, now: float, read: set[str]
    ) -> None:
        """One routed event to its run's tracker. Where someone else acts (a run controller),
        the attempt objects also tell what it did: a later attempt than the track holds is
        read from the record that reserved it (once per object: `read`, their uids), and an
        ended attempt's deletion is a cancel when its marker says so."""
        if track.lifecycle is None and event.kind == track.tracker_kind:
            if event.type == "DELETED":
                ended = track.tracker.status.terminal and not track.record.cancelled
                if ended and self.cancel_marked(track.record):
                    track.mark_cancelled()
            elif later_attempt(track.attempt, event.obj) and uid(event.obj) not in read:
                read.add(uid(event.obj))
                fresh = self.current_submission(track.record)
                if fresh is not None:
                    track.refresh(fresh)
                    for seen in hub.objects((track.namespace, track.name)):
                        track.observe(seen, now)
        track.observe(event, now)

    def _due(
        self, tracks: Iterable[RunTrack], pending: set[RunTrack], now: float
    ) -> list[tuple[RunTrack, float]]:
        """Act for those of `tracks` that are due; the ones ended leave `pending`. Returns
        the others with the seconds until they are to be looked at again (when ever)."""
        again = []
        for track in tracks:
            if track not in pending:
                continue
            if track.lifecycle is None and track.owed_recovery():
                self.acting(track, partial(self._take_over, track, now))  # its controller is gone
            lifecycle = track.lifecycle
            if lifecycle is not None:
                self.acting(track, partial(lifecycle.act, now))
            if track.done():
                pending.discard(track)
                continue
            wait = track.seconds_to_next_action(now)
            if track.lifecycle is None and track.owed_recovery():
                wait = min(wait, 1.0)  # a follower looks every second for whoever resubmits
            if wait < float("inf"):
                again.append((track, wait))
        return again

    def _take_over(self, track: RunTrack, now: float) -> None:
        if not self.controller.acts_for(track.namespace):
            track.lifecycle = RunLifecycle(self, track)
            track.lifecycle.on_change(now)
