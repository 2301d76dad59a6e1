"""Runs as an HTML table with a coloured state and how long each run has taken.

Example:
    >>> from gkeml_sdk.pictures.table import RunRow, runs_table
    >>> html = runs_table([RunRow("ft", "default", "Running", "", 12.0, 1)], note="")
    >>> 'data-picture="runs-table"' in html and "12.0 s" in html
    True
"""

from __future__ import annotations

from dataclasses import dataclass

from gkeml_sdk.pictures.svg import esc, state_colour


@dataclass(frozen=True)
class RunRow:
    """What the table shows of one run; `seconds` is None when it has no history."""

    name: str
    namespace: str
    state: str
    reason: str
    seconds: float | None
    attempts: int


def duration(seconds: float | None) -> str:
    """Seconds as a short duration.

    Example:
        >>> duration(5.04), duration(125), duration(7380), duration(None)
        ('5.0 s', '2 min 5 s', '2 h 3 min', '-')
    """
    if seconds is None:
        return "-"
    if seconds < 60:
        return f"{seconds:.1f} s"
    if seconds < 3600:
        return f"{int(seconds // 60)} min {int(seconds % 60)} s"
    return f"{int(seconds // 3600)} h {int(seconds % 3600 // 60)} min"


def runs_table(rows: list[RunRow], note: str) -> str:
    """The table, with `note` (e.g. which backend these runs are from) above it."""
    cell = "padding:2px 8px;text-align:left"
    head = "".join(
        f"<th style='{cell}'>{h}</th>"
        for h in ("name", "namespace", "state", "reason", "duration", "attempts")
    )
    body = []
    for r in rows:
        chip = (
            f"<span data-state='{esc(r.state)}' style='display:inline-block;min-width:70px;"
            f"padding:1px 6px;border-radius:3px;color:#fff;background:{state_colour(r.state)}'>"
            f"{esc(r.state)}</span>"
        )
        cells = [esc(r.name), esc(r.namespace), chip, esc(r.reason), duration(r.seconds)]
        cells.append(str(r.attempts))
        body.append("<tr>" + "".join(f"<td style='{cell}'>{c}</td>" for c in cells) + "</tr>")
    if not rows:
        body.append(f"<tr><td colspan='6' style='{cell}'>no runs</td></tr>")
    caption = f"<caption style='text-align:left'>{esc(note)}</caption>" if note else ""
    return (
        f'<table data-picture="runs-table" aria-label="runs">{caption}<tr>{head}</tr>'
        + "".join(body)
        + "</table>"
    )
