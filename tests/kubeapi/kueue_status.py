"""Kueue's ClusterQueue status as its controller writes it: late. Followed from
kubernetes-sigs/kueue `pkg/controller/core/clusterqueue_controller.go`: every Workload event
enqueues the Workload's ClusterQueue with `AddAfter(req, constants.UpdatesBatchPeriod)`
(`pkg/constants`: one second), a delaying workqueue keeps the earliest pending time per queue,
and the reconcile then writes `flavorsReservation` / `flavorsUsage` and the workload counts from
the cache as it is at that moment. So a Workload admitted at t shows in its ClusterQueue's
status at about t + 1 s (measured on a real cluster: +0.13 s admitted, +1.1 s in the status).

Time is an explicit `ManualClock`: nothing changes until a test calls `clock.advance()`.

Simplified: quantities are written canonically (`16`, `500m`), not in the suffix the quota
used; `borrowed` is what a member uses above its nominal quota.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from decimal import Decimal
from typing import Any

from .store import Store

UPDATES_BATCH_PERIOD = 1.0  # seconds, Kueue's constants.UpdatesBatchPeriod
_SUFFIX = {"m": Decimal("0.001"), "k": Decimal(10**3), "M": Decimal(10**6), "G": Decimal(10**9),
           "T": Decimal(10**12), "Ki": Decimal(2**10), "Mi": Decimal(2**20),
           "Gi": Decimal(2**30), "Ti": Decimal(2**40)}  # fmt: skip


class ManualClock:
    """Seconds that pass only when a test says so; `advance` runs what fell due.

    Example:
        >>> clock = ManualClock()
        >>> clock.advance(0.5); clock.now
        0.5
    """

    def __init__(self, start: float = 0.0) -> None:
        self.now = start
        self._before: list[Callable[[], None]] = []
        self._after: list[Callable[[], None]] = []

    def on_advance(self, before: Callable[[], None], after: Callable[[], None]) -> None:
        self._before.append(before)
        self._after.append(after)

    def advance(self, seconds: float) -> None:
        for hook in self._before:
            hook()
        self.now += seconds
        for hook in self._after:
            hook()


class ClusterQueueStatus:
    """Writes every ClusterQueue's status `delay` seconds after the first Workload event it has
    not yet reflected, as Kueue's ClusterQueue reconciler does."""

    def __init__(self, store: Store, clock: ManualClock, delay: float = UPDATES_BATCH_PERIOD):
        self.store = store
        self.clock = clock
        self.delay = delay
        self.due: dict[str, float] = {}  # ClusterQueue -> when its reconcile runs
        self.reconciles = 0
        self._seen_rv = store.resource_version
        self._lock = threading.Lock()
        clock.on_advance(self._observe, self._run_due)
        for cq in store.list("clusterqueues"):  # the reconcile of each queue's create event
            self.reconcile(cq["metadata"]["name"])

    def _observe(self) -> None:
        """Enqueue the ClusterQueues of the Workload events since the last look; they all
        happened at the clock's current time, since it moves only through `advance`."""
        with self._lock:
            events, rv = self.store.events_after(self._seen_rv)
            self._seen_rv = rv
            if events is None:  # history compacted: every queue may have changed
                names = [
                    q["metadata"]["name"] for q in self.store.items("clusterqueues.kueue.x-k8s.io")
                ]
            else:
                names = [
                    cq
                    for e in events
                    if e.key == "workloads.kueue.x-k8s.io"
                    for cq in {self._queue_of(e.obj), self._queue_of(e.old)}
                    if cq
                ]
            for name in names:
                self.due.setdefault(name, self.clock.now + self.delay)

    def _run_due(self) -> None:
        with self._lock:
            ready = sorted(n for n, at in self.due.items() if at <= self.clock.now)
            for name in ready:
                del self.due[name]
                self.reconcile(name)

    def reconcile(self, name: str) -> None:
        """Write ClusterQueue `name`'s status from the Workloads as they are now."""
        cq = self.store.get("clusterqueues", None, name)
        if cq is None:
            return
        self.reconciles += 1
        workloads = self.store.list("workloads")
        queues = {
            (q["metadata"]["namespace"], q["metadata"]["name"]): (q.get("spec") or {}).get(
                "clusterQueue"
            )
            for q in self.store.list("localqueues")
        }
        reserving = [w for w in workloads if _holds(w, name, "QuotaReserved")]
        admitted = [w for w in workloads if _holds(w, name, "Admitted")]
        pending = [w for w in workloads if _pending_in(w, name, queues)]
        status = {
            "flavorsReservation": _flavors(cq, reserving),
            "flavorsUsage": _flavors(cq, admitted),
            "reservingWorkloads": len(reserving),
            "admittedWorkloads": len(admitted),
            "pendingWorkloads": len(pending),
        }
        self.store.update_status("clusterqueues", None, name, status, merge=True)

    def _queue_of(self, workload: dict[str, Any] | None) -> str:
        if not workload:
            return ""
        admission = (workload.get("status") or {}).get("admission") or {}
        if admission.get("clusterQueue"):
            return str(admission["clusterQueue"])
        meta = workload.get("metadata") or {}
        lq = self.store.get("localqueues", meta.get("namespace"), _queue_name(workload))
        return str(((lq or {}).get("spec") or {}).get("clusterQueue") or "")


