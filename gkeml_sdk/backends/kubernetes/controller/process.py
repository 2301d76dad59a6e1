"""`RunController`: reconciles every gkeml run in its namespaces and applies each run's
RetryPolicy, with nobody following the runs.

It acts only while it leads: it holds the one Lease `gkeml-run-controller` in its own
namespace, renewed from its own thread, and its client checks right before every request
that writes that the last renewal is younger than the renew deadline (`KubeClient.guard`).
A process paused past that check cannot do harm either, because every write carries its own
precondition: record saves the resourceVersion read, deletes the uid read, and an attempt is
created only under a name a record save reserved (a late create of an old name collides).

It reconciles from a cache (`RunCache`): one list+watch per kind and namespace (records,
cancel markers, JobSets, Jobs, Workloads, pods), shared by every run; a run's turn comes when
one of its objects changes, and the periodic resync (every `resync` seconds) replays the cache
without reading anything from the API server. After its own write a turn holds the object the
write returned, not the cache's older copy; a conflict (409) reads the record again.

Each run is worked on by a bounded pool (`RunQueue`), one turn at a time per run, so one slow
or stuck run delays no other; what goes wrong for one run (a conflict, an API error, damaged
data) is caught for that run alone.

Over 400 lines because the loop that routes changes, the resync and each run's turn share the
controller's per-run state (runs, inbox, due times, refusals) under one lock; split apart they
would hand that state back and forth."""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
import uuid
from collections.abc import Callable, Hashable, Sequence
from functools import partial

from gkeml_sdk.backends.kubernetes.api.kube import KubeClient
from gkeml_sdk.backends.kubernetes.api.lease import LeaderElector, LeaseLost, LeaseTiming
from gkeml_sdk.backends.kubernetes.api.streams import Event
from gkeml_sdk.backends.kubernetes.backend import KubernetesBackend
from gkeml_sdk.backends.kubernetes.controller.cache import Change, RunCache
from gkeml_sdk.backends.kubernetes.controller.rollouts import RolloutDriver
from gkeml_sdk.backends.kubernetes.controller.vouch import Vouchers
from gkeml_sdk.backends.kubernetes.controller.workqueue import RunQueue
from gkeml_sdk.backends.kubernetes.runs.attempts import job_resource, strays
from gkeml_sdk.backends.kubernetes.runs.lifecycle import RunLifecycle
from gkeml_sdk.backends.kubernetes.runs.liveness import (
    CONTROLLER_NAMESPACE,
    LEASE_NAME,
    MANAGED_ANNOTATION,
    ROLLOUTS_ANNOTATION,
)
from gkeml_sdk.backends.kubernetes.runs.run_record import RunRecord
from gkeml_sdk.backends.kubernetes.runs.run_records import RecordConflict
from gkeml_sdk.backends.kubernetes.runs.snapshots import is_this_attempt
from gkeml_sdk.backends.kubernetes.runs.track import RunTrack
from gkeml_sdk.core.objects import Obj, uid
from gkeml_sdk.errors import ClusterError, GkemlError

log = logging.getLogger(__name__)
Key = tuple[str, str]  # (namespace, run name)


