"""Readers of any Kubernetes object dict: conditions, labels, uid, name."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

# A Kubernetes object as a plain dict: builders make an Obj, readers take any ObjView.
Obj = dict[str, Any]
ObjView = Mapping[str, Any]


def condition(obj: ObjView | None, ctype: str) -> ObjView | None:
    """Return the `status.conditions[]` entry of type `ctype`, or None.

    Example:
        >>> condition({"status": {"conditions": [{"type": "A", "reason": "R"}]}}, "A")["reason"]
        'R'
    """
    if not obj:
        return None
    for cond in (obj.get("status") or {}).get("conditions") or []:
        if cond.get("type") == ctype:
            return dict(cond)
    return None


def is_true(obj: ObjView | None, ctype: str) -> bool:
    """True when condition `ctype` is present with status "True".

    Example:
        >>> is_true({"status": {"conditions": [{"type": "A", "status": "False"}]}}, "A")
        False
    """
    cond = condition(obj, ctype)
    return cond is not None and cond.get("status") == "True"


def labels(obj: ObjView) -> Mapping[str, str]:
    """`metadata.labels` of an object (empty when absent).

    Example:
        >>> labels({"metadata": {"labels": {"a": "b"}}})["a"]
        'b'
    """
    return (obj.get("metadata") or {}).get("labels") or {}


def name(obj: ObjView) -> str:
    """`metadata.name`, or "?" when absent.

    Example:
        >>> name({"metadata": {"name": "a"}})
        'a'
    """
    return str((obj.get("metadata") or {}).get("name", "?"))


def uid(obj: ObjView | None) -> str:
    """`metadata.uid`, or "" for None / objects without one.

    Example:
        >>> uid({"metadata": {"uid": "u1"}})
        'u1'
    """
    return str(((obj or {}).get("metadata") or {}).get("uid") or "")