def _queue_name(workload: dict[str, Any]) -> str:
    return str((workload.get("spec") or {}).get("queueName") or "")


def _true(workload: dict[str, Any], ctype: str) -> bool:
    conditions = (workload.get("status") or {}).get("conditions") or []
    return any(c.get("type") == ctype and c.get("status") == "True" for c in conditions)


def _holds(workload: dict[str, Any], cq: str, ctype: str) -> bool:
    admission = (workload.get("status") or {}).get("admission") or {}
    return (
        admission.get("clusterQueue") == cq
        and _true(workload, ctype)
        and not _true(workload, "Finished")
    )


def _pending_in(workload: dict[str, Any], cq: str, queues: dict[tuple[str, str], Any]) -> bool:
    meta = workload.get("metadata") or {}
    active = (workload.get("spec") or {}).get("active", True) is not False
    return (
        queues.get((meta.get("namespace"), _queue_name(workload))) == cq
        and active
        and not _true(workload, "QuotaReserved")
        and not _true(workload, "Finished")
    )


def _flavors(cq: dict[str, Any], workloads: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every flavor and resource of the queue's spec, in spec order, with the total its
    workloads use (zero included, as Kueue reports it)."""
    used: dict[tuple[str, str], Decimal] = {}
    for w in workloads:
        for ps in ((w.get("status") or {}).get("admission") or {}).get("podSetAssignments") or []:
            flavors = ps.get("flavors") or {}
            for res, value in (ps.get("resourceUsage") or {}).items():
                key = (flavors.get(res, ""), res)
                used[key] = used.get(key, Decimal(0)) + quantity(value)
    spec = cq.get("spec") or {}
    out = []
    for group in spec.get("resourceGroups") or []:
        for flavor in group.get("flavors") or []:
            resources = []
            for res in flavor.get("resources") or []:
                total = used.get((flavor["name"], res["name"]), Decimal(0))
                over = total - quantity(res.get("nominalQuota", 0))
                borrowed = over if spec.get("cohortName") and over > 0 else Decimal(0)
                resources.append(
                    {
                        "name": res["name"],
                        "total": canonical(total),
                        "borrowed": canonical(borrowed),
                    }
                )
            out.append({"name": flavor["name"], "resources": resources})
    return out


def quantity(value: Any) -> Decimal:
    """A Kubernetes quantity (`16`, `500m`, `64Gi`) as a number."""
    text = str(value)
    for suffix in sorted(_SUFFIX, key=len, reverse=True):
        if text.endswith(suffix) and text[: -len(suffix)]:
            return Decimal(text[: -len(suffix)]) * _SUFFIX[suffix]
    return Decimal(text)


def canonical(value: Decimal) -> str:
    if value == value.to_integral_value():
        return str(int(value))
    return f"{int(value * 1000)}m"
