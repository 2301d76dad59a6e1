"""Where a run record keeps each of its keys: since schema 4 what a listing reads is in the
record's annotations (`record.gkeml.dev/<key>`), the code and its paths in its data; before,
everything was in its data. Tests that read or damage a record go through these."""

from __future__ import annotations

from typing import Any

from gkeml_sdk.backends.kubernetes.runs.run_record import RECORD_ANNOTATION


def _annotations(obj: dict[str, Any]) -> dict[str, Any]:
    return dict((obj.get("metadata") or {}).get("annotations") or {})


def record_field(obj: dict[str, Any], key: str) -> str:
    """The value of the record's `key`, wherever the record keeps it."""
    annotations = _annotations(obj)
    if RECORD_ANNOTATION + key in annotations:
        return str(annotations[RECORD_ANNOTATION + key])
    return str((obj.get("data") or {})[key])


def set_record_field(obj: dict[str, Any], key: str, value: object) -> None:
    """Write `value` as the record's `key` where the record keeps it (None: delete it), as a
    `kubectl edit` of that key would."""
    annotations = (obj.get("metadata") or {}).get("annotations") or {}
    where = annotations if RECORD_ANNOTATION + key in annotations else obj.setdefault("data", {})
    name = RECORD_ANNOTATION + key if where is annotations else key
    if value is None:
        where.pop(name, None)
    else:
        where[name] = value


def record_fields(obj: dict[str, Any]) -> dict[str, str]:
    """Every key of the record and its value (the code files included)."""
    listed = {
        k[len(RECORD_ANNOTATION) :]: str(v)
        for k, v in _annotations(obj).items()
        if k.startswith(RECORD_ANNOTATION)
    }
    return {**(obj.get("data") or {}), **listed}
