"""What an admission plugin sees: the operation, the object being admitted and the cluster."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..resources import ResourceType

JOBSETS = "jobsets.jobset.x-k8s.io"
LWS = "leaderworkersets.leaderworkerset.x-k8s.io"
KUEUE_MARKER = "workloads.kueue.x-k8s.io"  # Kueue (and its webhooks) run when its CRDs do


@dataclass
class Review:
    operation: str  # CREATE | UPDATE
    rt: ResourceType
    obj: dict[str, Any]  # the new object; mutating plugins change it in place
    old: dict[str, Any] | None
    namespace: str
    # (resource key, namespace or "") -> stored objects; resource key -> installed?
    objects: Callable[[str, str], list[dict[str, Any]]]
    installed: Callable[[str], bool]

    @property
    def name(self) -> str:
        return str((self.obj.get("metadata") or {}).get("name") or "")

    def find(self, key: str, namespace: str, name: str) -> dict[str, Any] | None:
        return next(
            (o for o in self.objects(key, namespace) if o["metadata"].get("name") == name), None
        )


def labels(obj: dict[str, Any] | None) -> dict[str, str]:
    return dict(((obj or {}).get("metadata") or {}).get("labels") or {})


def annotations(obj: dict[str, Any] | None) -> dict[str, str]:
    return dict(((obj or {}).get("metadata") or {}).get("annotations") or {})


def dig(obj: Any, *path: str | int) -> Any:
    """obj[path...] or None when any step is missing."""
    cur = obj
    for p in path:
        if isinstance(p, int):
            if not isinstance(cur, list) or p >= len(cur):
                return None
        elif not isinstance(cur, dict):
            return None
        cur = cur[p] if isinstance(p, int) else cur.get(p)
    return cur
