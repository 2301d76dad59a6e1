"""Small readers shared by the interpreters: names, amounts, ordinals, evidence and events."""

from __future__ import annotations

from collections.abc import Iterable
from decimal import Decimal

from gkeml_sdk.core.objects import ObjView, condition
from gkeml_sdk.runs.explain.explanation import Evidence


def name_of(obj: ObjView | None) -> str:
    """`metadata.name`, or "" when absent."""
    return str(((obj or {}).get("metadata") or {}).get("name") or "")


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


def condition_evidence(obj: ObjView | None, *types: str) -> list[Evidence]:
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


def event_time(event: ObjView) -> str:
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


def events_about(events: Iterable[ObjView], objects: Iterable[tuple[str, str]]) -> list[ObjView]:
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


def event_evidence(event: ObjView) -> Evidence:
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
