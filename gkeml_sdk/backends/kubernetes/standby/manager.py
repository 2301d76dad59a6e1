"""`StandbyManager`: watches the tenants' pods and Deployments and, while it holds the
leader Lease, reconciles every tenant whenever something changes and on a bounded periodic
resync; each tenant in its own worker thread, poked in tier recovery-priority order, and every
write conditional on what it read and sent only while leading (`standby.fenced`). A tenant
whose status does not read is refused alone (`refused`, the log); the others go on. Copies
that do not lead keep their watches synced, so a successor acts as soon as the Lease (short,
`STANDBY_LEASE`) lets it. Run it in a thread of your platform (`start()` / `stop()`) or as
`gkeml tenant manage FILE`."""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
import uuid
from collections.abc import Callable, Sequence

from gkeml_sdk.backends.kubernetes.api.config import KubernetesSettings, connect
from gkeml_sdk.backends.kubernetes.api.kube import KubeClient
from gkeml_sdk.backends.kubernetes.api.lease import STANDBY_LEASE, LeaderElector, LeaseTiming
from gkeml_sdk.backends.kubernetes.api.streams import Event, StreamHub, StreamSpec
from gkeml_sdk.backends.kubernetes.api.transport import Transport
from gkeml_sdk.backends.kubernetes.standby.drill import DrillReport, run_drill
from gkeml_sdk.backends.kubernetes.standby.failover import DEPLOYMENTS, PODS, Reconciler
from gkeml_sdk.backends.kubernetes.standby.fenced import FencedWrites, WriteHook
from gkeml_sdk.backends.kubernetes.standby.rbac import LEASE_NAME
from gkeml_sdk.backends.kubernetes.standby.tenant_status import StatusBook, TenantStatus
from gkeml_sdk.backends.kubernetes.standby.view import Key
from gkeml_sdk.backends.kubernetes.standby.workers import TenantWorker, unforeseen
from gkeml_sdk.core.objects import Obj
from gkeml_sdk.errors import GkemlError, SpecError
from gkeml_sdk.tenancy.model import Tenant
from gkeml_sdk.tenancy.names import MODEL_LABEL, TENANT_LABEL
from gkeml_sdk.tenancy.rules import check_tenants

log = logging.getLogger(__name__)
RESYNC_SECONDS = 10.0


