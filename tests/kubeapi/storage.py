"""Storage kinds as kube-apiserver serves them: the defaults of PersistentVolumeClaim,
PersistentVolume and StorageClass, and their update rules (pkg/apis/core/validation
ValidatePersistentVolumeClaimUpdate / ValidatePersistentVolumeUpdate, pkg/apis/storage/validation
ValidateStorageClassUpdate): specs that are immutable once created."""

from __future__ import annotations

from typing import Any

from kubernetes.utils import parse_quantity

from .admission.fielderr import FieldError, invalid
from .resources import ResourceType

PVC, PV, SC = "persistentvolumeclaims", "persistentvolumes", "storageclasses.storage.k8s.io"
# PersistentVolumeSpec fields that are not the volume source (the source is immutable).
_PV_NOT_SOURCE = {
    "capacity",
    "accessModes",
    "claimRef",
    "persistentVolumeReclaimPolicy",
    "storageClassName",
    "mountOptions",
    "volumeMode",
    "nodeAffinity",
    "volumeAttributesClassName",
}


def storage_defaults(rt: ResourceType, obj: dict[str, Any], creating: bool) -> None:
    """SetDefaults_* (every write) and the registry's PrepareForCreate status (create only)."""
    spec = obj.get("spec") if isinstance(obj.get("spec"), dict) else None
    if rt.key == SC:
        obj.setdefault("reclaimPolicy", "Delete")
        obj.setdefault("volumeBindingMode", "Immediate")
    elif rt.key == PVC and spec is not None:
        spec.setdefault("volumeMode", "Filesystem")
        _normalize_data_sources(spec)
        if creating:
            obj["status"] = {"phase": "Pending"}
    elif rt.key == PV and spec is not None:
        spec.setdefault("persistentVolumeReclaimPolicy", "Retain")
        spec.setdefault("volumeMode", "Filesystem")
        if creating:
            obj["status"] = {"phase": "Pending"}


def storage_update_causes(
    rt: ResourceType, old: dict[str, Any], new: dict[str, Any]
) -> list[dict[str, str]]:
    """What the apiserver refuses in an update of a storage object (empty for other kinds)."""
    if rt.key == SC:
        errs = _storage_class(old, new)
    elif rt.key == PVC:
        errs = _claim(old, new)
    elif rt.key == PV:
        errs = _volume(old.get("spec") or {}, new.get("spec") or {})
    else:
        return []
    return [e.cause() for e in errs]


def _normalize_data_sources(spec: dict[str, Any]) -> None:
    # AnyVolumeDataSource (GA): dataSource and dataSourceRef are kept in step.
    source, ref = spec.get("dataSource"), spec.get("dataSourceRef")
    if source and not ref:
        spec["dataSourceRef"] = dict(source)
    if ref and not source and not ref.get("namespace"):
        spec["dataSource"] = {k: v for k, v in ref.items() if k in ("apiGroup", "kind", "name")}


def _storage_class(old: dict[str, Any], new: dict[str, Any]) -> list[FieldError]:
    errs = []
    for key in ("parameters", "provisioner", "reclaimPolicy"):
        if (old.get(key) or None) != (new.get(key) or None):
            errs.append(FieldError("Forbidden", key, f"updates to {key} are forbidden."))
    if old.get("volumeBindingMode") != new.get("volumeBindingMode"):
        mode = new.get("volumeBindingMode")
        errs.append(invalid("volumeBindingMode", mode, "field is immutable"))
    return errs


def _claim(old: dict[str, Any], new: dict[str, Any]) -> list[FieldError]:
    before, after = dict(old.get("spec") or {}), dict(new.get("spec") or {})
    if not before.get("volumeName"):
        before["volumeName"] = after.get("volumeName")  # the binder sets it once
        before = {k: v for k, v in before.items() if v is not None}
    bound = (new.get("status") or {}).get("phase") == "Bound"
    if bound:
        key = "volumeAttributesClassName"
        if key in after:
            before[key] = after[key]
        else:
            before.pop(key, None)
        before["resources"] = _with_storage(before, _storage(after))
    errs = []
    if before != after:
        errs.append(
            FieldError(
                "Forbidden",
                "spec",
                "spec is immutable after creation except resources.requests and "
                "volumeAttributesClassName for bound claims",
            )
        )
    capacity = ((old.get("status") or {}).get("capacity") or {}).get("storage", "0")
    new_size = _storage(after)
    if (
        new_size is not None
        and _less(new_size, _storage(old.get("spec") or {}))
        and parse_quantity(new_size) <= parse_quantity(capacity)
    ):
        path = "spec.resources.requests.storage"
        errs.append(FieldError("Forbidden", path, "field can not be less than status.capacity"))
    if (old.get("spec") or {}).get("volumeMode") != after.get("volumeMode"):
        errs.append(invalid("volumeMode", after.get("volumeMode"), "field is immutable"))
    return errs


def _volume(before: dict[str, Any], after: dict[str, Any]) -> list[FieldError]:
    errs = []
    source = {k: v for k, v in before.items() if k not in _PV_NOT_SOURCE}
    if source != {k: v for k, v in after.items() if k not in _PV_NOT_SOURCE}:
        detail = "spec.persistentvolumesource is immutable after creation"
        errs.append(FieldError("Forbidden", "spec.persistentvolumesource", detail))
    if before.get("volumeMode") != after.get("volumeMode"):
        errs.append(invalid("spec.volumeMode", after.get("volumeMode"), "field is immutable"))
    if before.get("nodeAffinity") and before.get("nodeAffinity") != after.get("nodeAffinity"):
        errs.append(invalid("spec.nodeAffinity", after.get("nodeAffinity"), "field is immutable"))
    return errs


def _storage(spec: dict[str, Any]) -> str | None:
    value = ((spec.get("resources") or {}).get("requests") or {}).get("storage")
    return None if value is None else str(value)


def _with_storage(spec: dict[str, Any], size: str | None) -> dict[str, Any]:
    resources = dict(spec.get("resources") or {})
    requests = dict(resources.get("requests") or {})
    if size is None:
        requests.pop("storage", None)
    else:
        requests["storage"] = size
    resources["requests"] = requests
    return resources


def _less(a: str, b: str | None) -> bool:
    return b is not None and parse_quantity(a) < parse_quantity(b)
