"""`RunController`: reconciles every gkeml run in its namespaces and applies each run's
RetryPolicy, with nobody following the runs. It leads a namespace only while it holds the
namespace's Lease `gkeml-run-controller`, and checks that Lease (`fence()`) before every write
batch, so two controllers at once never both act. Between full passes (every `resync`
seconds, a safety net) it follows the runs through the backend's shared streams, the same
ones every `wait` and `follow` of that backend uses."""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from functools import partial
from typing import TYPE_CHECKING

from gkeml_sdk.backends.kubernetes.controller.lifecycle import RunLifecycle
from gkeml_sdk.backends.kubernetes.controller.liveness import LEASE_NAME
from gkeml_sdk.backends.kubernetes.controller.vouch import Vouchers
from gkeml_sdk.backends.kubernetes.following import stream_specs
from gkeml_sdk.backends.kubernetes.lease import LeaderElector, LeaseLost, LeaseTiming
from gkeml_sdk.backends.kubernetes.run_record import RECORD_LABEL
from gkeml_sdk.backends.kubernetes.run_records import CONFIG_MAPS
from gkeml_sdk.backends.kubernetes.streams import Event, StreamHub, StreamSpec
from gkeml_sdk.core.labels import RUN_ID_LABEL
from gkeml_sdk.errors import GkemlError

if TYPE_CHECKING:
    from gkeml_sdk.backends.kubernetes.cluster_backend import KubernetesBackend
    from gkeml_sdk.backends.kubernetes.kube_run import KubeRun

