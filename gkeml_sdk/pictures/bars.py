"""Bar pictures: how one GPU's memory is split in a serving plan, and what a job costs on
each provisioning model.

Example:
    >>> from gkeml_sdk.pictures.bars import Part, memory_svg
    >>> svg = memory_svg("chat: per-GPU memory", 80.0, [Part("weights", 35.2)], ["1 replica"])
    >>> 'data-picture="gpu-memory"' in svg and "weights 35.2 GB" in svg
    True
"""

from __future__ import annotations

from dataclasses import dataclass

from gkeml_sdk.pictures.svg import legend, legend_lines, rect, svg, text, text_width

WIDTH = 640
LEFT = 12
BAR = 28
COST_BAR = 300  # px of the dearest bar
PART_COLOURS = {
    "weights": "#5b7db1",
    "activations": "#b07cc6",
    "KV cache": "#48a999",
    "free": "#e5e8e8",
}
COST_COLOURS = {"on-demand": "#5b7db1", "spot": "#48a999", "flex-start": "#c9a227"}


@dataclass(frozen=True)
class Part:
    """One segment of the memory bar, in GB."""

    name: str
    gb: float


@dataclass(frozen=True)
class CostBar:
    """One provisioning model's total; `missing` says why there is none."""

    model: str
    total: float | None
    label: str
    chosen: bool = False
    missing: str = ""


def memory_svg(title: str, total_gb: float, parts: list[Part], summary: list[str]) -> str:
    """A bar of one GPU's `total_gb`, split into `parts` (the rest is "free"), with
    `summary` lines (replicas, cost) below it."""
    used = sum(p.gb for p in parts)
    parts = [*parts, Part("free", max(total_gb - used, 0.0))]
    texts = [text_width(title, 12), *(text_width(line) for line in summary)]
    width = max(WIDTH, LEFT + max(texts) + LEFT)
    inner = width - 2 * LEFT
    body = [text(LEFT, 16, title, size=12)]
    x = float(LEFT)
    for part in parts:
        span = inner * part.gb / total_gb if total_gb else 0.0
        colour = PART_COLOURS.get(part.name, "#999")
        tip = f"{part.name}: {part.gb:.1f} GB of {total_gb:.0f} GB"
        body.append(rect(x, 24, span, BAR, colour, tip, part.name))
        if span > text_width(f"{part.gb:.1f} GB", 10) + 6:
            fill = "#222" if part.name == "free" else "#fff"
            body.append(text(x + span / 2, 24 + 18, f"{part.gb:.1f} GB", 10, "middle", fill))
        x += span
    body.append(text(width - LEFT, 24 + BAR + 13, f"{total_gb:.0f} GB", 10, "end", "#555"))
    keys = [(PART_COLOURS.get(p.name, "#999"), f"{p.name} {p.gb:.1f} GB") for p in parts]
    body += legend(LEFT, 24 + BAR + 32, keys, inner)
    y = 24 + BAR + 32 + 16 * legend_lines(keys, inner) + 6
    for line in summary:
        body.append(text(LEFT, y, line))
        y += 16
    label = f"{title}: " + ", ".join(f"{p.name} {p.gb:.1f} GB" for p in parts)
    return svg("gpu-memory", label, width, y - 8, body)


def cost_svg(title: str, bars: list[CostBar], footnote: str = "") -> str:
    """Horizontal bars, one per provisioning model, scaled to the dearest; a model without
    a price shows why instead of a bar. The picture is as wide as its longest label needs;
    a `footnote` goes under the bars (an output that says where its prices come from beside
    the picture passes none, so that it says so once)."""
    known = [b.total for b in bars if b.total is not None]
    top = max(known) if known else 0.0
    names = [b.model + (" (this job)" if b.chosen else "") for b in bars]
    label_w = max(text_width(name) for name in names) + 12 if bars else 0.0
    # Right of the names: a bar and its label, or why there is no price.
    right = [
        COST_BAR + 6 + text_width(b.label, 10)
        if b.total is not None
        else text_width(f"no price: {b.missing}", 10)
        for b in bars
    ]
    width = max(
        LEFT + label_w + max(right, default=0.0) + LEFT,
        LEFT + text_width(title, 12) + LEFT,
        LEFT + text_width(footnote, 9) + LEFT,
    )
    body = [text(LEFT, 16, title, size=12)]
    y = 26
    for bar, name in zip(bars, names, strict=True):
        body.append(text(LEFT, y + 14, name, 11))
        if bar.total is None:
            body.append(text(LEFT + label_w, y + 14, f"no price: {bar.missing}", 10, "", "#a04000"))
        else:
            span = max(COST_BAR * bar.total / top, 2.0) if top else 2.0
            colour = COST_COLOURS.get(bar.model, "#999")
            part = f"{bar.model}-bar"
            body.append(rect(LEFT + label_w, y + 3, span, 16, colour, bar.label, part))
            body.append(text(LEFT + label_w + span + 6, y + 15, bar.label, 10))
        y += 24
    if footnote:
        body.append(text(LEFT, y + 10, footnote, 9, "", "#555"))
        y += 18
    label = f"{title}: " + "; ".join(f"{b.model} {b.label or b.missing}" for b in bars)
    return svg("cost-bars", label, width, y, body)
