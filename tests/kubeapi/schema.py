"""CRD structural schemas: pruning/defaulting like kube-apiserver and jsonschema conversion."""

from __future__ import annotations

import copy
import threading
from typing import Any

from jsonschema import Draft4Validator

_DROP = {"description", "x-kubernetes-validations", "example", "externalDocs", "default"}
_validators: dict[tuple[str, str], Draft4Validator] = {}
_lock = threading.Lock()


def go_pattern(pattern: str) -> str:
    """A Go (RE2) pattern as Python reads it: RE2 takes an inline flag group such as `(?i)`
    anywhere (Kueue's AdmissionCheck CRD has `^(?i)[a-z]...`), Python only at the start."""
    for flag in ("(?i)",):
        if flag in pattern and not pattern.startswith(flag):
            pattern = flag + pattern.replace(flag, "", 1)
    return pattern


def to_jsonschema(node: Any, root: bool = False) -> Any:
    """OpenAPI v3 (Kubernetes flavour) -> Draft 4 jsonschema. CEL rules are dropped."""
    if isinstance(node, list):
        return [to_jsonschema(x) for x in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in _DROP or key.startswith("x-kubernetes-"):
            continue
        if key == "properties":
            out[key] = {k: to_jsonschema(v) for k, v in value.items()}
        elif key in ("items", "additionalProperties", "not", "allOf", "anyOf", "oneOf"):
            out[key] = to_jsonschema(value)
        elif key == "pattern":
            out[key] = go_pattern(value)
        else:
            out[key] = value
    if node.get("x-kubernetes-int-or-string"):
        out.pop("type", None)
        out.setdefault("anyOf", [{"type": "integer"}, {"type": "string"}])
    if node.get("nullable"):
        out.pop("nullable", None)
        if "type" in out:
            out["type"] = [out["type"], "null"]
        if "enum" in out:
            out["enum"] = [*out["enum"], None]
    if node.get("x-kubernetes-embedded-resource") or root:
        props = out.setdefault("properties", {})
        props.setdefault("apiVersion", {"type": "string"})
        props.setdefault("kind", {"type": "string"})
        # ObjectMeta is validated separately, as kube-apiserver does.
        props["metadata"] = {"type": "object"}
    return out


def validator_for(crd_name: str, version: str, schema: dict[str, Any]) -> Draft4Validator:
    key = (crd_name, version)
    with _lock:
        found = _validators.get(key)
    if found is None:
        found = Draft4Validator(to_jsonschema(schema, root=True))
        with _lock:
            _validators[key] = found
    return found


def prune_and_default(
    value: Any, schema: dict[str, Any], path: str, unknown: list[str], root: bool = False
) -> None:
    """In place: drop unknown fields and non-nullable nulls, then apply `default`s."""
    if isinstance(value, list):
        items = schema.get("items")
        if isinstance(items, dict):
            for i, item in enumerate(value):
                prune_and_default(item, items, f"{path}[{i}]", unknown)
        return
    if not isinstance(value, dict):
        return
    props: dict[str, Any] | None = schema.get("properties")
    addl = schema.get("additionalProperties")
    preserve = bool(schema.get("x-kubernetes-preserve-unknown-fields"))
    embedded = root or bool(schema.get("x-kubernetes-embedded-resource"))
    for key in list(value):
        child = value[key]
        sub: dict[str, Any] | None = None
        if props is not None and key in props:
            sub = props[key]
        elif isinstance(addl, dict):
            sub = addl
        elif (embedded and key in ("apiVersion", "kind", "metadata")) or preserve or addl is True:
            continue
        else:
            unknown.append(f"{path}.{key}" if path else key)
            del value[key]
            continue
        if embedded and key == "metadata" and props is not None and key in props:
            continue  # ObjectMeta is never pruned against the CRD schema
        if child is None and not sub.get("nullable"):
            del value[key]  # kube-apiserver prunes nulls of non-nullable fields before defaulting
            continue
        prune_and_default(child, sub, f"{path}.{key}" if path else key, unknown)
    if props:
        for key, sub in props.items():
            if key not in value and "default" in sub:
                value[key] = copy.deepcopy(sub["default"])
                prune_and_default(value[key], sub, f"{path}.{key}" if path else key, [])
