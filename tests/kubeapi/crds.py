"""Locating, parsing (cached per process) and selecting CRD manifests for the fake server."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml

from tests.shared_dir import SHARED

_Loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_cache: dict[tuple[str, float], list[dict[str, Any]]] = {}
_cache_lock = threading.Lock()


def shared_crds_dir() -> Path | None:
    """`$GKEML_SHARED/crds` (else `<repo>/../shared/crds`) if it exists here, else None."""
    candidate = SHARED / "crds"
    return candidate if candidate.is_dir() else None


def load_crd_file(path: Path) -> list[dict[str, Any]]:
    """Parse one YAML file into its CustomResourceDefinition documents (cached by mtime)."""
    key = (str(path.resolve()), path.stat().st_mtime)
    with _cache_lock:
        if key in _cache:
            return _cache[key]
    with path.open(encoding="utf-8") as fh:
        docs = [d for d in yaml.load_all(fh, Loader=_Loader) if isinstance(d, dict)]
    crds = [d for d in docs if d.get("kind") == "CustomResourceDefinition"]
    with _cache_lock:
        _cache[key] = crds
    return crds


def load_crd_dir(crd_dir: Path) -> list[dict[str, Any]]:
    """All CRDs below `crd_dir` (recursively, sorted by path for determinism)."""
    out: list[dict[str, Any]] = []
    for path in sorted(crd_dir.rglob("*.y*ml")):
        out.extend(load_crd_file(path))
    return out


def crd_matches(crd: dict[str, Any], patterns: Iterable[str]) -> bool:
    """True if any pattern equals the CRD's name, group, plural or kind (case-insensitive)."""
    spec = crd["spec"]
    names = {
        crd["metadata"]["name"].lower(),
        spec["group"].lower(),
        spec["names"]["plural"].lower(),
        spec["names"]["kind"].lower(),
    }
    return any(p.lower() in names for p in patterns)


def select_crds(
    crds: list[dict[str, Any]],
    include: Iterable[str] | None,
    exclude: Iterable[str] = (),
) -> list[dict[str, Any]]:
    include_list = None if include is None else list(include)
    exclude_list = list(exclude)
    chosen: dict[str, dict[str, Any]] = {}
    for crd in crds:
        if include_list is not None and not crd_matches(crd, include_list):
            continue
        if exclude_list and crd_matches(crd, exclude_list):
            continue
        # A later file with the same CRD name wins, as `kubectl apply` of both would.
        chosen[crd["metadata"]["name"]] = crd
    return list(chosen.values())


_CONDITIONS = (
    ("NamesAccepted", "NoConflicts", "no conflicts found"),
    ("Established", "InitialNamesAccepted", "the initial names have been accepted"),
)


def crd_object(doc: dict[str, Any], name: str) -> dict[str, Any]:
    """The CustomResourceDefinition object as served by apiextensions, status Established."""
    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    spec = doc["spec"]
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {
            "name": name,
            "uid": str(uuid.uuid4()),
            "generation": 1,
            "creationTimestamp": now,
            "annotations": dict(doc["metadata"].get("annotations") or {}),
        },
        # The large cached spec is shared, not copied: stored objects are never mutated.
        "spec": spec,
        "status": {
            "acceptedNames": spec["names"],
            "storedVersions": [v["name"] for v in spec["versions"] if v.get("storage")],
            "conditions": [
                {"type": t, "status": "True", "reason": r, "message": m, "lastTransitionTime": now}
                for t, r, m in _CONDITIONS
            ],
        },
    }
