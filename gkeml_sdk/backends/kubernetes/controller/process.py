"""`RunController`: reconciles every gkeml run in its namespaces and applies each run's
RetryPolicy, with nobody following the runs.

It acts only while it leads: it holds the one Lease `gkeml-run-controller` in its own
namespace, renewed from its own thread, and its client checks right before every request
that writes that the last renewal is younger than the renew deadline (`KubeClient.guard`).
A process paused past that check cannot do harm either, because every write carries its own
precondition: record saves the resourceVersion read, deletes the uid read, and an attempt is
created only under a name a record save reserved (a late create of an old name collides).

Each run is worked on by a bounded pool (`RunQueue`), one turn at a time per run, so one slow
or stuck run delays no other; what goes wrong for one run (a conflict, an API error, damaged
data) is caught for that run alone. Between full passes (every `resync` seconds) it follows
the runs through the backend's shared streams."""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
import uuid
from collections.abc import Callable, Hashable, Iterator, Sequence

from gkeml_sdk.backends.kubernetes.api.kube import KubeClient
from gkeml_sdk.backends.kubernetes.api.lease import LeaderElector, LeaseLost, LeaseTiming
from gkeml_sdk.backends.kubernetes.api.streams import Event, StreamHub, StreamSpec
from gkeml_sdk.backends.kubernetes.backend import KubernetesBackend
from gkeml_sdk.backends.kubernetes.controller.vouch import Vouchers
from gkeml_sdk.backends.kubernetes.controller.workqueue import RunQueue
from gkeml_sdk.backends.kubernetes.runs.attempts import JOBS, JOBSETS, job_resource, strays
from gkeml_sdk.backends.kubernetes.runs.following import stream_specs
from gkeml_sdk.backends.kubernetes.runs.lifecycle import RunLifecycle
from gkeml_sdk.backends.kubernetes.runs.liveness import (
    CONTROLLER_NAMESPACE,
    LEASE_NAME,
    MANAGED_ANNOTATION,
)
from gkeml_sdk.backends.kubernetes.runs.run_record import RECORD_LABEL, RunRecord
from gkeml_sdk.backends.kubernetes.runs.run_records import CONFIG_MAPS, RecordConflict
from gkeml_sdk.backends.kubernetes.runs.track import RunTrack
from gkeml_sdk.core.labels import RUN_ID_LABEL
from gkeml_sdk.core.objects import Obj, uid
from gkeml_sdk.errors import ClusterError, GkemlError, NotFoundError

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
        clock: Callable[[], float] = time.monotonic,
        wall: Callable[[], float] = time.time,
    ) -> None:
        self.backend = backend
        self.identity = identity or f"{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:6]}"
        self.namespaces = list(dict.fromkeys(namespaces))
        self.interval = interval  # between Lease renewals
        self.resync = resync  # between full passes over every run (reads each one's objects)
        self.resyncs = 0  # full passes made by `run()` (for diagnostics)
        # The Lease is written by its own client: the guard below is for everything else.
        self.elector = LeaderElector(
            KubeClient(backend.transport),
            controller_namespace,
            LEASE_NAME,
            self.identity,
            lease,
            clock,
            annotations={MANAGED_ANNOTATION: ",".join(self.namespaces)},
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
        self._full: dict[Key, list[Obj]] = {}  # runs to read in full, with their objects
        self.queue = RunQueue(workers, self._turn)
        self._stop = threading.Event()

    @property
    def leading(self) -> bool:
        """True while this process may act (its last renewal is within the deadline)."""
        return self.elector.leading

    def reconcile_once(self) -> dict[str, bool]:
        """Renew or take the Lease, then (when leading) one full pass over every run, waiting
        until each run's turn is over. Returns whether this process led each namespace."""
        if not self.elector.try_acquire_or_renew():
            self._forget()
        elif self._pass():
            self.queue.join()
        return {ns: self.elector.leading for ns in self.namespaces}

    def run(self, stop: threading.Event | None = None) -> None:
        """Act for the runs until `stop` (or `stop()`): the Lease renewed every `interval`
        on its own thread, a full pass every `resync` seconds while leading, and in between
        the runs' objects and records followed on shared streams. On the way out the turns
        under way end and the Lease is given up, so another controller takes over at once."""
        stop = stop or self._stop
        halt = threading.Event()
        renewer = threading.Thread(target=self._renewing, args=(halt,), daemon=True)
        renewer.start()
        hub: StreamHub | None = None
        next_resync, led = 0.0, False
        try:
            while not stop.is_set() and not self._stop.is_set():
                if not self.leading:
                    if led:
                        log.warning("controller %s stops acting: Lease not renewed", self.identity)
                        self._forget()
                    led, next_resync = False, 0.0
                    _closed(hub)
                    hub = None
                    stop.wait(min(self.interval, self.elector.timing.retry_seconds))
                    continue
                led = True
                try:
                    if time.monotonic() >= next_resync:
                        # A pass that could not read a namespace is made again soon.
                        full = self._pass()
                        next_resync = time.monotonic() + (self.resync if full else self.interval)
                        self.resyncs += 1
                    hub = self._follow(hub)
                    self._take_events(hub, min(self.interval, next_resync - time.monotonic()))
                except GkemlError as exc:  # the API server is away: try again next pass
                    log.warning("controller %s: %s", self.identity, exc)
                    stop.wait(self.interval)
                except Exception:  # damaged data read outside a run's turn: never an exit
                    log.exception("controller %s: pass failed", self.identity)
                    stop.wait(self.interval)
        finally:
            _closed(hub)
            halt.set()
            renewer.join()
            self.queue.close()
            try:
                self.elector.release()
            except GkemlError as exc:
                log.info("lease %s not released: %s", self.elector.name, exc)

    def stop(self) -> None:
        """Ask `run()` to end after the current pass."""
        self._stop.set()

    def _renewing(self, halt: threading.Event) -> None:
        while not halt.is_set():
            self.elector.try_acquire_or_renew()
            halt.wait(self.interval)

    def _may_write(self, action: str) -> None:
        self.elector.fence()  # LeaseLost unless the last renewal is within the deadline
        self.before_write(action)

    def _pass(self) -> bool:
        """Read every record and attempt object of the led namespaces and give each run a
        full turn; False when a namespace could not be read (tried again soon)."""
        ok = True
        for namespace in self.namespaces:
            try:
                self._pass_namespace(namespace)
            except ClusterError as exc:
                log.warning("controller %s: %s: %s", self.identity, namespace, exc)
                ok = False
        return ok

    def _pass_namespace(self, namespace: str) -> None:
        records, unreadable = self.backend.records.scan(namespace)
        records = self.vouchers.admit(namespace, records, unreadable)
        objects = self._attempt_objects(namespace)
        with self._lock:
            self.unreadable = {
                k: v for k, v in self.unreadable.items() if not k.startswith(f"{namespace}/")
            }
            self.unreadable.update({f"{namespace}/{n}": str(why) for n, why in unreadable.items()})
            for record in records:
                key = (namespace, record.name)
                if self._refused_at.get(key) == record.resource_version:
                    continue  # refused as it is: looked at again once it changes
                self._refused_at.pop(key, None)
                self.refused.pop(f"{namespace}/{record.name}", None)
                run = self.runs.get(key)
                # A record someone else changed (a cancel, a new submission) is taken as read.
                if run is None or (record != run.record and not self.queue.busy(key)):
                    self._resume(key, record)
                self._full[key] = objects.get(record.name, [])
                self.queue.add(key)
            known = {r.name for r in records}
            for key in [k for k in self.runs if k[0] == namespace and k[1] not in known]:
                del self.runs[key]  # its record was deleted

    def _attempt_objects(self, namespace: str) -> dict[str, list[Obj]]:
        """Every JobSet and Job of a gkeml run in the namespace, by run (two lists)."""
        by_run: dict[str, list[Obj]] = {}
        for res in (JOBSETS, JOBS):
            try:
                found, _ = self.backend.kube.list(res, namespace, label_selector=RUN_ID_LABEL)
            except NotFoundError:  # a kind this cluster does not serve (JobSet not installed)
                continue
            for obj in found:
                run = str(((obj.get("metadata") or {}).get("labels") or {})[RUN_ID_LABEL])
                by_run.setdefault(run, []).append(obj)
        return by_run

    def _resume(self, key: Key, record: RunRecord) -> RunTrack:
        run = self.backend.service.resume(record)
        run.lifecycle = RunLifecycle(self.backend.service, run)
        self.runs[key] = run
        return run

    def _turn(self, key: Hashable) -> None:
        """One run's turn on a worker: the events seen for it, a full read when the pass asked
        for one, then whatever is due. Nothing that goes wrong here leaves this run."""
        assert isinstance(key, tuple)
        with self._lock:
            run = self.runs.get(key)
            events = self._inbox.pop(key, [])
            found = self._full.pop(key, None)
        if run is None:
            return
        try:
            for event in events:
                self.backend.service.observe(run, event, time.time())
            if found is not None:
                self._repair(run, found)
            if not run.done():
                # A recorded attempt not created yet (its creator died, or its name was held
                # by a dying object) is created now: no request when it exists.
                lifecycle = run.lifecycle
                assert lifecycle is not None  # every run this controller keeps has one
                lifecycle.ensure_attempt()
                if found is not None:
                    self.backend.service.read(run)
                lifecycle.act(time.time())
        except LeaseLost as exc:
            log.warning("controller %s stops acting: %s", self.identity, exc)
            self._forget()
        except RecordConflict as exc:
            log.info("run %s/%s: %s; reading it again", key[0], key[1], exc)
            self._reread(key, run)
        except ClusterError as exc:
            # The API refused or is away, or the next attempt's name is still held: what this
            # turn believed is dropped, and the next pass reads the run from its record.
            log.warning("run %s/%s: %s", key[0], key[1], exc)
            with self._lock:
                if self.runs.get(key) is run:
                    del self.runs[key]
        except Exception as exc:  # damaged data or a bug: this run is refused, no other
            log.exception("run %s/%s refused", key[0], key[1])
            with self._lock:
                if self.runs.get(key) is run:
                    del self.runs[key]
                self.refused[f"{key[0]}/{key[1]}"] = f"{type(exc).__name__}: {exc}"
                self._refused_at[key] = run.record.resource_version

    def _repair(self, run: RunTrack, found: list[Obj]) -> None:
        """Delete the run's objects that are no attempt of its record (level-triggered: a
        late write of a replaced leader is undone here), each only as it was read."""
        res = job_resource(run.record)
        for obj in strays(run.record, [o for o in found if o.get("kind") == res.kind]):
            name = obj["metadata"]["name"]
            log.warning("run %s: deleting %s %s: no attempt of it", run.name, res.kind, name)
            self.backend.kube.delete(res, name, run.namespace, uid=uid(obj))

    def _reread(self, key: Key, stale: RunTrack) -> None:
        """Someone else wrote the record: what this process believed of the run is dropped
        and the record read again (never the same write retried over it)."""
        with self._lock:
            if self.runs.get(key) is stale:
                del self.runs[key]
        try:
            record = self.backend.records.find(key[1], key[0])
        except GkemlError as exc:  # away, or no longer readable: the next pass says which
            log.warning("run %s/%s: %s", key[0], key[1], exc)
            return
        if record is None:
            return
        with self._lock:
            if key not in self.runs:
                self._resume(key, record)
                self._full[key] = []
        self.queue.add(key)

    def _follow(self, hub: StreamHub | None) -> StreamHub:
        """The hub of the streams the runs need; a new one joins before the old one leaves,
        so streams in both stay open (and are not listed again)."""
        specs = [StreamSpec(CONFIG_MAPS, ns, f"{RECORD_LABEL}=true") for ns in self.namespaces]
        specs += [s for s in stream_specs([r for _, r in self._live(None)]) if s not in specs]
        if hub is not None and hub.specs == specs and not any(i.failed for i in hub.informers):
            return hub  # (a stream that failed, e.g. on a 403, is opened anew)
        fresh = StreamHub(self.backend.streams, specs).__enter__()
        _closed(hub)
        return fresh

    def _take_events(self, hub: StreamHub, seconds: float) -> None:
        """Hand what the streams show for `seconds` to the runs' turns, and give a turn to
        each run that is due; back early when a new run needs streams of its own, or when
        this process stops leading."""
        end = time.monotonic() + max(0.0, seconds)
        while (left := end - time.monotonic()) > 0 and self.leading:
            now = time.time()
            # A run in its turn now is looked at again after it (no spinning on it meanwhile).
            live = [(k, r) for k, r in self._live(None) if not self.queue.busy(k)]
            due = [r.seconds_to_next_action(now) for _, r in live]
            event = hub.next(timeout=min([left, *due]))
            if event is not None and event.kind == "ConfigMap":
                if self._record_seen(event):
                    return
            elif event is not None:
                namespace = event.obj.get("metadata", {}).get("namespace")
                for key, _ in self._live(namespace):
                    with self._lock:
                        self._inbox.setdefault(key, []).append(event)
                    self.queue.add(key)
            now = time.time()
            for key, run in live:
                if run.seconds_to_next_action(now) <= 0:
                    self.queue.add(key)

    def _record_seen(self, event: Event) -> bool:
        """A run submitted since the last pass (or a finished one's name submitted again) is
        acted for from now (True then). A live run's record changes by this controller's own
        writes: the pass reads those."""
        meta = event.obj["metadata"]
        namespace, labels = meta.get("namespace", ""), meta.get("labels") or {}
        name = str(labels.get(RUN_ID_LABEL) or "")
        key = (namespace, name)
        known = self.runs.get(key)
        if event.type == "DELETED" or not name or (known is not None and not known.done()):
            return False
        if namespace not in self.namespaces:
            return False
        try:
            record = self.backend.records.read(event.obj)
            self.vouchers.check(record, namespace)
        except GkemlError as exc:
            self.unreadable[f"{namespace}/{name}"] = str(exc)
            return False
        if known is not None and known.record.submitted_at == record.submitted_at:
            return False  # the finished run's own record
        with self._lock:
            self._resume(key, record)  # its objects are followed on the streams from now
        self.queue.add(key)
        return True

    def _live(self, namespace: str | None) -> Iterator[tuple[Key, RunTrack]]:
        """The runs not final yet (in `namespace`, or all)."""
        with self._lock:
            runs = list(self.runs.items())
        for key, run in runs:
            if (namespace is None or key[0] == namespace) and not run.done():
                yield key, run

    def _forget(self) -> None:
        # Whoever leads next starts from the records, not from what this process believed.
        with self._lock:
            self.runs.clear()
            self._inbox.clear()
            self._full.clear()


def _closed(hub: StreamHub | None) -> None:
    if hub is not None:
        hub.__exit__()