log = logging.getLogger(__name__)


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
        interval: float = 2.0,
        resync: float = 60.0,
        lease: LeaseTiming | None = None,
    ) -> None:
        self.backend = backend
        self.identity = identity or f"{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:6]}"
        self.interval = interval  # between Lease renewals
        self.resync = resync  # between full passes over every run (reads each one's objects)
        self.resyncs = 0  # full passes made by `run()` (for diagnostics)
        self.electors = {
            ns: LeaderElector(backend.kube, ns, LEASE_NAME, self.identity, lease)
            for ns in dict.fromkeys(namespaces)
        }
        self.runs: dict[tuple[str, str], KubeRun] = {}
        self.unreadable: dict[str, str] = {}  # record ConfigMap -> why it cannot be read
        self.vouchers = Vouchers(backend.kube)  # acts only for records a submitter vouched for
        self._stop = threading.Event()

    def reconcile_once(self) -> dict[str, bool]:
        """One pass over every namespace: renew or take its Lease, then (when leading) look
        at every run there and act for it. Returns whether this process led each one."""
        led = {}
        for namespace, elector in self.electors.items():
            led[namespace] = elector.try_acquire_or_renew()
            if not led[namespace]:
                self._forget(namespace)
                continue
            try:
                self._reconcile(namespace, elector)
            except LeaseLost as exc:
                log.warning("controller %s stops acting in %s: %s", self.identity, namespace, exc)
                self._forget(namespace)
                led[namespace] = False
        return led

    def run(self, stop: threading.Event | None = None) -> None:
        """Act for the runs until `stop` (or `stop()`): a full pass every `resync` seconds,
        the Leases renewed every `interval`, and in between the runs' objects and records
        followed on shared streams (so a run's end is acted on when it is seen, not at the
        next pass). On the way out the Leases are given up so another controller takes over
        at once."""
        stop = stop or self._stop
        hub: StreamHub | None = None
        next_resync = 0.0
        try:
            while not stop.is_set() and not self._stop.is_set():
                try:
                    if time.monotonic() >= next_resync:
                        self.reconcile_once()
                        next_resync = time.monotonic() + self.resync
                        self.resyncs += 1
                    elif self._renew():
                        next_resync = 0.0  # a namespace newly led: read all of it now
                        continue
                    led = [ns for ns, elector in self.electors.items() if elector.leading]
                    hub = self._follow(hub, led)
                    self._take_events(hub, min(self.interval, next_resync - time.monotonic()))
                except GkemlError as exc:  # the API server is away: try again next pass
                    log.warning("controller %s: %s", self.identity, exc)
                    stop.wait(self.interval)
        finally:
            if hub is not None:
                hub.__exit__()
            for elector in self.electors.values():
                try:
                    elector.release()
                except GkemlError as exc:
                    log.info("lease %s not released: %s", elector.name, exc)

    def stop(self) -> None:
        """Ask `run()` to end after the current pass."""
        self._stop.set()

    def _reconcile(self, namespace: str, elector: LeaderElector) -> None:
        records, unreadable = self.backend.records.scan(namespace)
        records = self.vouchers.admit(namespace, records, unreadable)
        self.unreadable = {k: v for k, v in self.unreadable.items() if not k.startswith(namespace)}
        self.unreadable.update({f"{namespace}/{n}": str(why) for n, why in unreadable.items()})
        for record in records:
            key = (namespace, record.name)
            run = self.runs.get(key)
            if run is None or record.submitted_at != run.record.submitted_at:
                run = self.backend.resume(record)
                run.lifecycle = RunLifecycle(self.backend, run, fence=elector.fence)
                self.runs[key] = run
            elif record.cancelled and not run.record.cancelled:
                run.record = record  # a person cancelled it: nothing more to do
            if run.done():
                continue
            run.lifecycle.ensure_attempt()  # type: ignore[union-attr]
            self.backend.snapshot(run)
            run.act(time.time())
        known = {r.name for r in records}
        for key in [k for k in self.runs if k[0] == namespace and k[1] not in known]:
            del self.runs[key]  # its record was deleted

    def _renew(self) -> bool:
        """Renew every Lease; True when one namespace is newly led (it needs a full pass)."""
        gained = False
        for namespace, elector in self.electors.items():
            was = elector.leading
            if not elector.try_acquire_or_renew():
                self._forget(namespace)
            elif not was:
                gained = True
        return gained

    def _follow(self, hub: StreamHub | None, namespaces: list[str]) -> StreamHub:
        """The hub of the streams the led namespaces' runs need; a new one joins before the
        old one leaves, so streams in both stay open (and are not listed again)."""
        specs = [StreamSpec(CONFIG_MAPS, ns, f"{RECORD_LABEL}=true") for ns in namespaces]
        live = [r for r in self.runs.values() if r.namespace in namespaces and not r.done()]
        specs += [s for s in stream_specs(live) if s not in specs]
        if hub is not None and hub.specs == specs and not any(i.failed for i in hub.informers):
            return hub  # (a stream that failed, e.g. on a 403, is opened anew)
        fresh = StreamHub(self.backend.streams, specs).__enter__()
        if hub is not None:
            hub.__exit__()
        return fresh

    def _take_events(self, hub: StreamHub, seconds: float) -> None:
        """Feed what the streams show for `seconds` to the runs, acting when one is due;
        back early when a new run needs streams of its own."""
        end = time.monotonic() + max(0.0, seconds)
        while (left := end - time.monotonic()) > 0:
            now = time.time()
            due = [r.seconds_to_next_action(now) for r in self.runs.values() if not r.done()]
            event = hub.next(timeout=min([left, *due]))
            now = time.time()
            if event is not None and event.kind == "ConfigMap":
                if self._record_seen(event):
                    return
            elif event is not None:
                namespace = event.obj.get("metadata", {}).get("namespace")
                for run in self._live(namespace):
                    self._guarded(run, partial(run.observe, event, now))
            for run in self._live(None):
                self._guarded(run, partial(run.act, now))

    def _record_seen(self, event: Event) -> bool:
        """A run submitted since the last pass (or a finished one's name submitted again) is
        acted for from now (True then). A live run's record changes by this controller's own
        writes: the pass reads those."""
        meta = event.obj["metadata"]
        namespace, labels = meta.get("namespace", ""), meta.get("labels") or {}
        name = str(labels.get(RUN_ID_LABEL) or "")
        known = self.runs.get((namespace, name))
        if event.type == "DELETED" or not name or (known is not None and not known.done()):
            return False
        elector = self.electors.get(namespace)
        if elector is None or not elector.leading:
            return False
        try:
            record = self.backend.records.read(event.obj)
            self.vouchers.check(record, namespace)
        except GkemlError as exc:
            self.unreadable[f"{namespace}/{name}"] = str(exc)
            return False
        if known is not None and known.record.submitted_at == record.submitted_at:
            return False  # the finished run's own record
        run = self.backend.resume(record)
        run.lifecycle = RunLifecycle(self.backend, run, fence=elector.fence)
        self.runs[(namespace, record.name)] = run
        self._guarded(run, run.lifecycle.ensure_attempt)
        return True

    def _live(self, namespace: str | None) -> Iterator[KubeRun]:
        """The runs not final yet (in `namespace`, or all), as long as they are still led."""
        for key, run in list(self.runs.items()):
            led = self.runs.get(key) is run
            if led and (namespace is None or key[0] == namespace) and not run.done():
                yield run

    def _guarded(self, run: KubeRun, act: Callable[[], object]) -> None:
        try:
            act()
        except LeaseLost as exc:
            log.warning("controller %s stops acting in %s: %s", self.identity, run.namespace, exc)
            self._forget(run.namespace)

    def _forget(self, namespace: str) -> None:
        # Whoever leads next starts from the records, not from what this process believed.
        for key in [k for k in self.runs if k[0] == namespace]:
            del self.runs[key]
