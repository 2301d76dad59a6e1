"""The few SVG and HTML pieces every picture is made of; every text is escaped here.

Example:
    >>> from gkeml_sdk.pictures.svg import rect, text
    >>> text(4, 10, "a < b")
    '<text x="4" y="10" font-size="11">a &lt; b</text>'
"""

from __future__ import annotations

import html
import math

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


# Advance of each character in ems, on the generous side of the sans-serif fonts browsers
# pick (DejaVu Sans, Helvetica, Segoe UI): a layout sized with it leaves room for its labels.
_NARROW = frozenset("il.,:;'|!()[]{}jftrI ")
_WIDE = frozenset("mwMW@%")


def text_width(words: str, size: int = 11) -> float:
    """How wide `words` are at font `size`, in px, rounded up for any usual font.

    Example:
        >>> text_width("attempt 1", 11) > text_width("attempt", 11) > 0
        True
    """
    ems = sum(
        0.38 if c in _NARROW else 1.0 if c in _WIDE else 0.78 if c.isupper() else 0.64
        for c in words
    )
    return ems * size


def wrap(words: str, size: int, width: float) -> list[str]:
    """`words` broken at spaces into lines at most `width` px wide (a longer word stays whole).

    Example:
        >>> wrap("one two three", 10, 50)
        ['one two', 'three']
    """
    lines: list[str] = []
    for word in words.split():
        if lines and text_width(f"{lines[-1]} {word}", size) <= width:
            lines[-1] += f" {word}"
        else:
            lines.append(word)
    return lines


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


def svg(picture: str, label: str, width: float, height: float, body: list[str]) -> str:
    """An inline SVG document: `data-picture` names the kind, `aria-label` and `<title>` say
    what it shows, so a screen reader (and a test) can find it. It is `width` px wide (the
    room its labels need) and shrinks, labels and all, to a narrower page."""
    width, height = math.ceil(width), math.ceil(height)
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" role="img" data-picture="{esc(picture)}" '
        f'aria-label="{esc(label)}" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" style="max-width:100%;height:auto" {FONT}>'
        f"<title>{esc(label)}</title>" + "".join(body) + "</svg>"
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
    """Colour swatches with their labels, wrapped to `width`; the first line's baseline is
    at `y`, each further line 16 px lower (`legend_lines` says how many)."""
    parts: list[str] = []
    for cx, cy, colour, label in _legend_places(x, y, items, width):
        parts.append(rect(cx, cy - 9, 10, 10, colour))
        parts.append(text(cx + 14, cy, label, size=10))
    return parts


def legend_lines(items: list[tuple[str, str]], width: float) -> int:
    """How many lines `legend` wraps `items` to within `width`.

    Example:
        >>> keys = [("#000", "weights 1.0 GB")] * 3
        >>> legend_lines(keys, 1000), legend_lines(keys, 100)
        (1, 3)
    """
    return len({cy for _, cy, _, _ in _legend_places(0, 0, items, width)}) or 1


def _legend_places(
    x: float, y: float, items: list[tuple[str, str]], width: float
) -> list[tuple[float, float, str, str]]:
    places = []
    cx, cy = x, y
    for colour, label in items:
        span = 14 + text_width(label, 10)
        if cx + span > x + width and cx > x:
            cx, cy = x, cy + 16
        places.append((cx, cy, colour, label))
        cx += span + 10
    return places
