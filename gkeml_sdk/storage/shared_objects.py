"""Shared data objects: the claims, volumes, storage classes and data sources that volumes
need. They hold data that outlives a run and may serve several runs and services, so no run or
service owns them: the one rule that marks them lives here."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

SHARED_LABEL = "gkeml.dev/shared"


def shared_metadata(name: str, namespace: str | None = None) -> dict[str, Any]:
    """Metadata of a shared object: its name (and namespace) and the shared marker.

    Example:
        >>> shared_metadata("weights", "ml")["labels"]
        {'app.kubernetes.io/managed-by': 'gkeml', 'gkeml.dev/shared': 'true'}
    """
    meta: dict[str, Any] = {"name": name}
    if namespace is not None:
        meta["namespace"] = namespace
    meta["labels"] = {"app.kubernetes.io/managed-by": "gkeml", SHARED_LABEL: "true"}
    return meta


def is_shared(obj: Mapping[str, Any]) -> bool:
    """True for an object that gkeml creates when missing and never updates or deletes.

    Example:
        >>> is_shared({"metadata": shared_metadata("weights", "ml")})
        True
        >>> is_shared({"metadata": {"name": "ft", "labels": {"gkeml.dev/run-id": "ft"}}})
        False
    """
    labels = (obj.get("metadata") or {}).get("labels") or {}
    return bool(labels.get(SHARED_LABEL) == "true")
