"""One worker thread per tenant, so tenants are reconciled concurrently: a tenant whose API
calls fail or hang (retried with backoff) never delays another's failover, and a tenant whose
status does not read (or whose pass fails in a way nobody foresaw) is refused alone, said
out loud, and tried again at its next poke. The manager pokes the workers in tier order
(highest recovery priority first) after every change it sees."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from gkeml_sdk.backends.kubernetes.api.lease import LeaseLost
from gkeml_sdk.errors import ClusterError, GkemlError, excerpt
from gkeml_sdk.tenancy.model import Tenant

log = logging.getLogger(__name__)
# A failed pass is tried again after this long (doubling up to RETRY_MAX_SECONDS).
RETRY_SECONDS, RETRY_MAX_SECONDS = 0.2, 5.0


class TenantWorker(threading.Thread):
    """Runs `reconcile(tenant, resync)` whenever poked, until `stop` is set; tells
    `on_refused(tenant, error)` when a pass is refused (`error`) and when one succeeds again
    (`None`).

    Example:
        >>> worker = TenantWorker(tenant, reconcile, stop, on_refused)  # doctest: +SKIP
        >>> worker.start(); worker.poke()  # doctest: +SKIP
    """

    def __init__(
        self,
        tenant: Tenant,
        reconcile: Callable[[Tenant, bool], None],
        stop: threading.Event,
        on_refused: Callable[[Tenant, GkemlError | None], None],
    ) -> None:
        super().__init__(daemon=True, name=f"gkeml-standby-{tenant.name}")
        self.tenant, self._reconcile, self._stopping, self._on_refused = (
            tenant,
            reconcile,
            stop,
            on_refused,
        )
        self._wake = threading.Event()
        self._lock = threading.Lock()
        self._resync = False
        self.clean = False  # the last pass succeeded and nothing changed since
        self.passes = 0  # passes that succeeded
        self.failures = 0  # passes that failed in a row
        self.ended = 0  # passes ended, whatever their outcome

    def poke(self, *, resync: bool = False, changed: bool = True) -> None:
        """Ask for a pass (soon, in this worker's thread); `changed=False` when only a
        throttled write is due, which leaves the worker clean."""
        with self._lock:
            self._resync = self._resync or resync
            self.clean = self.clean and not changed
        self._wake.set()

    def run(self) -> None:
        while not self._stopping.is_set():
            self._wake.wait(0.5)
            if self._stopping.is_set() or not self._wake.is_set():
                continue
            self._wake.clear()
            with self._lock:
                resync, self._resync = self._resync, False
            try:
                self._pass(resync)
            finally:
                self.ended += 1

    def _pass(self, resync: bool) -> None:
        try:
            self._reconcile(self.tenant, resync)
        except LeaseLost as exc:
            log.warning("tenant %s: %s; not writing", self.tenant.name, exc)
            return  # the manager re-pokes once it leads again
        except ClusterError as exc:
            self.failures += 1
            delay = min(RETRY_SECONDS * 2 ** (self.failures - 1), RETRY_MAX_SECONDS)
            log.warning("tenant %s: %s (retrying in %.1f s)", self.tenant.name, exc, delay)
            with self._lock:
                self._resync = self._resync or resync
            if not self._stopping.wait(delay):
                self._wake.set()
            return
        except GkemlError as exc:  # a status it cannot read: this tenant only
            self._on_refused(self.tenant, exc)
            return
        except Exception as exc:  # a bug: said with its traceback, this tenant only
            log.exception("tenant %s: the standby manager's pass failed", self.tenant.name)
            self._on_refused(self.tenant, unforeseen(self.tenant, exc))
            return
        self.failures = 0
        self.passes += 1
        self._on_refused(self.tenant, None)
        with self._lock:
            self.clean = self.clean or not self._wake.is_set()


def unforeseen(tenant: Tenant, exc: BaseException) -> GkemlError:
    """What a pass that failed for no reason gkeml foresaw says (the log has the traceback).

    Example:
        >>> from gkeml_sdk import load_specs
        >>> a = load_specs("examples/tenants.yaml")[0]
        >>> str(unforeseen(a, KeyError("x")))  # doctest: +ELLIPSIS
        "tenant tenant-a: the standby manager's pass failed (KeyError: 'x')..."
    """
    return GkemlError(
        f"tenant {tenant.name}: the standby manager's pass failed ({type(exc).__name__}: "
        f"{excerpt(str(exc))}); its other tenants go on and this one is tried again at its "
        "next change or resync. The manager's log has the traceback: please report it"
    )
