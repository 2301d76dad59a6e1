"""The few SVG and HTML pieces every picture is made of; every text is escaped here.

Example:
    >>> from gkeml_sdk.pictures.svg import rect, text
    >>> text(4, 10, "a < b")
    '<text x="4" y="10" font-size="11">a &lt; b</text>'
"""

from __future__ import annotations

import html

FONT = "font-family='system-ui,-apple-system,Segoe UI,Helvetica,Arial,sans-serif'"
# One colour per run state, also used by the runs table; unknown states are grey.
STATE_COLOURS = {
    "Pending": "#b0b7c3",
    "Queued": "#9aa5b1",
    "WaitingForCapacity": "#c9a227",
    "Starting": "#7fb3d5",
    "Running": "#2e86c1",
    "Preempted": "#e67e22",
    "Restarting": "#f5b041",
    "Succeeded": "#27ae60",
    "Failed": "#c0392b",
    "Cancelled": "#7f8c8d",
}


def esc(value: object) -> str:
    """`value` as text safe inside an element or a quoted attribute."""
    return html.escape(str(value), quote=True)


def state_colour(state: str) -> str:
    """The fill colour of a run state's value ("Running").

    Example:
        >>> state_colour("Running"), state_colour("Unheard")
        ('#2e86c1', '#bbbbbb')
    """
    return STATE_COLOURS.get(state, "#bbbbbb")


def svg(picture: str, label: str, width: int, height: int, body: list[str]) -> str:
    """An inline SVG document: `data-picture` names the kind, `aria-label` and `<title>` say
    what it shows, so a screen reader (and a test) can find it."""
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" role="img" data-picture="{esc(picture)}" '
        f'aria-label="{esc(label)}" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" {FONT}><title>{esc(label)}</title>'
        + "".join(body)
        + "</svg>"
    )


def rect(x: float, y: float, w: float, h: float, fill: str, tip: str = "", kind: str = "") -> str:
    """A filled rectangle with an optional hover `<title>` and a `data-part` name."""
    part = f' data-part="{esc(kind)}"' if kind else ""
    inner = f"<title>{esc(tip)}</title>" if tip else ""
    return (
        f'<rect x="{x:.1f}" y="{y:.1f}" width="{max(w, 0.0):.1f}" height="{h:.1f}" '
        f'fill="{esc(fill)}"{part}>{inner}</rect>'
    )


def text(x: float, y: float, words: str, size: int = 11, anchor: str = "", fill: str = "") -> str:
    """A line of text; `anchor` is "middle" or "end" to centre or right-align it."""
    extra = f' text-anchor="{anchor}"' if anchor else ""
    extra += f' fill="{esc(fill)}"' if fill else ""
    return f'<text x="{x:g}" y="{y:g}" font-size="{size}"{extra}>{esc(words)}</text>'


def legend(x: float, y: float, items: list[tuple[str, str]], width: float) -> list[str]:
    """Colour swatches with their labels, wrapped to `width`."""
    parts: list[str] = []
    cx, cy = x, y
    for colour, label in items:
        span = 16 + 6.5 * len(label)
        if cx + span > x + width and cx > x:
            cx, cy = x, cy + 16
        parts.append(rect(cx, cy - 9, 10, 10, colour))
        parts.append(text(cx + 14, cy, label, size=10))
        cx += span + 10
    return parts
