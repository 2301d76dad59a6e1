"""Small readers shared by the interpreters: conditions, quantities, times, ordinals."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from decimal import Decimal
from typing import Any

from gkeml_sdk.runs.explain.explanation import Evidence

Obj = Mapping[str, Any]
_SUFFIX: dict[str, Decimal | int] = {
    "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60,
    "m": Decimal("0.001"), "": 1, "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12,
    "P": 10**15, "E": 10**18,
}  # fmt: skip
_QUANTITY = re.compile(r"^([0-9.]+)(Ki|Mi|Gi|Ti|Pi|Ei|m|k|M|G|T|P|E|[eE][+-]?[0-9]+)?$")


def condition(obj: Obj | None, ctype: str) -> Obj | None:
    """The `status.conditions[]` entry of type `ctype`, or None.

    Example:
        >>> condition({"status": {"conditions": [{"type": "A", "status": "True"}]}}, "A")
        {'type': 'A', 'status': 'True'}
    """
    for cond in ((obj or {}).get("status") or {}).get("conditions") or []:
        if cond.get("type") == ctype:
            return dict(cond)
    return None


def is_true(obj: Obj | None, ctype: str) -> bool:
    """True when condition `ctype` has status "True"."""
    return (condition(obj, ctype) or {}).get("status") == "True"


def name_of(obj: Obj | None) -> str:
    """`metadata.name`, or "" when absent."""
    return str(((obj or {}).get("metadata") or {}).get("name") or "")


def quantity(value: Any) -> Decimal:
    """A Kubernetes quantity as a number (0 for what does not parse).

    Example:
        >>> quantity("16"), quantity("500m"), quantity("1Gi"), quantity(8)
        (Decimal('16'), Decimal('0.500'), Decimal('1073741824'), Decimal('8'))
    """
    match = _QUANTITY.match(str(value).strip())
    if match is None:
        return Decimal(0)
    suffix = match.group(2) or ""
    if suffix[:1] in ("e", "E"):
        return Decimal(match.group(1)) * Decimal(10) ** int(suffix[1:])
    return Decimal(match.group(1)) * Decimal(_SUFFIX[suffix])


def amount(value: Decimal) -> str:
    """A quantity as people write it: `16`, `0.5`.

    Example:
        >>> amount(Decimal("16.000")), amount(Decimal("0.500"))
        ('16', '0.5')
    """
    text = format(value.normalize(), "f")
    return text


def ordinal(position: int) -> str:
    """1 -> '1st', 2 -> '2nd', 11 -> '11th'.

    Example:
        >>> [ordinal(n) for n in (1, 2, 3, 4, 11, 22)]
        ['1st', '2nd', '3rd', '4th', '11th', '22nd']
    """
    if 10 <= position % 100 <= 20:
        return f"{position}th"
    return f"{position}{ {1: 'st', 2: 'nd', 3: 'rd'}.get(position % 10, 'th') }"


def condition_evidence(obj: Obj | None, *types: str) -> list[Evidence]:
    """Evidence for each named condition the object has."""
    found = []
    for ctype in types:
        cond = condition(obj, ctype)
        if cond is not None:
            found.append(
                Evidence(
                    str((obj or {}).get("kind", "")),
                    name_of(obj),
                    f"{ctype}={cond.get('status', '')}",
                    str(cond.get("reason", "")),
                    str(cond.get("message", "")),
                    str(cond.get("lastTransitionTime", "")),
                )
            )
    return found


def event_time(event: Obj) -> str:
    """When an Event last happened (eventTime, lastTimestamp or creation)."""
    meta = event.get("metadata") or {}
    for value in (
        event.get("lastTimestamp"),
        event.get("eventTime"),
        meta.get("creationTimestamp"),
    ):
        if value:
            return str(value)
    return ""


def events_about(events: Iterable[Obj], objects: Iterable[tuple[str, str]]) -> list[Obj]:
    """Events whose involvedObject is one of the (kind, name) pairs, oldest first."""
    wanted = set(objects)
    mine = [
        e
        for e in events
        if (
            (e.get("involvedObject") or {}).get("kind"),
            (e.get("involvedObject") or {}).get("name"),
        )
        in wanted
    ]
    return sorted(mine, key=event_time)


def event_evidence(event: Obj) -> Evidence:
    """Evidence for one Event."""
    about = event.get("involvedObject") or {}
    return Evidence(
        str(about.get("kind", "")),
        str(about.get("name", "")),
        f"event {event.get('type', '')}".strip(),
        str(event.get("reason", "")),
        str(event.get("message", "")),
        event_time(event),
    )