class StandbyManager:
    """Keeps standbys per tenant and tier and fails lost primaries over. Safe to run in
    several copies: only the holder of the Lease `gkeml-standby-manager` writes, and each
    write is conditional on what it read. `clock` paces the resync, the allocation writes
    and the Lease's deadlines (tests pass their own); `before_write(point, namespace)` runs
    right before each write, after its Lease check (tests pause a manager there).

    Example:
        >>> from gkeml_sdk import KubernetesSettings, StandbyManager, load_specs
        >>> manager = StandbyManager(load_specs("examples/tenants.yaml"),
        ...                          settings=KubernetesSettings())  # doctest: +SKIP
        >>> manager.start()  # doctest: +SKIP
        >>> manager.drill("tenant-a").table()  # doctest: +SKIP
    """

    def __init__(
        self,
        tenants: Sequence[Tenant],
        *,
        settings: KubernetesSettings | None = None,
        lease_namespace: str = "default",
        identity: str | None = None,
        lease: LeaseTiming | None = None,
        resync_seconds: float = RESYNC_SECONDS,
        clock: Callable[[], float] = time.monotonic,
        before_write: WriteHook | None = None,
    ) -> None:
        check_tenants(tenants)
        settings = settings or KubernetesSettings()
        api, _ = connect(
            kubeconfig=settings.kubeconfig, context=settings.context, api_client=settings.api_client
        )
        transport = Transport(
            api, api_retry=settings.api_retry, request_timeout=settings.request_timeout
        )
        self.kube = KubeClient(transport)
        # Highest recovery priority first: tier A's failovers go out before tier C's.
        self.tenants = sorted(tenants, key=lambda t: (-t.tier.recovery_priority, t.name))
        self.identity = identity or f"{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:6]}"
        self.elector = LeaderElector(
            self.kube, lease_namespace, LEASE_NAME, self.identity, lease or STANDBY_LEASE, clock
        )
        self.reconciler = Reconciler(FencedWrites(self.kube, self.elector, before_write), clock)
        self.watch_seconds = settings.watch_seconds
        self.resync_seconds, self._clock = resync_seconds, clock
        self.resyncs = 0  # periodic resyncs started while leading
        self.pods: dict[Key, Obj] = {}
        self.deployments: dict[Key, Obj] = {}
        self.changed = threading.Condition()  # notified after each loop (drills wait on it)
        self.error: GkemlError | None = None  # why a `start()`ed manager stopped by itself
        self.refused: dict[str, GkemlError] = {}  # tenant -> why its last pass was refused
        self.ready = threading.Event()  # caches synced, the leader acting, no tenant refused
        self._refusals = threading.Lock()  # `ready` is never set beside a new refusal
        self.synced = False  # every watch cache listed
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.workers: list[TenantWorker] = []

    @property
    def leading(self) -> bool:
        """True while this copy holds the Lease."""
        return self.elector.leading

    def start(self) -> StandbyManager:
        """Run in a daemon thread; returns at once."""
        self._stop.clear()
        self._thread = threading.Thread(target=self._run_logged, daemon=True, name="gkeml-standby")
        self._thread.start()
        return self

    def stop(self, *, release: bool = True, wait: bool = True) -> None:
        """Stop watching and acting; `release=False` leaves the Lease to expire, as a
        crashed manager would; `wait=False` returns at once (no new pass starts)."""
        self._stop.set()
        if not wait:
            return
        if self._thread is not None:
            self._thread.join(timeout=10)
        for worker in self.workers:
            worker.join(timeout=10)
        if release:
            self.elector.release()

    def _run_logged(self) -> None:
        try:
            self.run()
        except GkemlError as exc:  # e.g. 403 on a watch: keep it for the embedding platform
            self._failed(exc)
        except Exception as exc:  # a bug: never a thread that ends without a word
            log.exception("standby manager stopped")
            self._failed(GkemlError(f"the standby manager stopped: {type(exc).__name__}: {exc}"))

    def _failed(self, exc: GkemlError) -> None:
        self.error = exc
        log.error("standby manager stopped: %s", exc)
        self._stop.set()

    def _refused(self, tenant: Tenant, exc: GkemlError | None) -> None:
        """A worker's word on its tenant: refused (`exc`) or reconciled again (None)."""
        if exc is None:
            if self.refused.pop(tenant.name, None) is not None:
                log.info("tenant %s: reconciled again", tenant.name)
            return
        if str(self.refused.get(tenant.name)) != str(exc):  # once, not at every poke
            log.error("tenant %s refused: %s", tenant.name, exc)
        with self._refusals:
            self.refused[tenant.name] = exc
            self.ready.clear()

    def _worker(self, tenant: Tenant) -> TenantWorker:
        worker = TenantWorker(tenant, self._reconcile_one, self._stop, self._refused)
        worker.start()
        return worker

    def _revive(self) -> None:
        """A worker thread that ended while the manager runs is said and replaced."""
        for i, worker in enumerate(self.workers):
            if not worker.is_alive() and not self._stop.is_set():
                self._refused(
                    worker.tenant, unforeseen(worker.tenant, SystemError("its worker thread ended"))
                )
                self.workers[i] = self._worker(worker.tenant)

    def run(self) -> None:
        """Watch and reconcile until `stop()`; raises what stops the watches (a 403...)."""
        # One watch per tenant namespace: the manager's Roles are namespaced (`standby.rbac`).
        namespaces = sorted({t.namespace for t in self.tenants})
        specs = [StreamSpec(PODS, ns, label_selector=MODEL_LABEL) for ns in namespaces]
        specs += [StreamSpec(DEPLOYMENTS, ns, label_selector=TENANT_LABEL) for ns in namespaces]
        retry = self.elector.timing.retry_seconds
        self.workers = [self._worker(t) for t in self.tenants]
        with StreamHub(self.kube, specs, watch_seconds=self.watch_seconds) as hub:
            next_lease, next_resync, dirty = 0.0, self._clock() + self.resync_seconds, True
            while not self._stop.is_set():
                if time.monotonic() >= next_lease:
                    was = self.leading
                    self.elector.try_acquire_or_renew()
                    next_lease = time.monotonic() + retry
                    if self.leading and not was:
                        self.reconciler.forget()
                        dirty = True
                event = hub.next(timeout=max(0.0, min(next_lease - time.monotonic(), retry)))
                while event is not None:
                    self._cache(event)
                    dirty = True
                    event = hub.next(timeout=0)
                synced = self.synced = all(i.connections for i in hub.informers)
                resync = self._clock() >= next_resync
                if resync:
                    next_resync = self._clock() + self.resync_seconds
                    self.resyncs += int(self.leading)
                pending = self.reconciler.pending_allocations
                self._revive()
                if synced and self.leading:
                    for worker in self.workers:  # in tier order
                        if dirty or resync or worker.tenant.name in pending:
                            worker.poke(resync=resync, changed=dirty or resync)
                    dirty = False
                with self._refusals:
                    if (
                        synced
                        and not self.refused
                        and (
                            (self.leading and all(w.clean for w in self.workers))
                            or self.elector.holder not in ("", self.identity)
                        )
                    ):
                        self.ready.set()
                with self.changed:
                    self.changed.notify_all()

    def acting_for(self, tenant: str) -> bool:
        """True when a leader acts for `tenant`: another copy, or this one with the caches
        synced and the tenant's last pass clean (`ready` also waits for every other tenant)."""
        if self.ready.is_set():
            return True
        worker = next((w for w in self.workers if w.tenant.name == tenant), None)
        return (
            self.synced
            and self.leading
            and tenant not in self.refused
            and worker is not None
            and worker.clean
        )

    def apply(self) -> list[str]:
        """Server-side apply every compiled object of the tenants; `Kind/name` of each."""
        from gkeml_sdk.backends.kubernetes.standby.tenant_apply import apply_tenants

        return apply_tenants(self.kube, self.tenants)

    def status(self, tenant: Tenant) -> TenantStatus:
        """The tenant's recorded status (failover count, last failover, allocations)."""
        return StatusBook(self.kube).get(tenant)

    def drill(
        self,
        tenant: str,
        model: str | None = None,
        timeout: float = 600.0,
        on_loss: Callable[[], None] | None = None,
    ) -> DrillReport:
        """Take the primary's readiness away and measure recovery (`standby.drill`);
        `on_loss` runs as the primary goes (e.g. kill the leading copy)."""
        return run_drill(self, self.tenant(tenant), model, timeout, on_loss)

    def tenant(self, name: str) -> Tenant:
        """The managed tenant of that name."""
        for tenant in self.tenants:
            if tenant.name == name:
                return tenant
        known = ", ".join(t.name for t in self.tenants)
        raise SpecError(f"tenant {name!r} is not in the tenant file", fix=f"one of {known}")

    def _cache(self, event: Event) -> None:
        cache = self.pods if event.kind == "Pod" else self.deployments
        meta = event.obj.get("metadata") or {}
        key = (str(meta.get("namespace", "")), str(meta.get("name", "")))
        if event.type == "DELETED":
            cache.pop(key, None)
        else:
            cache[key] = event.obj

    def _reconcile_one(self, tenant: Tenant, resync: bool) -> None:
        """One pass of one tenant, in its worker's thread, from copies of the caches."""
        if self.leading and not self._stop.is_set():
            writes = self.reconciler.writes
            pods = writes.newest("Pod", dict(self.pods))
            deployments = writes.newest("Deployment", dict(self.deployments))
            self.reconciler.tenant(tenant, pods, deployments, resync=resync)
