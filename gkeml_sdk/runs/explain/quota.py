"""Kueue's quota arithmetic for one ClusterQueue in its cohort, per (flavor, resource):
nominal quota, borrowing and lending limits, what is free now and the most it could ever
hold (kubernetes-sigs/kueue pkg/cache/scheduler resource_node.go: `available`,
`potentialAvailable`)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal

from gkeml_sdk.core.objects import ObjView
from gkeml_sdk.core.quantity import quantity
from gkeml_sdk.runs.explain.reading import name_of

FlavorResource = tuple[str, str]
Usage = dict[str, dict[FlavorResource, Decimal]]  # cluster queue -> (flavor, resource) -> used
ZERO = Decimal(0)


@dataclass(frozen=True)
class Quota:
    """One (flavor, resource) row of a ClusterQueue's `spec.resourceGroups`."""

    nominal: Decimal
    borrowing_limit: Decimal | None = None
    lending_limit: Decimal | None = None

    @property
    def guaranteed(self) -> Decimal:
        """The part never lent to the cohort (nominal minus lendingLimit)."""
        return ZERO if self.lending_limit is None else max(ZERO, self.nominal - self.lending_limit)


def quotas(cq: ObjView | None) -> dict[FlavorResource, Quota]:
    """Every (flavor, resource) quota of a ClusterQueue (or Cohort) spec.

    Example:
        >>> cq = {"spec": {"resourceGroups": [{"coveredResources": ["nvidia.com/gpu"],
        ...     "flavors": [{"name": "a", "resources": [{"name": "nvidia.com/gpu",
        ...     "nominalQuota": "16", "borrowingLimit": "8"}]}]}]}}
        >>> quotas(cq)[("a", "nvidia.com/gpu")].borrowing_limit
        Decimal('8')
    """
    found = {}
    for group in ((cq or {}).get("spec") or {}).get("resourceGroups") or []:
        for flavor in group.get("flavors") or []:
            for res in flavor.get("resources") or []:
                limits = [res.get(k) for k in ("borrowingLimit", "lendingLimit")]
                found[(flavor["name"], res["name"])] = Quota(
                    quantity(res.get("nominalQuota", 0)),
                    *(None if v is None else quantity(v) for v in limits),
                )
    return found


def groups(cq: ObjView | None) -> list[tuple[tuple[str, ...], tuple[str, ...]]]:
    """(covered resources, flavor names in preference order) of each resource group."""
    return [
        (tuple(g.get("coveredResources") or ()), tuple(f["name"] for f in g.get("flavors") or ()))
        for g in ((cq or {}).get("spec") or {}).get("resourceGroups") or []
    ]


def reserved(cq: ObjView | None) -> dict[FlavorResource, Decimal]:
    """Quota the ClusterQueue has reserved now (`status.flavorsReservation`).

    Example:
        >>> reserved({"status": {"flavorsReservation": [{"name": "a", "resources": [
        ...     {"name": "nvidia.com/gpu", "total": "16"}]}]}})
        {('a', 'nvidia.com/gpu'): Decimal('16')}
    """
    used = {}
    for flavor in ((cq or {}).get("status") or {}).get("flavorsReservation") or []:
        for res in flavor.get("resources") or []:
            used[(flavor["name"], res["name"])] = quantity(res.get("total", 0))
    return used


def cohort_name(cq: ObjView | None) -> str:
    """`spec.cohortName` (v1beta2), or "" for a ClusterQueue that borrows from no one."""
    spec = (cq or {}).get("spec") or {}
    return str(spec.get("cohortName") or spec.get("cohort") or "")


class QuotaTree:
    """A ClusterQueue with the other members of its cohort (and the Cohort's own quota).

    Example:
        >>> cq = {"metadata": {"name": "a"}, "spec": {"resourceGroups": [{"coveredResources":
        ...     ["nvidia.com/gpu"], "flavors": [{"name": "f", "resources": [{"name":
        ...     "nvidia.com/gpu", "nominalQuota": "16"}]}]}]}}
        >>> tree = QuotaTree(cq)
        >>> tree.available(("f", "nvidia.com/gpu"), {"a": {("f", "nvidia.com/gpu"): Decimal(8)}})
        Decimal('8')
    """

    def __init__(
        self, cq: ObjView, members: Iterable[ObjView] = (), cohort: ObjView | None = None
    ) -> None:
        self.name = name_of(cq)
        self.cohort = cohort_name(cq)
        self.quotas = {self.name: quotas(cq)}
        if self.cohort:
            for other in members:
                if cohort_name(other) == self.cohort and name_of(other) != self.name:
                    self.quotas[name_of(other)] = quotas(other)
        self.own = {fr: q.nominal for fr, q in quotas(cohort).items()} if self.cohort else {}

    def usage_now(self, queues: Iterable[ObjView]) -> Usage:
        """Reserved quota of every member, from their status."""
        now: Usage = {name: {} for name in self.quotas}
        for cq in queues:
            if name_of(cq) in now:
                now[name_of(cq)] = reserved(cq)
        return now

    def quota(self, fr: FlavorResource, queue: str = "") -> Quota:
        return self.quotas.get(queue or self.name, {}).get(fr, Quota(ZERO))

    def cohort_available(self, fr: FlavorResource, usage: Usage) -> Decimal:
        """What the cohort still lends: its pool minus what members use beyond guarantees."""
        pool = self.own.get(fr, ZERO)
        used = ZERO
        for queue in self.quotas:
            q = self.quota(fr, queue)
            pool += q.nominal - q.guaranteed
            used += max(ZERO, usage.get(queue, {}).get(fr, ZERO) - q.guaranteed)
        return pool - used

    def available(self, fr: FlavorResource, usage: Usage) -> Decimal:
        """Quota this ClusterQueue can still reserve for `fr` (may borrow from the cohort)."""
        q, used = self.quota(fr), usage.get(self.name, {}).get(fr, ZERO)
        if not self.cohort:
            return q.nominal - used
        local = max(ZERO, q.guaranteed - used)
        parent = self.cohort_available(fr, usage)
        if q.borrowing_limit is not None:
            in_parent = max(ZERO, used - q.guaranteed)
            parent = min(parent, q.nominal - q.guaranteed - in_parent + q.borrowing_limit)
        return local + parent

    def potential(self, fr: FlavorResource) -> Decimal:
        """The most this ClusterQueue could hold for `fr` with every other member idle."""
        q = self.quota(fr)
        if not self.cohort:
            return q.nominal
        most = q.guaranteed + self.cohort_available(fr, {})
        if q.borrowing_limit is not None:
            most = min(most, q.nominal + q.borrowing_limit)
        return most
