"""Who preempted a run: Kueue's Preempted condition names the preempting Workload only by
UID ("Preempted to accommodate a workload (UID: ..., JobUID: ...)"); this resolves it against
the Workloads a reader can see into its job, namespace, priority and queue, or says it is gone.

Example:
    >>> message = "Preempted to accommodate a workload (UID: w2, JobUID: j2) due to prioritization"
    >>> high = {"metadata": {"uid": "w2", "name": "jobset-high-1", "namespace": "ml",
    ...     "ownerReferences": [{"kind": "JobSet", "name": "high"}]},
    ...     "spec": {"priority": 1000, "queueName": "team-a"}}
    >>> preemptor(message, [high]).describe()
    'JobSet ml/high (priority 1000, queue team-a)'
    >>> preemptor(message, []).describe()
    'a workload that no longer exists (Workload UID w2)'
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from gkeml_sdk.core.objects import ObjView

_UID = re.compile(r"\(UID: ([^,)\s]+)")


@dataclass(frozen=True)
class Preemptor:
    """The workload that preempted a run; `found` is False when it no longer exists."""

    uid: str
    found: bool = False
    kind: str = ""
    name: str = ""
    namespace: str = ""
    priority: int | None = None
    queue: str = ""

    def describe(self) -> str:
        """Its job, namespace, priority and queue in words."""
        if not self.found:
            return f"a workload that no longer exists (Workload UID {self.uid})"
        priority = "" if self.priority is None else f"priority {self.priority}, "
        return f"{self.kind} {self.namespace}/{self.name} ({priority}queue {self.queue or '?'})"


def preemptor_uid(message: str) -> str | None:
    """The preempting Workload's UID in a Kueue Preempted/Evicted message, if any."""
    found = _UID.search(message or "")
    return found.group(1) if found else None


def preemptor(message: str, workloads: Iterable[ObjView]) -> Preemptor | None:
    """The preemptor a Kueue message names, resolved among `workloads` (None when the
    message names no UID)."""
    wanted = preemptor_uid(message)
    if wanted is None:
        return None
    for workload in workloads:
        meta = workload.get("metadata") or {}
        if meta.get("uid") != wanted:
            continue
        owner = (meta.get("ownerReferences") or [{}])[0]
        spec = workload.get("spec") or {}
        priority = spec.get("priority")
        return Preemptor(
            wanted,
            True,
            str(owner.get("kind") or "Workload"),
            str(owner.get("name") or meta.get("name") or ""),
            str(meta.get("namespace") or ""),
            int(priority) if priority is not None else None,
            str(spec.get("queueName") or ""),
        )
    return Preemptor(wanted)