class RunController:
    """One candidate controller for `namespaces`.

    Example:
        >>> controller = RunController(KubernetesBackend(), ["ml"])  # doctest: +SKIP
        >>> controller.reconcile_once()  # doctest: +SKIP
        {'ml': True}
    """

    def __init__(
        self,
        backend: KubernetesBackend,
        namespaces: Sequence[str],
        *,
        identity: str | None = None,
        controller_namespace: str = CONTROLLER_NAMESPACE,
        interval: float = 2.0,
        resync: float = 60.0,
        lease: LeaseTiming | None = None,
        workers: int = 4,
        rollouts: bool = True,
        clock: Callable[[], float] = time.monotonic,
        wall: Callable[[], float] = time.time,
    ) -> None:
        self.backend = backend
        self.identity = identity or f"{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:6]}"
        self.namespaces = list(dict.fromkeys(namespaces))
        self.interval = interval  # between Lease renewals
        self.resync = resync  # between replays of the cache to every run (no request)
        self.resyncs = 0  # replays made by `run()` (for diagnostics)
        # The Lease is written by its own client: the guard below is for everything else.
        self.elector = LeaderElector(
            KubeClient(backend.transport),
            controller_namespace,
            LEASE_NAME,
            self.identity,
            lease,
            clock,
            annotations={
                MANAGED_ANNOTATION: ",".join(self.namespaces),
                ROLLOUTS_ANNOTATION: "true" if rollouts else "false",
            },
            wall=wall,
        )
        # Called with each write's action after the leading check passed, right before the
        # request is sent (diagnostics; tests pause a leader there).
        self.before_write: Callable[[str], None] = lambda action: None
        backend.kube.guard = self._may_write
        backend.attempts.wait_for_dying = False  # a dying name is looked at again, not waited
        self.runs: dict[Key, RunTrack] = {}
        self.unreadable: dict[str, str] = {}  # record ConfigMap -> why it cannot be read
        self.vouchers = Vouchers(backend.kube)  # acts only for records a submitter vouched for
        self.refused: dict[str, str] = {}  # run -> why acting for it failed (until it changes)
        self._refused_at: dict[Key, str] = {}  # the record version that failed
        self._lock = threading.RLock()
        self._inbox: dict[Key, list[Event]] = {}  # events for each run's next turn
        self._full: set[Key] = set()  # runs whose next turn replays all their objects
        self._due: dict[Key, float] = {}  # runs with a resubmission planned, and when
        self._looked: dict[Key, str] = {}  # record versions whose vouching was read once
        self.cache: RunCache | None = None  # what the turns read (see `RunCache`)
        self.queue = RunQueue(workers, self._turn)
        # Serving rollouts in the same namespaces, under the same Lease and guarded client.
        self.rollouts = (
            RolloutDriver(
                backend,
                self.namespaces,
                leading=lambda: self.leading,
                interval=interval,
                clock=wall,
            )
            if rollouts
            else None
        )
        self._stop = threading.Event()
        self._resync_asked = threading.Event()

    @property
    def leading(self) -> bool:
        """True while this process may act (its last renewal is within the deadline)."""
        return self.elector.leading

    def reconcile_once(self) -> dict[str, bool]:
        """Renew or take the Lease, then (when leading) one pass over every run from one
        paginated list per kind and namespace, waiting until each run's turn is over. Returns
        whether this process led each namespace."""
        if not self.elector.try_acquire_or_renew():
            self._forget()
            return {ns: False for ns in self.namespaces}
        cache = RunCache(self.namespaces)
        for namespace in self.namespaces:
            try:
                cache.load(self.backend.kube, namespace)
            except ClusterError as exc:  # that namespace is looked at again next pass
                log.warning("controller %s: %s: %s", self.identity, namespace, exc)
        self.cache = cache
        self._replay(cache)
        self.queue.join()
        return {ns: self.elector.leading for ns in self.namespaces}

    def run(self, stop: threading.Event | None = None) -> None:
        """Act for the runs until `stop` (or `stop()`): the Lease renewed every `interval`
        on its own thread; while leading, the runs' objects followed on one stream per kind
        and namespace, each change handed to its run's turn, and the cache replayed to every
        run every `resync` seconds (no request). On the way out the turns under way end and
        the Lease is given up, so another controller takes over at once."""
        stop = stop or self._stop
        halt = threading.Event()
        renewer = threading.Thread(target=self._renewing, args=(halt,), daemon=True)
        renewer.start()
        helpers = [renewer]
        if self.rollouts is not None:
            helpers.append(threading.Thread(target=self.rollouts.run, args=(halt,), daemon=True))
            helpers[-1].start()
        cache: RunCache | None = None
        next_resync, led = 0.0, False
        try:
            while not stop.is_set() and not self._stop.is_set():
                if not self.leading:
                    if led:
                        log.warning("controller %s stops acting: Lease not renewed", self.identity)
                        self._forget()
                    led, next_resync = False, 0.0
                    _closed(cache)
                    cache = None
                    stop.wait(min(self.interval, self.elector.timing.retry_seconds))
                    continue
                led = True
                try:
                    if cache is None:
                        # Listed anew on taking the Lease: everything a predecessor wrote
                        # is in the lists.
                        cache = RunCache(self.namespaces)
                        self.cache = cache
                        cache.follow(self.backend.streams)
                    if not cache.wait_synced(self.interval):
                        continue
                    if self._resync_asked.is_set() or time.monotonic() >= next_resync:
                        self._resync_asked.clear()
                        if cache.failed:  # a stream gave up (e.g. 403): all listed again
                            log.warning("controller %s: %s", self.identity, cache.failed)
                            _closed(cache)
                            cache = None
                            stop.wait(self.interval)
                            continue
                        self._replay(cache)
                        next_resync = time.monotonic() + self.resync
                        self.resyncs += 1
                    self._take_changes(cache, min(self.interval, next_resync - time.monotonic()))
                except GkemlError as exc:  # the API server is away: try again soon
                    log.warning("controller %s: %s", self.identity, exc)
                    stop.wait(self.interval)
                except Exception:  # damaged data read outside a run's turn: never an exit
                    log.exception("controller %s: pass failed", self.identity)
                    stop.wait(self.interval)
        finally:
            _closed(cache)
            halt.set()
            for thread in helpers:
                thread.join()
            self.queue.close()
            try:
                self.elector.release()
            except GkemlError as exc:
                log.info("lease %s not released: %s", self.elector.name, exc)

    def stop(self) -> None:
        """Ask `run()` to end after the current pass."""
        self._stop.set()

    def resync_now(self) -> None:
        """Ask `run()` to replay the cache to every run at its next step (as every `resync`
        seconds; `resyncs` counts them)."""
        self._resync_asked.set()

    def _renewing(self, halt: threading.Event) -> None:
        while not halt.is_set():
            self.elector.try_acquire_or_renew()
            halt.wait(self.interval)

    def _may_write(self, action: str) -> None:
        self.elector.fence()  # LeaseLost unless the last renewal is within the deadline
        self.before_write(action)

    def _replay(self, cache: RunCache) -> None:
        """Give every run a full turn from the cache (no request). What changed meanwhile is
        in the cache already, so the changes queued so far are dropped."""
        cache.drain()
        with self._lock:
            keys = set(cache.keys()) | {k for k in self.runs if cache.holds(k[0])}
            self._full.update(keys)
            self._inbox.clear()  # the full turn sees where the events led
        for key in sorted(keys):
            self.queue.add(key)

    def _take_changes(self, cache: RunCache, seconds: float) -> None:
        """Hand what the streams show for `seconds` to the runs' turns, and give a turn to
        each run whose planned resubmission is due; back early when this process stops
        leading. Each change goes to its own run only."""
        end = time.monotonic() + max(0.0, seconds)
        while (left := end - time.monotonic()) > 0 and self.leading:
            with self._lock:
                soonest = min(self._due.values(), default=float("inf"))
            change = cache.next(timeout=min(left, max(0.0, soonest - time.time())))
            if change is not None:
                self._route(change)
            now = time.time()
            with self._lock:
                due = [k for k, at in self._due.items() if at <= now]
                for key in due:
                    del self._due[key]  # set again after its turn if still planned
            for key in due:
                self.queue.add(key)

    def _route(self, change: Change) -> None:
        key, event = change.key, change.event
        if key is None or key[0] not in self.namespaces:
            return
        if event.kind == "ConfigMap":
            if change.record:
                self.queue.add(key)  # the turn compares it with what the run holds
            return
        with self._lock:
            run = self.runs.get(key)
            if run is None and not change.job:
                return  # (a job may vouch for a record refused so far: looked at again)
            if change.job and event.type != "MODIFIED":
                self._full.add(key)  # an object came or went: strays are looked for
            elif run is None or run.done():
                return
            if run is not None and not run.done():
                self._inbox.setdefault(key, []).append(event)
        self.queue.add(key)

    def _turn(self, key: Hashable) -> None:
        """One run's turn on a worker: its record as the cache holds it taken when someone
        else wrote it, the events seen for it, a full look at its objects when asked for,
        then whatever is due. Nothing that goes wrong here leaves this run."""
        assert isinstance(key, tuple)
        cache = self.cache
        if cache is None:
            return
        with self._lock:
            run = self.runs.get(key)
            events = self._inbox.pop(key, [])
            full = key in self._full
            self._full.discard(key)
        watching = cache.watch(key)
        try:
            obj = cache.record(key)
            if obj is None:  # its record was deleted
                self._drop(key, run)
                return
            version = cache.version(key)
            if run is None or (version != run.record.resource_version and not cache.behind(key)):
                if self._refused_at.get(key) == version:
                    return  # refused as it is: looked at again once it changes
                run = self._admit(key, obj, version, run)
                if run is None:
                    return
                events, full = [], True
            self._act(key, run, events, full)
        finally:
            with self._lock:
                held = self.runs.get(key)
                if held is not None and held.lifecycle is not None and not held.done():
                    at = held.lifecycle.resubmit_at
                    if at is not None:
                        self._due[key] = at
            held_version = "" if held is None else held.record.resource_version
            cache.hold(watching, held_version)

    def _act(self, key: Key, run: RunTrack, events: list[Event], full: bool) -> None:
        try:
            for event in events:
                self.backend.service.observe(run, event, time.time())
            if full:
                self._repair(run)
            if not run.done():
                # A recorded attempt not created yet (its creator died, or its name was held
                # by a dying object) is created now: no request when it exists.
                lifecycle = run.lifecycle
                assert lifecycle is not None  # every run this controller keeps has one
                lifecycle.ensure_attempt()
                if full:
                    self._feed(run)
                lifecycle.act(time.time())
        except LeaseLost as exc:
            log.warning("controller %s stops acting: %s", self.identity, exc)
            self._forget()
        except RecordConflict as exc:
            log.info("run %s/%s: %s; reading it again", key[0], key[1], exc)
            self._reread(key, run)
        except ClusterError as exc:
            # The API refused or is away, or the next attempt's name is still held: what this
            # turn believed is dropped, and the next turn starts from the record.
            log.warning("run %s/%s: %s", key[0], key[1], exc)
            self._drop(key, run)
        except Exception as exc:  # damaged data or a bug: this run is refused, no other
            log.exception("run %s/%s refused", key[0], key[1])
            self._drop(key, run)
            with self._lock:
                self.refused[f"{key[0]}/{key[1]}"] = f"{type(exc).__name__}: {exc}"
                self._refused_at[key] = run.record.resource_version

    def _admit(self, key: Key, obj: Obj, version: str, old: RunTrack | None) -> RunTrack | None:
        """The run of the record `obj` (version `version`), resumed from it, when it can be
        read and its submitter vouched for it; else None, with why in `unreadable`. The
        cache judges; a refusal is read from the cluster once per record version, since the
        cache may not show the attempt object that vouches yet."""
        namespace, name = key
        cache = self.cache
        assert cache is not None
        try:
            record = self.backend.records.read(obj, partial(cache.marker, namespace))
            seen = cache.attempts(key, job_resource(record))
            why = self.vouchers.judge_seen(record, namespace, seen)
            if why is not None and self._looked.get(key) != version:
                self._looked[key] = version
                self.vouchers.check(record, namespace)
                why = None
            if why is not None:
                raise why
        except GkemlError as exc:
            with self._lock:
                self.unreadable[f"{namespace}/{name}"] = str(exc)
            self._drop(key, old)
            return None
        with self._lock:
            self.unreadable.pop(f"{namespace}/{name}", None)
            self.refused.pop(f"{namespace}/{name}", None)
            self._refused_at.pop(key, None)
            self._looked.pop(key, None)
            return self._resume(key, record)

    def _resume(self, key: Key, record: RunRecord) -> RunTrack:
        run = RunTrack(record)
        run.lifecycle = RunLifecycle(self.backend.service, run)
        self.runs[key] = run
        return run

    def _drop(self, key: Key, run: RunTrack | None) -> None:
        """Forget what this process believed of `run` (its next turn starts from its record)."""
        with self._lock:
            if self.runs.get(key) is run:
                self.runs.pop(key, None)
                self._due.pop(key, None)

    def _feed(self, run: RunTrack) -> None:
        """The current attempt's objects as the cache holds them, fed to the run. One the
        cache lacks (just created, or gone) is read from the cluster instead: the cache is
        never the reason to believe an attempt lost."""
        assert self.cache is not None
        key = (run.namespace, run.name)
        res = job_resource(run.record)
        job, workloads, pods = self.cache.attempt(key, res, run.object_name(), run.attempt)
        if job is None or not is_this_attempt(run, job):
            self.backend.service.read(run)
        else:
            self.backend.service.read(run, (job, workloads, pods))

    def _repair(self, run: RunTrack) -> None:
        """Delete the run's objects that are no attempt of its record (level-triggered: a
        late write of a replaced leader is undone here), each only as it was seen."""
        assert self.cache is not None
        res = job_resource(run.record)
        found = self.cache.attempts((run.namespace, run.name), res)
        for obj in strays(run.record, found):
            if (obj.get("metadata") or {}).get("deletionTimestamp"):
                continue  # being deleted already
            name = obj["metadata"]["name"]
            log.warning("run %s: deleting %s %s: no attempt of it", run.name, res.kind, name)
            self.backend.kube.delete(res, name, run.namespace, uid=uid(obj))

    def _reread(self, key: Key, stale: RunTrack) -> None:
        """Someone else wrote the record: what this process believed of the run is dropped
        and the record read again (never the same write retried over it)."""
        self._drop(key, stale)
        try:
            record = self.backend.records.find(key[1], key[0])
        except GkemlError as exc:  # away, or no longer readable: the next turn says which
            log.warning("run %s/%s: %s", key[0], key[1], exc)
            return
        if record is None:
            return
        with self._lock:
            if key not in self.runs:
                self._resume(key, record)
                self._full.add(key)
        self.queue.add(key)

    def _forget(self) -> None:
        # Whoever leads next starts from the records, not from what this process believed.
        with self._lock:
            self.runs.clear()
            self._inbox.clear()
            self._full.clear()
            self._due.clear()


def _closed(cache: RunCache | None) -> None:
    if cache is not None:
        cache.close()
