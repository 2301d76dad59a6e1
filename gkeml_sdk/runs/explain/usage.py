"""Quota in use, counted from the Workloads that hold it: Kueue refreshes a ClusterQueue's
`status.flavorsReservation` about a second after an admission (its controller batches
Workload events for `UpdatesBatchPeriod`), so in that second the status says the quota is
free. The status counts only when the reader could not see every Workload of the cohort."""

from __future__ import annotations

from dataclasses import dataclass

from gkeml_sdk.runs.explain import workloads as wls
from gkeml_sdk.runs.explain.explanation import Evidence
from gkeml_sdk.runs.explain.inputs import QueueObjects
from gkeml_sdk.runs.explain.quota import ZERO, FlavorResource, QuotaTree, Usage
from gkeml_sdk.runs.explain.reading import amount


@dataclass(frozen=True)
class QuotaUsage:
    """What each member of the cohort uses (`used`, the one decisions read), whether it was
    counted from Workloads, and what the ClusterQueue status reports.

    Example:
        >>> u = QuotaUsage({"cq": {("f", "gpu"): ZERO + 16}}, True, {"cq": {}})
        >>> u.note("cq", ("f", "gpu")).endswith("about once a second, still says 0)")
        True
    """

    used: Usage
    counted: bool
    reported: Usage

    def note(self, queue: str, fr: FlavorResource) -> str:
        """The clause a sentence adds when the status and the Workloads disagree on `fr`."""
        disagree = [q for q in self.used if self._differs(q, fr)]
        if not disagree:
            return ""
        where = queue if queue in disagree else disagree[0]
        which = "the ClusterQueue status" if where == queue else f"the status of {where}"
        said = amount(self.reported.get(where, {}).get(fr, ZERO))
        if self.counted:
            return (
                f" (counted from the Workloads holding it; {which}, which Kueue refreshes about "
                f"once a second, still says {said})"
            )
        return f" (the larger of {which}, {said}, and the Workloads this reader may list)"

    def evidence(self) -> tuple[Evidence, ...]:
        """One line per (queue, flavor, resource) where the two sources disagree."""
        found = []
        for queue in sorted(self.used):
            for fr in sorted(set(self.used[queue]) | set(self.reported.get(queue, {}))):
                if self._differs(queue, fr):
                    counted = self.used[queue].get(fr, ZERO)
                    said = self.reported.get(queue, {}).get(fr, ZERO)
                    source = "Workloads" if self.counted else "status"
                    found.append(
                        Evidence("ClusterQueue", queue, f"quota read from {source}",
                                 message=f"{fr[1]}@{fr[0]}: Workloads hold {amount(counted)}, "
                                 f"status says {amount(said)}")
                    )  # fmt: skip
        return tuple(found)

    def _differs(self, queue: str, fr: FlavorResource) -> bool:
        return self.used.get(queue, {}).get(fr, ZERO) != self.reported.get(queue, {}).get(fr, ZERO)


def quota_usage(tree: QuotaTree, queues: QueueObjects) -> QuotaUsage:
    """Usage of every cohort member from its Workloads when all could be read, else the
    ClusterQueue status raised to at least what the visible Workloads hold.

    Example:
        >>> quota_usage(QuotaTree({"metadata": {"name": "cq"}}), QueueObjects("q", "ml")).used
        {'cq': {}}
    """
    reported = tree.usage_now([q for q in (queues.cluster_queue, *queues.cohort_queues) if q])
    counted: Usage = {queue: {} for queue in tree.quotas}
    for workload in queues.workloads:
        queue, held = wls.holds(workload)
        for fr, n in held.items():
            if queue in counted:
                counted[queue][fr] = counted[queue].get(fr, ZERO) + n
    if queues.quota_complete:
        return QuotaUsage(counted, True, reported)
    used: Usage = {}
    for queue in tree.quotas:
        mine, said = counted[queue], reported.get(queue, {})
        used[queue] = {fr: max(mine.get(fr, ZERO), said.get(fr, ZERO)) for fr in {*mine, *said}}
    return QuotaUsage(used, False, reported)
