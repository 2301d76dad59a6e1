"""Coarse server-side-apply field ownership: leaf paths per manager, lists treated as atomic."""

from __future__ import annotations

import copy
from dataclasses import dataclass, replace
from typing import Any

Path = tuple[str, ...]
MISSING: Any = object()
_META_TRACKED = ("labels", "annotations", "finalizers", "ownerReferences")


@dataclass(frozen=True)
class Entry:
    manager: str
    operation: str  # "Apply" | "Update"
    subresource: str  # "" | "status"
    api_version: str
    time: str
    fields: frozenset[Path]

    def render(self) -> dict[str, Any]:
        tree: dict[str, Any] = {}
        for path in sorted(self.fields):
            node = tree
            for seg in path:
                node = node.setdefault(f"f:{seg}", {})
        out: dict[str, Any] = {
            "manager": self.manager,
            "operation": self.operation,
            "apiVersion": self.api_version,
            "time": self.time,
            "fieldsType": "FieldsV1",
            "fieldsV1": tree,
        }
        if self.subresource:
            out["subresource"] = self.subresource
        return out


def manager_label(e: Entry) -> str:
    """How SSA names a conflicting manager: an Update manager with its apiVersion."""
    return f'"{e.manager}" using {e.api_version}' if e.operation == "Update" else f'"{e.manager}"'


class ApplyConflict(Exception):
    def __init__(self, conflicts: list[tuple[str, Path]]) -> None:
        super().__init__(f"{len(conflicts)} conflicts")
        self.conflicts = conflicts


def _walk(value: Any, prefix: Path, out: dict[Path, Any]) -> None:
    if isinstance(value, dict) and value:
        for k, v in value.items():
            _walk(v, (*prefix, k), out)
    else:
        out[prefix] = value


def leaves(obj: dict[str, Any], scope: str) -> dict[Path, Any]:
    """Owned leaf paths of `obj`. scope: "all" | "main" (no status) | "status" (only status)."""
    out: dict[Path, Any] = {}
    for key, value in obj.items():
        if key in ("apiVersion", "kind"):
            continue
        if key == "metadata":
            if scope != "status" and isinstance(value, dict):
                for mk in _META_TRACKED:
                    if mk in value:
                        _walk(value[mk], ("metadata", mk), out)
            continue
        if (key == "status") != (scope == "status") and scope != "all":
            continue
        _walk(value, (key,), out)
    return out


def get_path(obj: Any, path: Path) -> Any:
    cur = obj
    for seg in path:
        if not isinstance(cur, dict) or seg not in cur:
            return MISSING
        cur = cur[seg]
    return cur


def set_path(obj: dict[str, Any], path: Path, value: Any) -> None:
    cur = obj
    for seg in path[:-1]:
        nxt = cur.get(seg)
        if not isinstance(nxt, dict):
            nxt = {}
            cur[seg] = nxt
        cur = nxt
    cur[path[-1]] = copy.deepcopy(value)


def del_path(obj: dict[str, Any], path: Path) -> None:
    chain: list[dict[str, Any]] = [obj]
    for seg in path[:-1]:
        nxt = chain[-1].get(seg)
        if not isinstance(nxt, dict):
            return
        chain.append(nxt)
    chain[-1].pop(path[-1], None)
    # Drop maps that became empty because of the removal (but never top-level sections).
    for depth in range(len(chain) - 1, 1, -1):
        if not chain[depth]:
            chain[depth - 1].pop(path[depth - 1], None)


def _named(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(i, dict) and "name" in i for i in value)


def merge_value(live: Any, applied: Any) -> Any:
    """What applying `applied` over `live` gives at one owned leaf. Lists of named objects
    (replicatedJobs, containers, ...) merge by name, keeping the fields the applier did not
    send (server and webhook defaults), as `listType: map` does in real SSA."""
    if isinstance(live, dict) and isinstance(applied, dict):
        out = dict(live)
        for k, v in applied.items():
            out[k] = merge_value(live.get(k, MISSING), v)
        return out
    if _named(live) and _named(applied):
        by_name = {i["name"]: i for i in live}
        return [merge_value(by_name.get(i["name"], MISSING), i) for i in applied]
    return copy.deepcopy(applied)


