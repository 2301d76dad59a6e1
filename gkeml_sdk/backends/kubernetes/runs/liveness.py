"""Is a run controller acting for a namespace? The one that leads holds the one Lease
`gkeml-run-controller` in its own namespace (`gkeml-system` by default), renews it, and names
the namespaces it manages in the annotation `gkeml.dev/managed-namespaces`. A client that
follows a run defers to it instead of acting itself.

Whether the holder is alive is judged as client-go's leader election judges it: by changes of
the Lease this process has seen, on its own monotonic clock. The holder counts as alive until
this process has seen its Lease unchanged for `leaseDurationSeconds`; its `renewTime` is never
compared with this machine's clock, so a skewed clock makes no second writer."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from gkeml_sdk.backends.kubernetes.api.kube import KubeClient
from gkeml_sdk.backends.kubernetes.api.lease import LEASES
from gkeml_sdk.core.objects import Obj
from gkeml_sdk.errors import ClusterError

LEASE_NAME = "gkeml-run-controller"
MANAGED_ANNOTATION = "gkeml.dev/managed-namespaces"
ROLLOUTS_ANNOTATION = "gkeml.dev/drives-rollouts"  # "true": it also drives serving rollouts
CONTROLLER_NAMESPACE = "gkeml-system"
# How long one read of the Lease answers every wait of a client (threads included): client-go's
# leader election retries every 2 s, so a holder is noticed as late as a candidate would.
LEASE_READ_SECONDS = 2.0


def managed_namespaces(lease: Obj) -> list[str]:
    """The namespaces a run controller's Lease says it acts for.

    Example:
        >>> managed_namespaces({"metadata": {"annotations": {MANAGED_ANNOTATION: "ml, team-b"}}})
        ['ml', 'team-b']
    """
    text = ((lease.get("metadata") or {}).get("annotations") or {}).get(MANAGED_ANNOTATION)
    return [n.strip() for n in str(text or "").split(",") if n.strip()]


class ControllerWatch:
    """Observes the run controller's Lease for one client (one per backend, any thread).

    With `fresh_for` seconds, one read of the Lease answers every question asked within
    that time of it, from any thread (the others wait for the one reading).

    Example:
        >>> watch = ControllerWatch(kube, "gkeml-system", fresh_for=2.0)  # doctest: +SKIP
        >>> watch.acts_for("ml")  # doctest: +SKIP
        False
    """

    def __init__(
        self,
        kube: KubeClient,
        namespace: str = CONTROLLER_NAMESPACE,
        clock: Callable[[], float] = time.monotonic,
        fresh_for: float = 0.0,
    ) -> None:
        self.kube, self.namespace = kube, namespace
        self._clock = clock
        self.fresh_for = fresh_for
        self._reading = threading.Lock()  # one read at a time: a crowd of waits makes one
        self._read: tuple[float, Obj | None] | None = None  # (local time, Lease) last read
        self._lock = threading.Lock()
        self._seen: tuple[str, str] | None = None  # (resourceVersion, holder) last seen
        self._seen_at = 0.0  # local time it was first seen in that form

    def acts_for(self, namespace: str, *, rollouts: bool = False) -> bool:
        """True when a controller holds the Lease, names `namespace` in it (and, with
        `rollouts`, says it drives serving rollouts), and this process has not seen the Lease
        unchanged for its duration. One read (none within `fresh_for` of the last); no Lease,
        or no right to read it (403), means no controller: the caller then acts itself."""
        lease = self._lease()
        if lease is None:
            return False
        notes = (lease.get("metadata") or {}).get("annotations") or {}
        if rollouts and notes.get(ROLLOUTS_ANNOTATION) != "true":
            return False
        spec = lease.get("spec") or {}
        holder = str(spec.get("holderIdentity") or "")
        version = (str(lease["metadata"].get("resourceVersion") or ""), holder)
        now = self._clock()
        with self._lock:
            if version != self._seen:
                self._seen, self._seen_at = version, now
            unchanged_for = now - self._seen_at
        duration = float(spec.get("leaseDurationSeconds") or 0)
        if not holder or namespace not in managed_namespaces(lease):
            return False
        return unchanged_for < duration

    def _lease(self) -> Obj | None:
        with self._reading:
            read = self._read
            if read is not None and self._clock() - read[0] < self.fresh_for:
                return read[1]
            try:
                lease = self.kube.find(LEASES, LEASE_NAME, self.namespace)
            except ClusterError as exc:
                if exc.status != 403:
                    raise
                lease = None
            self._read = (self._clock(), lease)
            return lease
