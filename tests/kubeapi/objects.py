"""Small helpers on object dicts: copying, timestamps, uids, version views and comparisons."""

from __future__ import annotations

import json
import random
import uuid
from datetime import UTC, datetime
from typing import Any, TypeVar

from .resources import ResourceType

T = TypeVar("T")
_NAME_CHARS = "bcdfghjklmnpqrstvwxz2456789"  # alphabet of apimachinery's SimpleNameGenerator
_SERVER_META = ("resourceVersion", "managedFields")


def json_copy(obj: T) -> T:
    """Deep copy of JSON data; faster than copy.deepcopy for big CRD-shaped documents."""
    copied: T = json.loads(json.dumps(obj))
    return copied


def now_rfc3339() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def new_uid() -> str:
    return str(uuid.uuid4())


def generated_name(prefix: str) -> str:
    return prefix + "".join(random.choice(_NAME_CHARS) for _ in range(5))


def meta(obj: dict[str, Any]) -> dict[str, Any]:
    m = obj.get("metadata")
    if not isinstance(m, dict):
        m = {}
        obj["metadata"] = m
    return m


def comparable(obj: dict[str, Any]) -> dict[str, Any]:
    """The object without fields that change on every write (for no-op detection)."""
    out = dict(obj)
    m = dict(out.get("metadata") or {})
    for key in _SERVER_META:
        m.pop(key, None)
    out["metadata"] = m
    return out


def spec_changed(old: dict[str, Any], new: dict[str, Any]) -> bool:
    """Generation bumps when anything but metadata and status changes."""
    skip = {"metadata", "status", "apiVersion", "kind"}
    a = {k: v for k, v in old.items() if k not in skip}
    b = {k: v for k, v in new.items() if k not in skip}
    return a != b


def view(obj: dict[str, Any], rt: ResourceType, version: str) -> dict[str, Any]:
    """Object as served at `version` (CRD versions share storage: no schema conversion)."""
    api_version = rt.api_version(version)
    if obj.get("apiVersion") == api_version:
        return obj
    out = dict(obj)
    out["apiVersion"] = api_version
    return out


def list_item(obj: dict[str, Any], rt: ResourceType, version: str) -> dict[str, Any]:
    """Typed built-in lists omit apiVersion/kind on items; CR lists keep them."""
    if not rt.builtin:
        return view(obj, rt, version)
    return {k: v for k, v in obj.items() if k not in ("apiVersion", "kind")}


def parse_bool(value: str | None) -> bool:
    return (value or "").lower() in ("1", "t", "true")
