"""The CRDs' CEL rules (`x-kubernetes-validations`) that our CRDs carry, evaluated in Python.

`self == oldSelf` (and any rule naming `oldSelf`) is a transition rule: it runs only where the
old object has a value at the same place (lists correlate only when `listType: map`). Other
rules are looked up by their text in `RULES`; a rule not there is not checked (listed in the
README as simplified)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .fielderr import OMIT, FieldError

Check = Callable[[Any, Any], bool]  # (self, oldSelf) -> rule holds
_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
_HOST = "kubernetes.io/hostname"


def _last_label(levels: Any) -> Any:
    return levels[-1].get("nodeLabel") if levels else None


def _unique(items: list[Any]) -> bool:
    return all(items.count(i) == 1 for i in items)


RULES: dict[str, Check] = {
    "!(has(self.startupPolicy) && self.startupPolicy.startupPolicyOrder == 'InOrder' && "
    "self.replicatedJobs.exists(x, has(x.dependsOn)))": lambda s, o: (
        not (
            (s.get("startupPolicy") or {}).get("startupPolicyOrder") == "InOrder"
            and any("dependsOn" in r for r in s.get("replicatedJobs") or [])
        )
    ),
    "self.templates.all(t, !has(t.metadata.namespace) || size(t.metadata.namespace) == 0)": (
        lambda s, o: all(
            not (t.get("metadata") or {}).get("namespace") for t in s.get("templates") or []
        )
    ),
    "!has(self.cohortName) && has(self.resourceGroups) ? self.resourceGroups.all(rg, "
    "rg.flavors.all(f, f.resources.all(r, !has(r.borrowingLimit)))) : true": lambda s, o: (
        bool(s.get("cohortName"))
        or all(
            "borrowingLimit" not in r
            for rg in s.get("resourceGroups") or []
            for f in rg.get("flavors") or []
            for r in f.get("resources") or []
        )
    ),
    "!has(self.preference) || (self.whenCanBorrow == 'TryNextFlavor' && self.whenCanPreempt == "
    "'TryNextFlavor')": lambda s, o: (
        "preference" not in s
        or (
            s.get("whenCanBorrow") == "TryNextFlavor" and s.get("whenCanPreempt") == "TryNextFlavor"
        )
    ),
    "!(self.reclaimWithinCohort == 'Never' && has(self.borrowWithinCohort) && "
    "self.borrowWithinCohort.policy != 'Never')": lambda s, o: (
        not (
            s.get("reclaimWithinCohort") == "Never"
            and "borrowWithinCohort" in s
            and (s["borrowWithinCohort"] or {}).get("policy") != "Never"
        )
    ),
    "self.flavors.all(x, size(x.resources) == size(self.coveredResources))": lambda s, o: all(
        len(f.get("resources") or []) == len(s.get("coveredResources") or [])
        for f in s.get("flavors") or []
    ),
    "!has(oldSelf.topologyName) || (has(self.topologyName) && self.topologyName == "
    "oldSelf.topologyName)": lambda s, o: (
        "topologyName" not in o or s.get("topologyName") == o["topologyName"]
    ),
    "!has(self.topologyName) || self.nodeLabels.size() >= 1": lambda s, o: (
        "topologyName" not in s or len(s.get("nodeLabels") or {}) >= 1
    ),
    "self.all(x, x.effect in ['NoSchedule', 'PreferNoSchedule', 'NoExecute'])": lambda s, o: all(
        x.get("effect") in _EFFECTS for x in s
    ),
    "self.all(x, !has(x.effect) || x.effect in ['NoSchedule', 'PreferNoSchedule', "
    "'NoExecute'])": lambda s, o: all("effect" not in x or x["effect"] in _EFFECTS for x in s),
    "self.all(x, !has(x.key) ? x.operator == 'Exists' : true)": lambda s, o: all(
        "key" in x or x.get("operator") == "Exists" for x in s
    ),
    "self.all(x, !has(x.operator) || x.operator in ['Equal', 'Exists'])": lambda s, o: all(
        x.get("operator", "Equal") in ("Equal", "Exists") for x in s
    ),
    "self.all(x, has(x.operator) && x.operator == 'Exists' ? !has(x.value) : true)": (
        lambda s, o: all(not (x.get("operator") == "Exists" and "value" in x) for x in s)
    ),
    "self.all(x, has(x.tolerationSeconds) ? x.effect == 'NoExecute' : true)": lambda s, o: all(
        "tolerationSeconds" not in x or x.get("effect") == "NoExecute" for x in s
    ),
    "self == oldSelf || (self[size(self) - 1].nodeLabel == 'kubernetes.io/hostname' && "
    "oldSelf[size(oldSelf) - 1].nodeLabel == 'kubernetes.io/hostname')": lambda s, o: (
        s == o or (_last_label(s) == _HOST and _last_label(o) == _HOST)
    ),
    "size(self.filter(i, i.nodeLabel == 'kubernetes.io/hostname')) == 0 || self[size(self) - "
    "1].nodeLabel == 'kubernetes.io/hostname'": lambda s, o: (
        not any(i.get("nodeLabel") == _HOST for i in s) or _last_label(s) == _HOST
    ),
    "size(self.filter(i, size(self.filter(j, j == i)) > 1)) == 0": lambda s, o: _unique(s),
    "self == oldSelf": lambda s, o: s == o,
}
ABSENT: Any = object()  # "no old value here" (None is a value: JSON null)
_ABSENT = ABSENT


def _error(path: str, value: Any, rule: dict[str, Any]) -> FieldError:
    detail = rule.get("message") or f"failed rule: {rule['rule']}"
    if rule.get("reason") == "FieldValueForbidden":
        return FieldError("Forbidden", path, detail)
    if rule.get("reason") == "FieldValueRequired":
        return FieldError("Required", path, detail)
    shown = OMIT if isinstance(value, dict | list) else value
    return FieldError("Invalid", path, detail, shown)


def cel_errors(schema: dict[str, Any], new: Any, old: Any = _ABSENT) -> list[FieldError]:
    """Every failing rule of `schema` on `new` (with `old` for transition rules)."""
    out: list[FieldError] = []
    _walk(schema, new, old, "", out)
    return out


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _walk(schema: dict[str, Any], value: Any, old: Any, path: str, out: list[FieldError]) -> None:
    for rule in schema.get("x-kubernetes-validations") or []:
        text = " ".join(str(rule.get("rule", "")).split())
        check = RULES.get(text)
        if check is None or ("oldSelf" in text and old is _ABSENT):
            continue
        try:
            ok = check(value, None if old is _ABSENT else old)
        except (AttributeError, TypeError, IndexError, KeyError):
            ok = True  # a shape the schema already rejects; CEL would not run on it
        if not ok:
            out.append(_error(path, value, rule))
    if isinstance(value, dict):
        props = schema.get("properties") or {}
        extra = schema.get("additionalProperties")
        for key, child in value.items():
            sub = props.get(key) or (extra if isinstance(extra, dict) else None)
            if sub is not None:
                was = old.get(key, _ABSENT) if isinstance(old, dict) else _ABSENT
                _walk(sub, child, was, _join(path, key), out)
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        keys = schema.get("x-kubernetes-list-map-keys") or []
        by_key: dict[Any, Any] = {}
        if schema.get("x-kubernetes-list-type") == "map" and keys and isinstance(old, list):
            by_key = {tuple(o.get(k) for k in keys): o for o in old if isinstance(o, dict)}
        for i, item in enumerate(value):
            was = by_key.get(tuple(item.get(k) for k in keys), _ABSENT) if by_key else _ABSENT
            _walk(schema["items"], item, was, f"{path}[{i}]", out)


def has_rules(schema: Any) -> bool:
    """True if any x-kubernetes-validations appear anywhere in `schema`."""
    if isinstance(schema, dict):
        return "x-kubernetes-validations" in schema or any(has_rules(v) for v in schema.values())
    if isinstance(schema, list):
        return any(has_rules(v) for v in schema)
    return False