def overlaps(p: Path, q: Path) -> bool:
    n = min(len(p), len(q))
    return p[:n] == q[:n]


def record_update(
    managed: list[Entry],
    old: dict[str, Any] | None,
    new: dict[str, Any],
    manager: str,
    subresource: str,
    api_version: str,
    scope: str,
    now: str,
) -> list[Entry]:
    """Ownership after a non-apply write: the writer takes every field it changed."""
    before = leaves(old, scope) if old is not None else {}
    after = leaves(new, scope)
    changed = {p for p, v in after.items() if before.get(p, MISSING) != v}
    removed = set(before) - set(after)
    if not changed and not removed:
        return managed
    touched = changed | removed
    out: list[Entry] = []
    mine: Entry | None = None
    for e in managed:
        if (e.manager, e.operation, e.subresource) == (manager, "Update", subresource):
            mine = e
            continue
        kept = frozenset(q for q in e.fields if not any(overlaps(p, q) for p in touched))
        if kept:
            out.append(replace(e, fields=kept) if kept != e.fields else e)
    base = set(mine.fields) if mine else set()
    fields = frozenset((base - removed) | changed)
    if fields:
        out.append(Entry(manager, "Update", subresource, api_version, now, fields))
    return out


def apply(
    managed: list[Entry],
    live: dict[str, Any] | None,
    applied: dict[str, Any],
    manager: str,
    force: bool,
    subresource: str,
    api_version: str,
    scope: str,
    now: str,
) -> tuple[dict[str, Any], list[Entry]]:
    """Merge an applied configuration into `live`; raises ApplyConflict unless `force`."""
    want = leaves(applied, scope)
    base: dict[str, Any] = copy.deepcopy(live) if live is not None else {}
    conflicts: list[tuple[str, Path]] = []
    for e in managed:
        if e.manager == manager:
            continue
        for q in e.fields:
            for p, v in want.items():
                live_value = get_path(base, p)
                if overlaps(p, q) and merge_value(live_value, v) != live_value:
                    conflicts.append((manager_label(e), p))
    if conflicts and not force:
        raise ApplyConflict(sorted(set(conflicts)))
    lost = {p for _, p in conflicts}
    key = (manager, "Apply", subresource)
    previous = next((e for e in managed if (e.manager, e.operation, e.subresource) == key), None)
    others = [e for e in managed if (e.manager, e.operation, e.subresource) != key]
    if previous is not None:
        for q in previous.fields - set(want):
            if not any(overlaps(q, r) for e in others for r in e.fields):
                del_path(base, q)
    for p, v in want.items():
        set_path(base, p, merge_value(get_path(base, p), v))
    out: list[Entry] = []
    for e in others:
        kept = frozenset(q for q in e.fields if not any(overlaps(p, q) for p in lost))
        if kept:
            out.append(replace(e, fields=kept) if kept != e.fields else e)
    fields = frozenset(want)
    if previous is not None and previous.fields == fields:
        out.append(replace(previous, api_version=api_version))
    elif fields:
        out.append(Entry(manager, "Apply", subresource, api_version, now, fields))
    return base, out


def conflict_message(conflicts: list[tuple[str, Path]]) -> tuple[str, list[dict[str, str]]]:
    causes = [
        {
            "reason": "FieldManagerConflict",
            "message": f"conflict with {m}",
            "field": "." + ".".join(p),
        }
        for m, p in conflicts
    ]
    if len(conflicts) == 1:
        m, p = conflicts[0]
        msg = f"Apply failed with 1 conflict: conflict with {m}: .{'.'.join(p)}"
    else:
        lines = "\n".join(f"- conflict with {m}: .{'.'.join(p)}" for m, p in conflicts)
        msg = f"Apply failed with {len(conflicts)} conflicts:\n{lines}"
    return msg, causes
