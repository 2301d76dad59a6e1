"""`gkeml catalog where NAME`: the zones a public source lists for a GPU or TPU (Google's pages
for TPUs, SkyPilot's GCP catalog for GPUs), and the provisioning modes the catalog offers it
in (`gkeml_sdk.where_offered`)."""

from __future__ import annotations

from gkeml_sdk import where_offered


def where_report(name: str) -> tuple[str, list[list[str]], list[str]]:
    """What `gkeml catalog where NAME` prints: a heading with the modes, a table of zones
    (header first; empty when none is recorded), and lines saying why, the source and the
    date it was read.

    Example:
        >>> heading, rows, lines = where_report("v5p")
        >>> heading, rows[1]  # doctest: +ELLIPSIS
        ('v5p: modes offered: ...', ['us-central1-a', 'us-central1', 'North America', ''])
    """
    found = where_offered(name)
    row = found.availability
    heading = f"{found.key}: modes offered: {', '.join(found.modes)}"
    rows = [list(listed) for listed in row.listed()]
    header = ["zone", "region", "section", "the source says"]
    lines = []
    if rows:
        lines += [
            f"{row.lister} lists zones, not modes per zone: the modes above are the catalog's, "
            "in every listed zone",
            f"sections read in full: {', '.join(row.sections)}; zones elsewhere are unknown here",
        ]
    else:
        lines.append("zones: none recorded")
    if row.note:
        lines.append(f"note: {row.note}")
    lines.append(f"source: {row.source}, read {row.read_on}")
    return heading, [header, *rows] if rows else [], lines
