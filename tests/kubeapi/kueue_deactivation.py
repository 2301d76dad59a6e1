"""Kueue deactivating a Workload after its requeue limit, for scenarios no recording shows
with nobody following the run (the recording `jobset-podsready-timeout-deactivated` shows the
same writes, in this order, with a follower).

The code path followed is Kueue's `WorkloadReconciler` (pkg/controller/core/
workload_controller.go): `triggerDeactivationOrBackoffRequeue` finds
`requeueState.count + 1 > waitForPodsReady.requeuingStrategy.backoffLimitCount` and calls
`workload.SetDeactivationTarget(wl, RequeuingLimitExceeded, "exceeding the maximum number of
re-queuing retries")`; the next reconcile sets `spec.active=false`, evicts with the reason
`ReasonWithCause(Deactivated, RequeuingLimitExceeded)` = `DeactivatedDueToRequeuingLimitExceeded`
(counted in `schedulingStats.evictions` as reason Deactivated, cause RequeuingLimitExceeded),
clears `requeueState`, releases the quota (QuotaReserved/Admitted False) and sets Requeued
False; the job framework then suspends the job."""

from __future__ import annotations

import copy
from datetime import UTC, datetime
from typing import Any

LIMIT = "exceeding the maximum number of re-queuing retries"
DEACTIVATED = (
    "The workload is deactivated due to exceeding the maximum number of re-queuing retries"
)
REASON = "DeactivatedDueToRequeuingLimitExceeded"


def deactivate_after_requeue_limit(server: Any, namespace: str, job_uid: str) -> dict[str, Any]:
    """Write Kueue's deactivation of the Workload of the job with uid `job_uid`, as three
    status writes (target, spec.active=false with the eviction, quota released) and the job's
    suspension; returns the last Workload."""
    store = server.store
    found = store.list("workloads", namespace, f"kueue.x-k8s.io/job-uid={job_uid}")
    assert len(found) == 1, f"no Workload of job uid {job_uid}"
    name = found[0]["metadata"]["name"]

    def write(change: Any) -> dict[str, Any]:
        workload = copy.deepcopy(store.get("workloads", namespace, name))
        change(workload)
        store.put(workload, manager="kueue")
        return workload

    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    write(lambda w: _set(w, "DeactivationTarget", "True", "RequeuingLimitExceeded", LIMIT, now))

    def evict(w: dict[str, Any]) -> None:
        w["spec"]["active"] = False
        _set(w, "Evicted", "True", REASON, DEACTIVATED, now)
        _drop(w, "DeactivationTarget")
        status = w.setdefault("status", {})
        status.pop("requeueState", None)
        stats = status.setdefault("schedulingStats", {}).setdefault("evictions", [])
        stats.append(
            {"reason": "Deactivated", "underlyingCause": "RequeuingLimitExceeded", "count": 1}
        )

    write(evict)

    def release(w: dict[str, Any]) -> None:
        _set(w, "QuotaReserved", "False", "Deactivated", "The workload is deactivated", now)
        _set(w, "Admitted", "False", "NoReservation", "The workload has no reservation", now)
        _set(w, "Requeued", "False", REASON, DEACTIVATED, now)
        w["status"].pop("admission", None)

    last = write(release)
    owner = (found[0]["metadata"].get("ownerReferences") or [{}])[0]
    plural = {"JobSet": "jobsets", "Job": "jobs"}[owner.get("kind", "JobSet")]
    job = store.get(plural, namespace, owner["name"])
    job["spec"]["suspend"] = True
    store.put(job, manager="kueue")
    return last


def _set(w: dict[str, Any], ctype: str, status: str, reason: str, message: str, at: str) -> None:
    conditions = w.setdefault("status", {}).setdefault("conditions", [])
    old = next((c for c in conditions if c["type"] == ctype), None)
    since = old["lastTransitionTime"] if old is not None and old["status"] == status else at
    new = {"type": ctype, "status": status, "reason": reason, "message": message,
           "lastTransitionTime": since}  # fmt: skip
    w["status"]["conditions"] = [c for c in conditions if c["type"] != ctype] + [new]


def _drop(w: dict[str, Any], ctype: str) -> None:
    conds = w["status"].get("conditions") or []
    w["status"]["conditions"] = [c for c in conds if c["type"] != ctype]
