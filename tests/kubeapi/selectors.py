"""Label and field selector parsing/matching with the kube-apiserver grammar."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

LABEL_NAME = r"[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?"
DNS_SUBDOMAIN = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*"
LABEL_KEY_RE = re.compile(rf"^({DNS_SUBDOMAIN}/)?{LABEL_NAME}$")
LABEL_VALUE_RE = re.compile(rf"^({LABEL_NAME})?$")

_KEY = r"([^\s=!<>(),]+)"
_NOT_EXISTS = re.compile(rf"!\s*{_KEY}")
_SET = re.compile(rf"{_KEY}\s+(in|notin)\s*\(([^)]*)\)")
_CMP = re.compile(rf"{_KEY}\s*(==|=|!=|>|<)\s*([^\s=!<>(),]*)")
_EXISTS = re.compile(_KEY)

Matcher = Callable[[dict[str, Any]], bool]

# Field selectors the real server accepts besides metadata.name / metadata.namespace.
EXTRA_FIELDS: dict[str, frozenset[str]] = {
    "pods": frozenset(
        {
            "spec.nodeName",
            "spec.restartPolicy",
            "spec.schedulerName",
            "spec.serviceAccountName",
            "spec.hostNetwork",
            "status.phase",
            "status.podIP",
            "status.nominatedNodeName",
        }
    ),
    "events": frozenset(
        {
            "involvedObject.kind",
            "involvedObject.namespace",
            "involvedObject.name",
            "involvedObject.uid",
            "involvedObject.apiVersion",
            "involvedObject.resourceVersion",
            "involvedObject.fieldPath",
            "reason",
            "reportingComponent",
            "source",
            "type",
        }
    ),
    "secrets": frozenset({"type"}),
    "namespaces": frozenset({"status.phase"}),
    "nodes": frozenset({"spec.unschedulable"}),
    "jobs.batch": frozenset({"status.successful"}),
}


def _split_top(text: str) -> list[str]:
    parts: list[str] = []
    cur: list[str] = []
    depth = 0
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    parts.append("".join(cur))
    return [p.strip() for p in parts if p.strip()]


def _check_key(key: str) -> None:
    if len(key) > 316 or not LABEL_KEY_RE.match(key):
        raise ValueError(f"invalid label key {key!r}")


def _check_value(value: str) -> None:
    if len(value) > 63 or not LABEL_VALUE_RE.match(value):
        raise ValueError(f"invalid label value: {value!r}")


def _requirement(req: str) -> Callable[[dict[str, str]], bool]:
    if m := _NOT_EXISTS.fullmatch(req):
        key = m.group(1)
        _check_key(key)
        return lambda labels: key not in labels
    if m := _SET.fullmatch(req):
        key, op = m.group(1), m.group(2)
        values = {v.strip() for v in m.group(3).split(",") if v.strip()}
        _check_key(key)
        for v in values:
            _check_value(v)
        if op == "in":
            return lambda labels: labels.get(key) in values
        return lambda labels: labels.get(key) not in values
    if m := _CMP.fullmatch(req):
        key, op, value = m.group(1), m.group(2), m.group(3)
        _check_key(key)
        if op in (">", "<"):
            bound = int(value)
            gt = op == ">"

            def cmp(labels: dict[str, str]) -> bool:
                raw = labels.get(key)
                if raw is None or not raw.lstrip("-").isdigit():
                    return False
                return int(raw) > bound if gt else int(raw) < bound

            return cmp
        _check_value(value)
        if op == "!=":
            return lambda labels: labels.get(key) != value
        return lambda labels: key in labels and labels[key] == value
    if m := _EXISTS.fullmatch(req):
        key = m.group(1)
        _check_key(key)
        return lambda labels: key in labels
    raise ValueError(f"unable to parse requirement: {req!r}")


def parse_label_selector(text: str | None) -> Matcher:
    """Return a predicate on objects; raises ValueError on a malformed selector."""
    if not text:
        return lambda obj: True
    reqs = [_requirement(r) for r in _split_top(text)]

    def match(obj: dict[str, Any]) -> bool:
        labels = (obj.get("metadata") or {}).get("labels") or {}
        return all(r(labels) for r in reqs)

    return match


def _lookup(obj: dict[str, Any], path: str) -> str:
    cur: Any = obj
    for part in path.split("."):
        cur = cur.get(part) if isinstance(cur, dict) else None
    if isinstance(cur, bool):
        return "true" if cur else "false"
    return "" if cur is None else str(cur)


def parse_field_selector(
    text: str | None, resource_key: str, selectable: frozenset[str] = frozenset()
) -> Matcher:
    """Return a predicate; raises ValueError for syntax errors or unsupported field labels.
    `selectable` are a CRD version's `selectableFields` (GA in Kubernetes 1.32): as in
    apiextensions-apiserver, a path absent from an object selects as the empty string."""
    if not text:
        return lambda obj: True
    allowed = {"metadata.name", "metadata.namespace"} | EXTRA_FIELDS.get(resource_key, set())
    allowed |= selectable
    terms: list[tuple[str, bool, str]] = []
    for part in _split_top(text):
        m = re.fullmatch(r"([^=!\s]+)\s*(==|=|!=)\s*(.*)", part)
        if not m:
            raise ValueError(f"invalid selector: '{text}'; can't understand '{part}'")
        field, op, value = m.group(1), m.group(2), m.group(3).strip()
        if field not in allowed:
            raise ValueError(f"field label not supported: {field}")
        terms.append((field, op == "!=", value))

    def match(obj: dict[str, Any]) -> bool:
        return all((_lookup(obj, f) != v) if neg else (_lookup(obj, f) == v) for f, neg, v in terms)

    return match
