"""The reads behind a preview or an explanation that grow with the cluster, kept small: lists
in pages (`limit`/`continue`), and the Workloads holding quota picked by the API server with
the Workload CRD's selectable field `status.admission.clusterQueue` instead of every Workload."""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from gkeml_sdk.backends.kubernetes.api.kube import LIST_PAGE, KubeClient
from gkeml_sdk.backends.kubernetes.api.resources import Resource
from gkeml_sdk.backends.kubernetes.api.transport import METADATA_ONLY
from gkeml_sdk.core.objects import Obj
from gkeml_sdk.errors import ClusterError

PAGE = LIST_PAGE
ADMITTED_IN = "status.admission.clusterQueue"  # selectableFields of Kueue's Workload CRD


@dataclass(frozen=True)
class Holders:
    """Workloads that may hold quota in a ClusterQueue or its cohort, and whether they are all
    of them (False when only the caller's namespace could be read)."""

    workloads: tuple[Obj, ...]
    complete: bool


def list_pages(
    kube: KubeClient,
    res: Resource,
    namespace: str | None = None,
    *,
    label_selector: str = "",
    field_selector: str = "",
    limit: int = PAGE,
    pages: int | None = None,
    metadata_only: bool = False,
) -> list[Obj]:
    """Every object of a list read `limit` at a time (the first `pages` pages only, when
    given). A continue token that expired (410) restarts as one unpaginated list, as
    client-go's pager does (`FullListIfExpired`). `metadata_only`: each object's metadata
    alone (kind `PartialObjectMetadata`), as client-go's metadata client lists.

    Example:
        >>> list_pages(kube, WORKLOADS, field_selector="status.admission.clusterQueue=cq")
        ... # doctest: +SKIP
    """
    query = [("labelSelector", label_selector)] if label_selector else []
    query += [("fieldSelector", field_selector)] if field_selector else []
    accept = METADATA_ONLY if metadata_only else "application/json"
    items: list[Obj] = []
    token = ""
    for _ in itertools.count() if pages is None else range(pages):
        page = [*query, ("limit", str(limit))] + ([("continue", token)] if token else [])
        try:
            answer = kube.transport.call(
                "GET", res.path(namespace), action=f"list {res.plural}", query=page, accept=accept
            )
        except ClusterError as exc:
            if exc.status != 410 or not token:
                raise
            answer = kube.transport.call(
                "GET", res.path(namespace), action=f"list {res.plural}", query=query, accept=accept
            )
            items = []
        # A metadata-only list's items say what they are; an empty one's `items` is null.
        kind = {} if metadata_only else {"apiVersion": res.api_version, "kind": res.kind}
        items += [dict(i, **kind) for i in answer["items"] or []]
        token = str((answer.get("metadata") or {}).get("continue") or "")
        if not token:
            break
    return items


def quota_holders(
    kube: KubeClient, workloads: Resource, queues: set[str], namespace: str
) -> Holders:
    """Workloads admitted to one of `queues` (a ClusterQueue and its cohort's members): one
    paginated list selected by the server (`status.admission.clusterQueue=<cq>`, or `!=` for a
    cohort, since field selectors have no set form). An API server that cannot select on the
    field (Kubernetes before 1.32, or a Workload CRD without `selectableFields`) answers 400:
    then every Workload is listed, page by page, and filtered here; without the right to list
    them cluster-wide, only `namespace`'s.

    Example:
        >>> quota_holders(kube, WORKLOADS, {"acc-cq"}, "ml").complete  # doctest: +SKIP
        True
    """
    chosen = f"{ADMITTED_IN}={next(iter(queues))}" if len(queues) == 1 else f"{ADMITTED_IN}!="
    try:
        found = list_pages(kube, workloads, field_selector=chosen)
    except ClusterError as exc:
        if exc.status == 400:
            found = _admitted_to(list_pages(kube, workloads), queues)
        elif exc.status == 403:
            return Holders(
                tuple(_admitted_to(list_pages(kube, workloads, namespace), queues)), False
            )
        else:
            raise
    return Holders(tuple(_admitted_to(found, queues)), True)


def _admitted_to(workloads: list[Obj], queues: set[str]) -> list[Obj]:
    return [
        w
        for w in workloads
        if ((w.get("status") or {}).get("admission") or {}).get("clusterQueue") in queues
    ]
