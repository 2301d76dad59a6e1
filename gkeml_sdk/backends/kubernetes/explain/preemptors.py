"""Find the Workload that preempted a run (Kueue names it only by UID): first in the run's
namespace, then, when the reader may list them, in every namespace (a cohort spans several)."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from gkeml_sdk.backends.kubernetes.api.kube import KubeClient
from gkeml_sdk.backends.kubernetes.api.queue_reads import list_pages
from gkeml_sdk.backends.kubernetes.runs.snapshots import WORKLOADS
from gkeml_sdk.core.objects import Obj
from gkeml_sdk.errors import ClusterError
from gkeml_sdk.runs.handle import RunState, Transition
from gkeml_sdk.runs.preemptor import Preemptor, preemptor, preemptor_uid

if TYPE_CHECKING:
    from gkeml_sdk.backends.kubernetes.api.shared_reads import SharedReads

log = logging.getLogger(__name__)
_PREEMPTED_BY = "preempted by "


def find_preemptor(
    kube: KubeClient, namespace: str, message: str, shared: SharedReads | None = None
) -> Preemptor | None:
    """The preemptor Kueue's `message` names (None when it names none); with `shared`, the
    Workloads are listed once for every run of a listing.

    Example:
        >>> find_preemptor(kube, "ml", workload_message).describe()  # doctest: +SKIP
        'JobSet ml/high (priority 1000, queue team-a)'
    """
    if preemptor_uid(message) is None:
        return None
    found = None
    for where in (namespace, None):

        def read(where: str | None = where) -> list[Obj]:
            return list_pages(kube, WORKLOADS, where)

        try:
            workloads = read() if shared is None else shared.once(("workloads", where or ""), read)
        except ClusterError as exc:  # not allowed to list there: say what is known
            log.info("preemptor of %s: %s", namespace, exc)
            continue
        found = preemptor(message, workloads)
        if found is not None and found.found:
            return found
    return found


def name_preemptors(
    kube: KubeClient, namespace: str, history: list[Transition], shared: SharedReads | None
) -> None:
    """Name the job behind each preemption in `history` that names none yet (in place): Kueue
    names the preemptor by UID only; the history names its job, once.

    Example:
        >>> name_preemptors(kube, "ml", run.tracker.history, None)  # doctest: +SKIP
    """
    for i, t in enumerate(history):
        if t.status.state is RunState.PREEMPTED and _PREEMPTED_BY not in t.detail:
            found = find_preemptor(kube, namespace, t.status.message, shared)
            if found is not None:
                # An inferred preemption keeps saying where it was read from.
                detail = "; ".join(filter(None, (f"{_PREEMPTED_BY}{found.describe()}", t.detail)))
                history[i] = Transition(t.status, t.attempt, t.at, detail, t.key)
