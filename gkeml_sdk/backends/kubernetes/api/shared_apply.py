"""Shared data objects on the cluster (claims, volumes, storage classes, data sources): created
when missing, before the objects of a run or service, and otherwise left as they are: their
specs are largely immutable, and other runs may be reading their data."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from gkeml_sdk.backends.kubernetes.api.kube import KubeClient
from gkeml_sdk.backends.kubernetes.api.resources import resource_of
from gkeml_sdk.core.objects import Obj
from gkeml_sdk.errors import ClusterError
from gkeml_sdk.storage.shared_objects import is_shared

# Fields of the object that are not what we compiled, but who and when.
_NOT_SPEC = ("apiVersion", "kind", "metadata", "status")


def split_shared(objects: Iterable[Obj]) -> tuple[list[Obj], list[Obj]]:
    """The shared objects and the rest, each in their order.

    Example:
        >>> from gkeml_sdk.storage.shared_objects import shared_metadata
        >>> claim = {"kind": "PersistentVolumeClaim", "metadata": shared_metadata("w", "ml")}
        >>> split_shared([claim, {"kind": "Job", "metadata": {"name": "ft"}}])[1]
        [{'kind': 'Job', 'metadata': {'name': 'ft'}}]
    """
    shared: list[Obj] = []
    owned: list[Obj] = []
    for obj in objects:
        (shared if is_shared(obj) else owned).append(obj)
    return shared, owned


def ensure_shared(kube: KubeClient, objects: Iterable[Obj]) -> None:
    """Create each shared object of `objects` that is missing, in order. One that exists is
    used as it is when it carries what we compiled; one that differs is never changed
    (`ClusterError` naming the fields and the fix).

    Example:
        >>> ensure_shared(kube, job.compile().objects)  # doctest: +SKIP
    """
    for obj in objects:
        if not is_shared(obj):
            continue
        res, meta = resource_of(obj), obj["metadata"]
        namespace = meta.get("namespace") if res.namespaced else None
        for _ in range(3):  # a 409 on create, then gone on read: deleted meanwhile, create again
            if kube.create(obj) is not None:
                break
            existing = kube.find(res, meta["name"], namespace)
            if existing is not None:
                _check(obj, existing)
                break
        else:
            raise ClusterError(
                f"create {obj['kind']} {meta['name']}",
                reason="Conflict",
                message="the name stays taken but the object cannot be read",
            )


def require_claims(kube: KubeClient, objects: Iterable[Obj], action: str) -> None:
    """Check that each shared claim of `objects` exists and is not being deleted, creating
    nothing: `ClusterError` naming the claim otherwise. What a later attempt does (the
    controller has no rights over PersistentVolumes and StorageClasses, and needs none: the
    claim binds the volume the submission created).

    Example:
        >>> require_claims(kube, job.compile().objects, "create attempt 2 of ft")  # doctest: +SKIP
    """
    for obj in objects:
        if obj["kind"] != "PersistentVolumeClaim" or not is_shared(obj):
            continue
        meta = obj["metadata"]
        found = kube.find(resource_of(obj), meta["name"], meta["namespace"])
        if found is None or (found.get("metadata") or {}).get("deletionTimestamp"):
            state = "is gone" if found is None else "is being deleted"
            raise ClusterError(
                action,
                reason="VolumeMissing",
                message=f"the shared volume claim {meta['namespace']}/{meta['name']} {state}; "
                "a later attempt uses the volumes its submission created and creates none "
                "(the run controller may not create volumes)",
                hint="submit the run again: the submission creates the missing volume with "
                "your rights",
            )


def differences(wanted: Any, found: Any, path: str = "") -> list[str]:
    """Paths where `found` lacks what `wanted` sets (fields the server adds are not compared).

    Example:
        >>> differences({"spec": {"a": 1, "b": [1]}}, {"spec": {"a": 2, "b": [1], "c": 3}})
        ['spec.a: 2 on the cluster, 1 compiled']
    """
    if isinstance(wanted, dict) and isinstance(found, dict):
        out: list[str] = []
        for key, value in wanted.items():
            if path == "" and key in _NOT_SPEC:
                continue
            sub = f"{path}.{key}" if path else str(key)
            if key not in found:
                out.append(f"{sub}: missing on the cluster, {value!r} compiled")
            else:
                out.extend(differences(value, found[key], sub))
        return out
    if wanted != found:
        return [f"{path}: {found!r} on the cluster, {wanted!r} compiled"]
    return []


def _check(wanted: Obj, existing: Obj) -> None:
    kind, name = wanted["kind"], wanted["metadata"]["name"]
    where = existing.get("metadata") or {}
    if where.get("deletionTimestamp"):
        raise ClusterError(
            f"create {kind} {name}",
            status=409,
            reason="AlreadyExists",
            message=f"the {kind} {name!r} is being deleted",
            hint="wait until it is gone (a claim goes once no pod uses it), then submit again",
        )
    diffs = differences(wanted, existing)
    if diffs:
        scope = f" -n {where['namespace']}" if where.get("namespace") else ""
        raise ClusterError(
            f"create {kind} {name}",
            status=409,
            reason="AlreadyExists",
            message=f"a {kind} named {name!r} already exists with another spec ("
            + "; ".join(diffs)
            + f"); gkeml never changes a shared {kind}, whose spec is largely immutable and "
            "whose data other runs may use",
            hint="give the volume another name (a different claim name, or other parameters), "
            f"or delete the existing one first: kubectl delete {kind.lower()} {name}{scope}",
        )
