"""The ClusterQueue status Kueue's controller writes, for tests that stand in for it."""

from __future__ import annotations

from decimal import Decimal
from typing import Any


def flavors_reservation(cq_name: str, workloads: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """`status.flavorsReservation` of ClusterQueue `cq_name`: the quota its Workloads hold
    (QuotaReserved and not Finished), by flavor and resource, as Kueue reports it."""
    totals: dict[tuple[str, str], Decimal] = {}
    for wl in workloads:
        status = wl.get("status") or {}
        conds = {c["type"]: c["status"] for c in status.get("conditions") or []}
        admission = status.get("admission") or {}
        if conds.get("QuotaReserved") != "True" or conds.get("Finished") == "True":
            continue
        if admission.get("clusterQueue") != cq_name:
            continue
        for ps in admission.get("podSetAssignments") or []:
            for res, value in (ps.get("resourceUsage") or {}).items():
                key = (ps["flavors"][res], res)
                totals[key] = totals.get(key, Decimal(0)) + Decimal(str(value))
    by_flavor: dict[str, list[dict[str, str]]] = {}
    for (flavor, res), total in sorted(totals.items()):
        by_flavor.setdefault(flavor, []).append({"name": res, "total": str(total), "borrowed": "0"})
    return [{"name": f, "resources": r} for f, r in by_flavor.items()]
