"""JSON merge patch (RFC 7386), JSON patch (RFC 6902) and a simplified strategic merge patch."""

from __future__ import annotations

import copy
from typing import Any


class PatchError(ValueError):
    """The patch cannot be applied (bad path, failed `test`); maps to 422 like the real server."""


def merge_patch(target: Any, patch: Any) -> Any:
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    out = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = merge_patch(out.get(key), value)
    return out


# patchMergeKey of the list fields most often patched on built-in kinds.
_MERGE_KEYS = {
    "containers": "name",
    "initContainers": "name",
    "ephemeralContainers": "name",
    "env": "name",
    "volumes": "name",
    "imagePullSecrets": "name",
    "volumeMounts": "mountPath",
    "conditions": "type",
    "ownerReferences": "uid",
    "tolerations": "key",
}


def strategic_merge_patch(target: Any, patch: Any, field: str = "") -> Any:
    """Merge patch plus merge-by-key for well-known lists; `$patch` directives are honoured
    only as `$patch: replace|delete` on maps (the rest of SMP is not modelled)."""
    if isinstance(patch, list) and isinstance(target, list) and field in _MERGE_KEYS:
        key = _MERGE_KEYS[field]
        out = [copy.deepcopy(x) for x in target]
        for item in patch:
            if not isinstance(item, dict) or key not in item:
                out.append(copy.deepcopy(item))
                continue
            idx = next(
                (i for i, x in enumerate(out) if isinstance(x, dict) and x.get(key) == item[key]),
                None,
            )
            if item.get("$patch") == "delete":
                if idx is not None:
                    out.pop(idx)
            elif idx is None:
                out.append(strategic_merge_patch(None, item))
            else:
                out[idx] = strategic_merge_patch(out[idx], item)
        return out
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    directive = patch.get("$patch")
    if directive == "delete":
        return None
    base = {} if directive == "replace" or not isinstance(target, dict) else dict(target)
    for key, value in patch.items():
        if key.startswith("$"):
            continue
        if value is None:
            base.pop(key, None)
            continue
        merged = strategic_merge_patch(base.get(key), value, key)
        if merged is None:
            base.pop(key, None)
        else:
            base[key] = merged
    return base


def _unescape(token: str) -> str:
    return token.replace("~1", "/").replace("~0", "~")


def _parse_pointer(pointer: str) -> list[str]:
    if pointer == "":
        return []
    if not pointer.startswith("/"):
        raise PatchError(f"invalid JSON pointer {pointer!r}")
    return [_unescape(t) for t in pointer[1:].split("/")]


def _container(doc: Any, tokens: list[str]) -> Any:
    cur = doc
    for tok in tokens:
        if isinstance(cur, dict):
            if tok not in cur:
                raise PatchError(f"path element {tok!r} not found")
            cur = cur[tok]
        elif isinstance(cur, list):
            cur = cur[_index(cur, tok, allow_end=False)]
        else:
            raise PatchError(f"cannot descend into {tok!r}")
    return cur


def _index(lst: list[Any], tok: str, allow_end: bool) -> int:
    if tok == "-" and allow_end:
        return len(lst)
    if not tok.isdigit():
        raise PatchError(f"invalid array index {tok!r}")
    idx = int(tok)
    if idx > len(lst) or (idx == len(lst) and not allow_end):
        raise PatchError(f"array index {idx} out of bounds")
    return idx


def _get(doc: Any, pointer: str) -> Any:
    return _container(doc, _parse_pointer(pointer))


def _remove(doc: Any, pointer: str) -> Any:
    tokens = _parse_pointer(pointer)
    if not tokens:
        raise PatchError("cannot remove the root")
    parent = _container(doc, tokens[:-1])
    last = tokens[-1]
    if isinstance(parent, dict):
        if last not in parent:
            raise PatchError(f"unable to remove nonexistent key: {last}")
        return parent.pop(last)
    if isinstance(parent, list):
        return parent.pop(_index(parent, last, allow_end=False))
    raise PatchError("invalid remove target")


def _add(doc: Any, pointer: str, value: Any, replace: bool = False) -> Any:
    tokens = _parse_pointer(pointer)
    if not tokens:
        return value
    parent = _container(doc, tokens[:-1])
    last = tokens[-1]
    if isinstance(parent, dict):
        if replace and last not in parent:
            raise PatchError(f"replace operation does not apply: doc is missing key: {pointer}")
        parent[last] = value
    elif isinstance(parent, list):
        if replace:
            parent[_index(parent, last, allow_end=False)] = value
        else:
            parent.insert(_index(parent, last, allow_end=True), value)
    else:
        raise PatchError("invalid add target")
    return doc


def json_patch(target: Any, ops: Any) -> Any:
    if not isinstance(ops, list):
        raise PatchError("JSON patch must be a list of operations")
    doc = copy.deepcopy(target)
    for op in ops:
        if not isinstance(op, dict) or "op" not in op or "path" not in op:
            raise PatchError(f"invalid operation {op!r}")
        kind, path = op["op"], op["path"]
        if kind == "add":
            doc = _add(doc, path, copy.deepcopy(op.get("value")))
        elif kind == "remove":
            _remove(doc, path)
        elif kind == "replace":
            doc = _add(doc, path, copy.deepcopy(op.get("value")), replace=True)
        elif kind == "move":
            doc = _add(doc, path, _remove(doc, op["from"]))
        elif kind == "copy":
            doc = _add(doc, path, copy.deepcopy(_get(doc, op["from"])))
        elif kind == "test":
            if _get(doc, path) != op.get("value"):
                raise PatchError(f"testing value {path} failed")
        else:
            raise PatchError(f"unexpected kind: {kind}")
    return doc
