"""Kueue's visibility API pages its pending lists as its REST storage does
(`pkg/visibility/api/rest/pending_workloads_lq.go`): `offset` (default 0) pending Workloads are
skipped and at most `limit` (default 1000) returned, in Kueue's order."""

from __future__ import annotations

from typing import Any

DEFAULT_LIMIT = 1000  # Kueue's constants.DefaultPendingWorkloadsLimit


def pending_page(answer: Any, query: dict[str, str]) -> Any:
    """`answer` (a PendingWorkloadsSummary) cut to the page `query` asks for."""
    if not isinstance(answer, dict) or not isinstance(answer.get("items"), list):
        return answer
    offset = int(query.get("offset") or 0)
    limit = int(query.get("limit") or DEFAULT_LIMIT)
    return {**answer, "items": answer["items"][offset : offset + limit]}
