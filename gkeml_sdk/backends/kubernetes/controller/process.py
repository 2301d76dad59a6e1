"""`RunController`: reconciles every gkeml run in its namespaces and applies each run's
RetryPolicy, with nobody following the runs. It leads a namespace only while it holds the
namespace's Lease `gkeml-run-controller`, and checks that Lease (`fence()`) before every write
batch, so two controllers at once never both act."""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
import uuid
from collections.abc import Sequence
from typing import TYPE_CHECKING

from gkeml_sdk.backends.kubernetes.controller.lifecycle import RunLifecycle
from gkeml_sdk.backends.kubernetes.controller.liveness import LEASE_NAME
from gkeml_sdk.backends.kubernetes.lease import LeaderElector, LeaseLost, LeaseTiming
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
        lease: LeaseTiming | None = None,
    ) -> None:
        self.backend = backend
        self.identity = identity or f"{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:6]}"
        self.interval = interval
        self.electors = {
            ns: LeaderElector(backend.kube, ns, LEASE_NAME, self.identity, lease)
            for ns in dict.fromkeys(namespaces)
        }
        self.runs: dict[tuple[str, str], KubeRun] = {}
        self.unreadable: dict[str, str] = {}  # record ConfigMap -> why it cannot be read
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
        """Reconcile every `interval` seconds until `stop` (or `stop()`); then give the
        Leases up so another controller takes over at once."""
        stop = stop or self._stop
        try:
            while not stop.is_set() and not self._stop.is_set():
                try:
                    self.reconcile_once()
                except GkemlError as exc:  # the API server is away: try again next pass
                    log.warning("controller %s: %s", self.identity, exc)
                stop.wait(self.interval)
        finally:
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

    def _forget(self, namespace: str) -> None:
        # Whoever leads next starts from the records, not from what this process believed.
        for key in [k for k in self.runs if k[0] == namespace]:
            del self.runs[key]
